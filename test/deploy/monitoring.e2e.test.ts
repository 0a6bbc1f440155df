// The shipped dashboard and alert rules against a real Prometheus scraping a real daemon:
// every dashboard query runs without error and the main panels have data; the rule file and
// the chart's rendered PrometheusRule both load and evaluate without error; healthy-state
// alerts stay inactive, and an out-of-band change makes ReconcilerDriftPersists pending for
// exactly the drifted project and kind.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { dashboardExpressions, substituteGrafanaVariables } from './promql.js';
import { findObject, renderObjects } from './render.js';
import { ALERTS_FILE, DASHBOARD_FILE, NODE24, REPO_ROOT, freePort, helmTool, prometheusTool, toolGate } from './tools.js';

const gate = toolGate(prometheusTool());
const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');
const FIXTURE = join(import.meta.dirname, 'fixtures', 'fleet');

/** A probe failure that no amount of waiting repairs. */
class FatalProbeError extends Error {}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}
interface RuleState {
  name: string;
  type: 'alerting' | 'recording';
  health: string;
  lastError?: string;
  state?: 'inactive' | 'pending' | 'firing';
  alerts?: { labels: Record<string, string>; state: string }[];
}

/** Panels whose query must return series once the daemon has run a few passes. */
const PANELS_WITH_DATA = [
  'Manifest errors',
  'Drifted resources',
  'Since last successful pass',
  'Source revision',
  'Drift over time',
  'Out of sync by project and kind',
  'Resources not in sync',
  'Passes by result',
  'Pass duration',
  'API requests by route and code',
  'API latency p95 by route',
  'Budget remaining vs limit',
  'Queue depth by priority',
  'Observation staleness',
  'Project status',
  'Project health',
  'Memory',
  'CPU',
];

describe.skipIf(gate.skip)('dashboard and alert rules on a real Prometheus scraping the daemon', () => {
  let emulator: RunningEmulator;
  let api: ApiClient;
  let work: string;
  let daemon: ChildProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let log = '';
  let chartRules = false;

  const query = async (expr: string): Promise<{ status: string; error?: string; data?: { result: Sample[] } }> => {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await response.json()) as { status: string; error?: string; data?: { result: Sample[] } };
  };

  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe().catch((error: unknown) => {
        if (error instanceof FatalProbeError) throw error;
        return undefined;
      });
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not reached in time\n${log.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };

  const rules = async (): Promise<{ group: string; rule: RuleState }[]> => {
    const response = await fetch(`${prometheusUrl}/api/v1/rules`);
    const body = (await response.json()) as { data: { groups: { name: string; rules: RuleState[] }[] } };
    return body.data.groups.flatMap((group) => group.rules.map((rule) => ({ group: group.name, rule })));
  };

  beforeAll(async () => {
    gate.assertPresent();
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
    work = mkdtempSync(join(tmpdir(), 'reconciler-monitoring-'));
    const manifests = join(work, 'manifests');
    cpSync(FIXTURE, manifests, { recursive: true });
    // A commit, as a checkout has: the source revision panel shows it.
    for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.name=test', '-c', 'user.email=test@example.com', 'commit', '-q', '-m', 'fleet']]) {
      execFileSync('git', args, { cwd: manifests, stdio: 'ignore' });
    }
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: work,
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(work, 'state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      MONITORING_DB_PASS: 'monitoring-db-pass-canary',
    };
    // Apply once, then change one project out of band: the drift the alert must see.
    const apply = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(NODE24, [BIN, manifests], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    if (apply.code !== 0) throw new Error(`the first apply failed (${apply.code}): ${apply.stderr}`);
    const orders = (await api.api.listAllProjects()).find((p) => p.name === 'orders')!;
    await api.api.updateRestapiServiceConfig(orders.ref, { max_rows: 999 });

    // A dry-run daemon re-checking every 2 seconds: the drift stays, as an unrepaired drift would.
    const metricsPort = await freePort();
    // `--observe all`: the fleet alerts evaluate against real observed series, not against nothing.
    daemon = spawn(NODE24, [BIN, manifests, '--watch', '--dry-run', '--resync', '*/2 * * * * *', '--observe', 'all', '--metrics-addr', `127.0.0.1:${metricsPort}`], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    daemon.stderr!.on('data', (c: Buffer) => (log += c.toString()));

    // The shipped rule file as is, and the chart's rendered rules (scoped to job and namespace).
    const ruleFiles = [ALERTS_FILE];
    const helm = helmTool();
    if (helm.path) {
      const rendered = findObject(renderObjects(helm.path, { release: 'reconciler', namespace: 'fleet', set: ['prometheusRule.enabled=true'] }), 'PrometheusRule') as unknown as {
        spec: { groups: { name: string }[] };
      };
      for (const group of rendered.spec.groups) group.name = `chart-${group.name}`;
      writeFileSync(join(work, 'chart-rules.yaml'), stringifyYaml(rendered.spec));
      ruleFiles.push(join(work, 'chart-rules.yaml'));
      chartRules = true;
    }
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(work, 'prometheus.yml'),
      stringifyYaml({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: ruleFiles,
        // The namespace label stands in for the one a ServiceMonitor scrape carries.
        scrape_configs: [{ job_name: 'reconciler', static_configs: [{ targets: [`127.0.0.1:${metricsPort}`], labels: { namespace: 'fleet' } }] }],
      }),
    );
    prometheus = spawn(gate.assertPresent(), [`--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    prometheus.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    prometheus.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    // Several passes scraped, so rates and increases have samples to work on.
    await until('three passes scraped', async () => {
      if (daemon!.exitCode !== null) throw new FatalProbeError(`the daemon exited with ${daemon!.exitCode}: ${log.slice(-3000)}`);
      const passes = await query('sum(reconciler_reconcile_total{job="reconciler"})');
      return Number(passes.data?.result[0]?.value[1] ?? 0) >= 3 ? true : undefined;
    }, 90_000);
  }, 180_000);

  afterAll(async () => {
    for (const child of [prometheus, daemon]) {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    await api?.close();
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs every dashboard query without error, and the main panels have data', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
    const expressions = dashboardExpressions(dashboard);
    for (const { where, expr } of expressions) {
      const result = await query(substituteGrafanaVariables(expr));
      expect(result.error, `${where}: ${expr}`).toBeUndefined();
      expect(result.status, where).toBe('success');
    }
    for (const title of PANELS_WITH_DATA) {
      const panel = dashboard.panels.find((p: { title: string }) => p.title === title) as { targets: { expr: string }[] };
      expect(panel, title).toBeDefined();
      for (const target of panel.targets) {
        await until(`panel "${title}" has data: ${target.expr}`, async () => {
          const result = await query(substituteGrafanaVariables(target.expr));
          return (result.data?.result.length ?? 0) > 0 ? true : undefined;
        }, 30_000);
      }
    }
  }, 120_000);

  it('shows the out-of-band change on the drift panels as exactly that project and kind', async () => {
    const panel = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')).panels.find((p: { title: string }) => p.title === 'Out of sync by project and kind') as { targets: { expr: string }[] };
    const result = await query(substituteGrafanaVariables(panel.targets[0]!.expr));
    expect(result.data!.result.map((s) => [s.metric.project, s.metric.kind, s.value[1]])).toEqual([['orders', 'ProjectRestapi', '1']]);
  });

  it('loads and evaluates every alert rule without error; a healthy daemon fires nothing', async () => {
    const loaded = await until('rules evaluated', async () => {
      const all = await rules();
      return all.length > 0 && all.every((r) => r.rule.health === 'ok') ? all : undefined;
    });
    const alerts = loaded.filter((r) => r.rule.type === 'alerting');
    expect(alerts.filter((r) => r.group === 'reconciler')).toHaveLength(18);
    expect(alerts.filter((r) => r.group === 'reconciler-fleet')).toHaveLength(5);
    if (chartRules) expect(alerts.filter((r) => r.group === 'chart-reconciler')).toHaveLength(18);
    if (chartRules) expect(alerts.filter((r) => r.group === 'chart-reconciler-fleet')).toHaveLength(5);
    // The fleet alerts' silence below means something: the facts they read are there, healthy.
    for (const metric of ['reconciler_observed_readonly', 'reconciler_observed_upgrade_failed', 'reconciler_observed_pitr_enabled', 'reconciler_project_health']) {
      const present = await until(`${metric} scraped`, async () => {
        const result = await query(`${metric}{job="reconciler"}`);
        return (result.data?.result.length ?? 0) > 0 ? result.data!.result : undefined;
      });
      const values = new Set(present.map((s) => s.value[1]));
      if (metric === 'reconciler_project_health') expect(values, metric).toContain('1');
      else if (metric !== 'reconciler_observed_pitr_enabled') expect(values, metric).toEqual(new Set(['0']));
    }
    for (const { group, rule } of alerts) {
      expect(rule.lastError ?? '', `${group}/${rule.name}`).toBe('');
      if (rule.name !== 'ReconcilerDriftPersists') expect(rule.state, `${group}/${rule.name}`).toBe('inactive');
    }
  });

  it('puts ReconcilerDriftPersists in pending for the drifted project and kind (it fires after the configured time)', async () => {
    const groups = chartRules ? ['reconciler', 'chart-reconciler'] : ['reconciler'];
    const pending = await until('drift alert pending', async () => {
      const all = await rules();
      const drift = all.filter((r) => r.rule.name === 'ReconcilerDriftPersists' && groups.includes(r.group));
      return drift.length === groups.length && drift.every((r) => r.rule.state === 'pending') ? drift : undefined;
    });
    for (const { rule } of pending) {
      expect(rule.alerts!.map((a) => [a.labels.project, a.labels.kind, a.labels.job, a.labels.namespace, a.state])).toEqual([['orders', 'ProjectRestapi', 'reconciler', 'fleet', 'pending']]);
    }
  });
});
