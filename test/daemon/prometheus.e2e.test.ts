// A real Prometheus scrapes the built daemon on loopback; drift, request and budget metrics are
// read back through Prometheus' HTTP API. CI sets REQUIRE_TOOLS=1: a missing binary fails there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, DaemonProcess, NODE, REPO, assertBuilt } from './daemon-process.js';
import { dashboardExpressions, substituteGrafanaVariables } from '../deploy/promql.js';

const HAVE_PROMETHEUS = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAVE_PROMETHEUS && process.env.REQUIRE_TOOLS === '1') {
  throw new Error('prometheus is required (REQUIRE_TOOLS=1) but was not found on PATH: install the Debian package `prometheus`');
}

const CANARY_DB = 'canary-prom-db-5d0f33a1';
const CANARY_SMTP = 'canary-prom-smtp-0b7a91c4';

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Polls an instant query until `accept` holds for its result (bounded), returning that result. */
async function queryUntil(base: string, query: string, accept: (samples: VectorSample[]) => boolean, timeoutMs = 60_000): Promise<VectorSample[]> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await response.json()) as { status: string; data?: { resultType: string; result: VectorSample[] } };
      last = body;
      if (body.status === 'success' && body.data && accept(body.data.result)) return body.data.result;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`query \`${query}\` did not give the expected result in time; last answer: ${JSON.stringify(last)}`);
}

let emulator: RunningEmulator;
let api: ApiClient;
let work: string;
let daemon: DaemonProcess | undefined;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let prometheusLog = '';

describe.skipIf(!HAVE_PROMETHEUS)('Prometheus scraping the daemon', () => {
  beforeAll(async () => {
    assertBuilt();
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
    work = await mkdtemp(join(tmpdir(), 'reconciler-prom-'));
    const manifests = join(work, 'manifests');
    await cp(join(REPO, 'test/fixtures/reconcile-e2e'), manifests, { recursive: true });
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(work, 'state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      E2E_DB_PASS: CANARY_DB,
      E2E_SMTP_PASS: CANARY_SMTP,
    };
    // Apply once, then change one project out of band: the drift the daemon must export.
    // Asynchronously: the emulator answers from this very process.
    const apply = await new Promise<{ code: number | null; stderr: string }>((resolveRun) => {
      const child = spawn(NODE, [BIN, manifests], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolveRun({ code, stderr }));
    });
    if (apply.code !== 0) throw new Error(`the first apply failed (${apply.code}): ${apply.stderr}`);
    const shop = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!;
    await api.api.updateRestapiServiceConfig(shop.ref, { max_rows: 12_345 });

    // A dry-run daemon re-checking every 2 seconds.
    daemon = new DaemonProcess([manifests, '--watch', '--dry-run', '--resync', '*/2 * * * * *', '--metrics-addr', '127.0.0.1:0'], env);
    const metricsUrl = new URL(await daemon.metricsUrl());

    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const config = join(work, 'prometheus.yml');
    await writeFile(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: reconciler',
        '    scrape_interval: 1s',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${metricsUrl.port}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [`--config.file=${config}`, `--storage.tsdb.path=${join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (c: Buffer) => (prometheusLog += c.toString()));
    prometheus.stderr!.on('data', (c: Buffer) => (prometheusLog += c.toString()));
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await daemon?.stop();
    await api?.close();
    await emulator?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('scrapes the target successfully', async () => {
    const up = await queryUntil(prometheusUrl, 'up{job="reconciler"}', (r) => r.length === 1 && r[0]!.value[1] === '1').catch((error: Error) => {
      throw new Error(`${error.message}\nprometheus log:\n${prometheusLog.slice(-3000)}`);
    });
    expect(up[0]!.metric.instance).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('shows the out-of-band change as drift of exactly that project and kind', async () => {
    const drift = await queryUntil(prometheusUrl, 'reconciler_drift_resources > 0', (r) => r.length > 0);
    expect(drift.map((s) => [s.metric.project, s.metric.kind, s.value[1]])).toEqual([['shop', 'ProjectRestapi', '1']]);
    const inSync = await queryUntil(prometheusUrl, 'reconciler_resource_in_sync{project="blog",kind="ProjectRestapi"}', (r) => r.length === 1);
    expect(inSync[0]!.value[1]).toBe('1');
  });

  it('counts API requests by method, route template and code', async () => {
    const requests = await queryUntil(prometheusUrl, 'sum by (method, route, code) (reconciler_api_requests_total)', (r) =>
      r.some((s) => s.metric.route === '/v1/projects/{ref}/restapi'),
    );
    const routes = requests.map((s) => s.metric.route!);
    expect(routes).toContain('/v1/projects');
    // Templates only: never a live project ref.
    for (const route of routes) expect(route).not.toMatch(/\/v1\/projects\/[a-z]{20}/);
    expect(requests.every((s) => s.metric.method === 'GET')).toBe(true);
    const duration = await queryUntil(prometheusUrl, 'reconciler_api_request_duration_seconds_count', (r) => r.length > 0);
    expect(duration.length).toBeGreaterThan(0);
  });

  it('exports the request budget', async () => {
    const limit = await queryUntil(prometheusUrl, 'reconciler_api_budget_limit', (r) => r.length === 1 && Number(r[0]!.value[1]) > 0);
    expect(Number(limit[0]!.value[1])).toBe(1000);
    const remaining = await queryUntil(prometheusUrl, 'reconciler_api_budget_remaining', (r) => r.length === 1);
    expect(Number(remaining[0]!.value[1])).toBeLessThanOrEqual(1000);
    const queue = await queryUntil(prometheusUrl, 'reconciler_queue_depth', (r) => r.length === 3);
    expect(queue.map((s) => s.metric.priority).sort()).toEqual(['drift', 'verify', 'write']);
  });

  it('shows the observation age, source and pass results, and no secret anywhere it stored', async () => {
    const ages = await queryUntil(prometheusUrl, 'reconciler_observation_age_seconds', (r) => r.length === 3);
    expect(ages.map((s) => s.metric.project).sort()).toEqual(['blog', 'shop', 'web']);
    const passes = await queryUntil(prometheusUrl, 'reconciler_reconcile_total{result="success"} > 1', (r) => r.length === 1);
    expect(passes).toHaveLength(1);
    const series = await fetch(`${prometheusUrl}/api/v1/series?match[]=${encodeURIComponent('{job="reconciler"}')}`);
    const text = await series.text();
    expect(text).not.toContain(CANARY_DB);
    expect(text).not.toContain(CANARY_SMTP);
    expect(text).not.toContain(emulator.token);
  });
});

// A daemon that repairs: an out-of-band change is found by a drift re-check and undone, and the
// drift counters say so by kind and trigger.
describe.skipIf(!HAVE_PROMETHEUS)('Prometheus scraping a daemon that repairs drift', () => {
  let repairEmulator: RunningEmulator;
  let repairApi: ApiClient;
  let repairWork: string;
  let repairDaemon: DaemonProcess | undefined;
  let repairPrometheus: ChildProcess | undefined;
  let repairUrl: string;
  let shopRef: string;

  beforeAll(async () => {
    assertBuilt();
    repairEmulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    repairApi = await createClient({ baseUrl: repairEmulator.url, auth: staticToken(repairEmulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
    repairWork = await mkdtemp(join(tmpdir(), 'reconciler-prom-repair-'));
    const manifests = join(repairWork, 'manifests');
    await cp(join(REPO, 'test/fixtures/reconcile-e2e'), manifests, { recursive: true });
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MANAGEMENT_API_URL: repairEmulator.url,
      MANAGEMENT_API_TOKEN: repairEmulator.token,
      RECONCILE_STATE_DIR: join(repairWork, 'state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      E2E_DB_PASS: CANARY_DB,
      E2E_SMTP_PASS: CANARY_SMTP,
    };
    // The daemon creates the fleet with its first pass (trigger `revision`), then re-checks every 2 seconds.
    repairDaemon = new DaemonProcess([manifests, '--watch', '--resync', '*/2 * * * * *', '--metrics-addr', '127.0.0.1:0'], env);
    const metricsUrl = new URL(await repairDaemon.metricsUrl());
    const deadline = Date.now() + 60_000;
    for (;;) {
      const text = await (await fetch(`${metricsUrl.origin}/metrics`)).text();
      if (/^reconciler_reconcile_total\{result="success"\} [1-9]/m.test(text)) break;
      if (Date.now() > deadline) throw new Error(`the daemon's first pass did not succeed in time:\n${text.slice(0, 2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    shopRef = (await repairApi.api.listAllProjects()).find((p) => p.name === 'shop')!.ref;

    const port = await freePort();
    repairUrl = `http://127.0.0.1:${port}`;
    const config = join(repairWork, 'prometheus.yml');
    await writeFile(
      config,
      ['global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: reconciler', '    scrape_interval: 1s', '    static_configs:', `      - targets: ['127.0.0.1:${metricsUrl.port}']`, ''].join('\n'),
    );
    repairPrometheus = spawn(
      'prometheus',
      [`--config.file=${config}`, `--storage.tsdb.path=${join(repairWork, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    // The drift series exist at 0 from the first pass on; once Prometheus has them, the change
    // out of band is an increase its queries (and the dashboard's) can see.
    await queryUntil(repairUrl, 'reconciler_drift_repaired_total{kind="ProjectRestapi",trigger="resync"} == 0', (r) => r.length === 1);
    await repairApi.api.updateRestapiServiceConfig(shopRef, { max_rows: 12_345 });
  });

  afterAll(async () => {
    if (repairPrometheus && repairPrometheus.exitCode === null) {
      const exited = new Promise((r) => repairPrometheus!.once('exit', r));
      repairPrometheus.kill('SIGTERM');
      await exited;
    }
    await repairDaemon?.stop();
    await repairApi?.close();
    await repairEmulator?.close();
    if (repairWork) await rm(repairWork, { recursive: true, force: true });
  });

  it('counts the out-of-band change as drift detected and repaired by a re-check, and undoes it', async () => {
    const repaired = await queryUntil(repairUrl, 'reconciler_drift_repaired_total{trigger="resync"} > 0', (r) => r.length > 0);
    expect(repaired.map((s) => s.metric.kind)).toEqual(['ProjectRestapi']);
    const detected = await queryUntil(repairUrl, 'reconciler_drift_detected_total{trigger="resync"} > 0', (r) => r.length > 0);
    expect(detected.map((s) => s.metric.kind)).toEqual(['ProjectRestapi']);
    // The first pass created the fleet: creations are no drift.
    const fromRevision = await queryUntil(repairUrl, 'sum(reconciler_drift_detected_total{trigger="revision"}) or vector(0)', (r) => r.length === 1);
    expect(fromRevision[0]!.value[1]).toBe('0');
    expect((await repairApi.api.getRestapiServiceConfig(shopRef)).max_rows).toBe(500);
    const condition = await queryUntil(repairUrl, 'reconciler_resource_condition{project="shop",kind="ProjectRestapi"}', (r) => r.length === 1);
    expect(condition[0]!.metric.state).toBe('in_sync');
    const build = await queryUntil(repairUrl, 'reconciler_build_info', (r) => r.length === 1);
    expect(build[0]!.metric.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("the dashboard's drift detected and repaired panels have data after the repair", async () => {
    const dashboard = JSON.parse(await readFile(join(REPO, 'helm/reconciler/dashboards/reconciler.json'), 'utf8')) as unknown;
    const panels = dashboardExpressions(dashboard).filter(({ expr }) => /reconciler_drift_(detected|repaired)_total/.test(expr));
    expect(panels.length).toBeGreaterThanOrEqual(2);
    for (const { where, expr } of panels) {
      const result = await queryUntil(repairUrl, substituteGrafanaVariables(expr), (r) => r.length > 0);
      expect(result.map((sample) => sample.metric.kind), where).toContain('ProjectRestapi');
    }
  });
});
