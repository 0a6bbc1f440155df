// `--observe` against the emulator over real HTTP: a drift re-check of seeded projects (network
// bans, backups and PITR, read-only with an override, an upgrade under way) with `all` exports
// every observed-only metric with the emulator's values, costs exactly one request per fact
// and healthy project, and leaks no key; the default (`health`) adds nothing but the health reads.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { Daemon } from '../../src/daemon/controller.js';
import type { CronTrigger } from '../../src/daemon/cron-trigger.js';
import { createMetrics, type DaemonMetrics } from '../../src/daemon/metrics.js';
import { parseObserveList } from '../../src/daemon/observe-list.js';
import { createObserver, observeReadsPerProject } from '../../src/daemon/observer.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { runPass } from '../../src/reconcile/engine.js';
import { ManualClock, systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const SHOP_REF = 'shopshopshopshopshop';
const BLOG_REF = 'blogblogblogblogblog';
/** A project whose Postgres upgrade is under way: its database service does not answer meanwhile. */
const DOCS_REF = 'docsdocsdocsdocsdocs';
const BANNED = ['192.0.2.7', '198.51.100.23'];
const DAY = 86_400_000;

/** The fact routes `--observe all` reads, each once per project. */
const OBSERVED_ROUTES = [
  'POST /v1/projects/{ref}/network-bans/retrieve',
  'GET /v1/projects/{ref}/api-keys',
  'GET /v1/projects/{ref}/database/backups',
  'GET /v1/projects/{ref}/readonly',
  'GET /v1/projects/{ref}/health',
  'GET /v1/projects/{ref}/upgrade/status',
];

const ORGANIZATION = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec: {}
`;
const project = (name: string, ref: string) => `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
spec:
  organization: acme
  ref: ${ref}
  region: eu-west-1
`;

function manualTrigger(): CronTrigger & { tick(): void } {
  let onTick: (() => void) | undefined;
  return {
    start: (fn) => {
      onTick = fn;
    },
    stop: () => {
      onTick = undefined;
    },
    // One slice per sweep (the interval is no longer than the slice spacing): no pacing waits.
    intervalMs: () => 1_000,
    tick: () => onTick?.(),
  };
}

let emulator: RunningEmulator;
let emulatorClock: ManualClock;
let client: ApiClient;
let work: string;
let manifests: string;
let seededAt: number;

beforeAll(async () => {
  emulatorClock = new ManualClock(Date.UTC(2026, 2, 1, 9, 30));
  seededAt = emulatorClock.now();
  emulator = await startEmulator({
    port: 0,
    clock: emulatorClock,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      organizations: [{ slug: 'acme', name: 'acme' }],
      projects: [
        { ref: SHOP_REF, name: 'shop', organization: 'acme', region: 'eu-west-1', pitr_enabled: true, config: { readonly: true, network_bans: BANNED } },
        { ref: BLOG_REF, name: 'blog', organization: 'acme', region: 'eu-west-1' },
        { ref: DOCS_REF, name: 'docs', organization: 'acme', region: 'eu-west-1', pitr_enabled: true },
      ],
    },
  });
  // Three days and a bit later: daily backups exist and the PITR window has a start.
  await emulatorClock.advance(3 * DAY + 5 * 3_600_000);
  client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  await client.api.disableReadonlyModeTemporarily(SHOP_REF);
  await client.api.upgradePostgresVersion(DOCS_REF, { target_version: '17' });
  work = await mkdtemp(join(tmpdir(), 'reconciler-observe-'));
  manifests = join(work, 'manifests');
  await rm(manifests, { recursive: true, force: true });
  await (await import('node:fs/promises')).mkdir(manifests);
  await writeFile(join(manifests, 'organization.yaml'), ORGANIZATION);
  await writeFile(join(manifests, 'shop.yaml'), project('shop', SHOP_REF));
  await writeFile(join(manifests, 'blog.yaml'), project('blog', BLOG_REF));
  await writeFile(join(manifests, 'docs.yaml'), project('docs', DOCS_REF));
});

afterAll(async () => {
  await client?.close();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

interface ReCheck {
  daemon: Daemon;
  metrics: DaemonMetrics;
  /** Requests of the re-check alone (not the first pass) for the healthy projects, as `METHOD route`. */
  requests: string[];
  /** The same for the upgrading project (its database reads fail with 5xx and are retried). */
  upgrading: string[];
}

/** A daemon with `--watch --dry-run --observe LIST`: its first pass, then one scheduled re-check. */
async function reCheck(list: string): Promise<ReCheck> {
  const resources = parseObserveList(list);
  const metrics = createMetrics(undefined, { processMetrics: false });
  const trigger = manualTrigger();
  const daemon = new Daemon({
    manifestsPath: manifests,
    loadManifests: (dir) => loadManifests(dir),
    runPass: (request) =>
      runPass({
        manifests: request.manifests,
        client,
        stateDir: join(work, 'state'),
        dryRun: true,
        env: {},
        log: silentLogger,
        signal: request.signal,
        priority: request.priority,
        ...(request.projects ? { projects: request.projects } : {}),
      }),
    ...(resources.length > 0 ? { observe: createObserver({ api: client.api, resources, clock: systemClock, log: silentLogger }), observeReadsPerProject: observeReadsPerProject(resources) } : {}),
    metrics,
    log: silentLogger,
    clock: systemClock,
    trigger,
    budget: () => ({ limit: 100_000, windowMs: 60_000 }),
    dryRun: true,
    minSliceSpacingMs: 1_000,
  });
  await daemon.start();
  await daemon.idle();
  const since = emulator.requests().length;
  trigger.tick();
  await daemon.idle();
  const log = emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));
  const requests = log.filter((r) => !r.path.includes(DOCS_REF)).map((r) => `${r.method} ${r.route}`);
  const upgrading = log.filter((r) => r.path.includes(DOCS_REF)).map((r) => `${r.method} ${r.route}`);
  return { daemon, metrics, requests, upgrading };
}

/**
 * The upgrading project: the facts that do not need its database (keys, the upgrade) are
 * exported; bans, backups and read-only mode got a 5xx (no answer about the project), so they
 * have no series rather than a made-up value.
 */
const DOCS_FACTS = {
  'reconciler_observed_api_keys{project="docs",type="legacy"}': 2,
  'reconciler_observed_api_keys{project="docs",type="publishable"}': 1,
  'reconciler_observed_api_keys{project="docs",type="secret"}': 1,
  'reconciler_observed_upgrade_in_progress{project="docs"}': 1,
  'reconciler_observed_upgrade_failed{project="docs"}': 0,
};

function countBy(list: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of list) out[item] = (out[item] ?? 0) + 1;
  return out;
}

/** `name{labels}` -> value for the samples of these metric names. */
async function samples(metrics: DaemonMetrics, prefix: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await metrics.render()).split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const at = line.lastIndexOf(' ');
    out[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return out;
}

describe('--observe against the emulator', () => {
  let none: ReCheck;
  let health: ReCheck;
  let all: ReCheck;

  beforeAll(async () => {
    none = await reCheck('none');
    await none.daemon.stop(5_000);
    health = await reCheck('health');
    await health.daemon.stop(5_000);
    all = await reCheck('all');
  }, 60_000);

  afterAll(async () => {
    await all?.daemon.stop(5_000);
  });

  it('the default (health) adds one health read per project and nothing else; none adds nothing', () => {
    const extra = { ...countBy(health.requests) };
    for (const [key, count] of Object.entries(countBy(none.requests))) {
      extra[key] = (extra[key] ?? 0) - count;
      if (extra[key] === 0) delete extra[key];
    }
    expect(extra).toEqual({ 'GET /v1/projects/{ref}/health': 2 });
    expect(none.requests.length).toBeGreaterThan(0);
    expect(health.upgrading.filter((r) => OBSERVED_ROUTES.includes(r) && r !== 'GET /v1/projects/{ref}/health')).toEqual([]);
  });

  it('`all` reads each fact once per project, and with --dry-run writes nothing (the bans read is a POST that changes nothing)', () => {
    const extra = { ...countBy(all.requests) };
    for (const [key, count] of Object.entries(countBy(none.requests))) {
      extra[key] = (extra[key] ?? 0) - count;
      if (extra[key] === 0) delete extra[key];
    }
    expect(extra).toEqual(Object.fromEntries(OBSERVED_ROUTES.map((route) => [route, 2])));
    // The upgrading project got each read too (some of them retried after a 5xx).
    for (const route of OBSERVED_ROUTES) expect(all.upgrading).toContain(route);
    for (const requests of [all.requests, all.upgrading]) {
      expect(requests.filter((r) => !r.startsWith('GET ') && r !== 'POST /v1/projects/{ref}/network-bans/retrieve')).toEqual([]);
    }
  });

  it('`all` exports every observed-only fact with the emulator\'s values', async () => {
    const now = emulatorClock.now();
    const observed = await samples(all.metrics, 'reconciler_observed_');
    expect(observed).toEqual({
      'reconciler_observed_network_bans{project="shop"}': 2,
      'reconciler_observed_network_bans{project="blog"}': 0,
      'reconciler_observed_api_keys{project="shop",type="legacy"}': 2,
      'reconciler_observed_api_keys{project="shop",type="publishable"}': 1,
      'reconciler_observed_api_keys{project="shop",type="secret"}': 1,
      'reconciler_observed_api_keys{project="blog",type="legacy"}': 2,
      'reconciler_observed_api_keys{project="blog",type="publishable"}': 1,
      'reconciler_observed_api_keys{project="blog",type="secret"}': 1,
      // Daily backups at midnight: the newest is today's.
      'reconciler_observed_backup_last_timestamp_seconds{project="shop"}': (Math.floor(now / DAY) * DAY) / 1000,
      'reconciler_observed_backup_last_timestamp_seconds{project="blog"}': (Math.floor(now / DAY) * DAY) / 1000,
      'reconciler_observed_pitr_enabled{project="shop"}': 1,
      'reconciler_observed_pitr_enabled{project="blog"}': 0,
      // The window reaches back to the project's creation (less than the seven days kept).
      'reconciler_observed_pitr_earliest_timestamp_seconds{project="shop"}': Math.floor(seededAt / 1000),
      'reconciler_observed_pitr_latest_timestamp_seconds{project="shop"}': Math.floor(now / 1000),
      'reconciler_observed_readonly{project="shop"}': 1,
      'reconciler_observed_readonly_override{project="shop"}': 1,
      'reconciler_observed_readonly{project="blog"}': 0,
      'reconciler_observed_readonly_override{project="blog"}': 0,
      'reconciler_observed_upgrade_in_progress{project="shop"}': 0,
      'reconciler_observed_upgrade_failed{project="shop"}': 0,
      'reconciler_observed_upgrade_in_progress{project="blog"}': 0,
      'reconciler_observed_upgrade_failed{project="blog"}': 0,
      ...DOCS_FACTS,
    });
    const healthSeries = await samples(all.metrics, 'reconciler_project_health{');
    expect(Object.keys(healthSeries).some((k) => k.startsWith('reconciler_project_health{project="shop"'))).toBe(true);
    expect(Object.keys(healthSeries).some((k) => k.startsWith('reconciler_project_health{project="blog"'))).toBe(true);
  });

  it('the default exports health but no observed-only fact', async () => {
    expect(await samples(health.metrics, 'reconciler_observed_')).toEqual({});
    expect(Object.keys(await samples(health.metrics, 'reconciler_project_health{project="shop"')).length).toBeGreaterThan(0);
  });

  it('no API key, key hash, key prefix, banned address or ref appears in /metrics', async () => {
    const text = await all.metrics.render();
    for (const ref of [SHOP_REF, BLOG_REF, DOCS_REF]) {
      for (const key of await client.api.getProjectApiKeys(ref, { query: { reveal: true } })) {
        for (const value of [key.api_key, key.hash, key.prefix]) if (value) expect(text).not.toContain(value);
      }
    }
    for (const value of [...BANNED, SHOP_REF, BLOG_REF, DOCS_REF]) expect(text).not.toContain(value);
  });

  it('a project removed from the manifests drops its observed series', async () => {
    await rm(join(manifests, 'blog.yaml'));
    await all.daemon.reload();
    await all.daemon.idle();
    const projects = new Set(Object.keys(await samples(all.metrics, 'reconciler_observed_')).map((k) => /project="(\w+)"/.exec(k)![1]));
    expect([...projects].sort()).toEqual(['docs', 'shop']);
    await writeFile(join(manifests, 'blog.yaml'), project('blog', BLOG_REF));
  });
});
