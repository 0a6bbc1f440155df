// The built daemon applies a commit that only adds a migration file (a real git repository
// published git-sync style, the emulator's Postgres per project): the Migrations kind says which
// projects its files concern, so the new revision's pass covers the projects its document selects,
// at once (the drift schedule is a year away, so nothing but the revision can apply it), and no
// other. A daemon that only plans (--dry-run) shows the file pending in `/status`,
// `reconcile status` and `reconciler_migrations_pending` instead of "in sync".
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import type { FleetView } from '../../src/status/fleet-view.js';
import { DaemonProcess, assertBuilt, type LogLine } from './daemon-process.js';
import { GitSyncRepo } from './git-repo.js';
import { expectExit, runCli } from '../e2e/helpers/cli.js';

const project = (name: string, tier: string) => `---
apiVersion: reconciler/v1
kind: Project
metadata: { name: ${name}, labels: { tier: ${tier} } }
spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { env: DAEMON_DB_PASS } } }
`;

const FLEET = `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
${project('t1', 'tenant')}${project('t2', 'tenant')}${project('internal', 'internal')}---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: tenant-schema }
spec:
  selector: { labels: { tier: tenant } }
  path: .migrations
`;

let emulator: RunningEmulator;
let api: ApiClient;
let git: GitSyncRepo;
let stateDir: string;
let env: NodeJS.ProcessEnv;
let daemon: DaemonProcess | undefined;
const commits: string[] = [];

// The drift schedule is once a year: only a new revision can start a pass in this test.
const args = (...extra: string[]) => [git.link, '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--observe', 'none', ...extra];
const isPass = (line: LogLine) => line.msg === 'pass finished' || line.msg === 'pass finished with errors';

async function history(name: string): Promise<string[]> {
  const ref = (await api.api.listAllProjects()).find((p) => p.name === name)?.ref;
  if (!ref) return [];
  try {
    const rows = (await api.api.runAQuery(ref, { query: 'select version from reconciler.schema_migrations order by version' })) as unknown as Array<{ version: string }>;
    return rows.map((row) => row.version);
  } catch {
    return [];
  }
}

const pendingGauge = (metrics: string, name: string) => Number(new RegExp(`^reconciler_migrations_pending\\{project="${name}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 'NaN');

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 }, openDatabases: 4 });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  git = await GitSyncRepo.create();
  stateDir = await mkdtemp(join(tmpdir(), 'reconciler-migration-commit-'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    // A project's first query starts its database: on a busy machine that takes a while.
    RECONCILE_HTTP_TIMEOUT: '120s',
    DAEMON_DB_PASS: 'daemon-migration-db-pass-51e0',
  };
  commits.push(await git.commit({ 'fleet.yaml': FLEET, '.migrations/1_items.sql': 'create table items (id int);\n' }, 'first'));
  await git.publish(commits[0]!);
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await api?.close();
  await emulator?.close();
  await git?.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('a commit that only adds a migration file (built daemon, real git, emulator)', () => {
  it('starts a pass for the projects the Migrations document selects, which applies the file', async () => {
    daemon = new DaemonProcess(args(), env);
    const metricsUrl = await daemon.metricsUrl();
    const first = await daemon.waitFor(isPass, { timeoutMs: 240_000 });
    // On a failure, the log's errors say why.
    expect(first, JSON.stringify(daemon.lines.filter((l) => (l.level ?? 0) >= 40).slice(0, 8))).toMatchObject({ revision: commits[0], result: 'success' });
    expect(await history('t1')).toEqual(['1']);

    commits.push(await git.commit({ '.migrations/2_orders.sql': 'create table orders (id int, item int);\n' }, 'orders'));
    const from = daemon.lines.length;
    await git.publish(commits[1]!, commits[0]);

    const revision = await daemon.waitFor((l) => l.msg === 'new revision' && l.revision === commits[1], { from, timeoutMs: 120_000 });
    expect(revision.projects).toEqual(['t1', 't2']);
    const applied = await daemon.waitFor((l) => isPass(l) && l.revision === commits[1], { from, timeoutMs: 240_000 });
    expect(applied).toMatchObject({ priority: 'write', trigger: 'revision', projects: ['t1', 't2'], result: 'success' });
    expect(daemon.lines.slice(from).some((l) => typeof l.msg === 'string' && l.msg.startsWith('new revision changes no project'))).toBe(false);
    expect(await history('t1')).toEqual(['1', '2']);
    expect(await history('t2')).toEqual(['1', '2']);
    expect(await history('internal')).toEqual([]);
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(pendingGauge(metrics, 't1')).toBe(0);
    expect(metrics).toMatch(/^reconciler_migrations_applied_total\{project="t1",result="applied"\} 2$/m);
    expect(await daemon.stop()).toBe(0);
    daemon = undefined;
  }, 600_000);

  it('a daemon that only plans counts the new file pending and shows it pending in /status', async () => {
    daemon = new DaemonProcess(args('--dry-run'), env);
    const metricsUrl = await daemon.metricsUrl();
    await daemon.waitFor(isPass, { timeoutMs: 240_000 });
    commits.push(await git.commit({ '.migrations/3_prices.sql': 'alter table items add column price int;\n' }, 'prices'));
    const from = daemon.lines.length;
    await git.publish(commits[2]!, commits[1]);
    await daemon.waitFor((l) => isPass(l) && l.revision === commits[2], { from, timeoutMs: 240_000 });

    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(pendingGauge(metrics, 't1')).toBe(1);
    expect(pendingGauge(metrics, 't2')).toBe(1);
    const view = (await (await fetch(`${metricsUrl}/status`)).json()) as FleetView;
    for (const name of ['t1', 't2']) {
      const found = view.projects.find((p) => p.name === name)!;
      expect(found.state).not.toBe('in_sync');
      expect(found.pending.find((change) => change.kind === 'Migration' && change.name.endsWith('3_prices'))).toMatchObject({ action: 'create', waitingFor: 'dry-run' });
    }
    expect(view.projects.find((p) => p.name === 'internal')!.pending).toEqual([]);
    expect(await history('t1')).toEqual(['1', '2']);
    // `reconcile status` reads the same view from the daemon.
    const status = await runCli(['status', '--daemon-url', metricsUrl], {});
    expectExit(status, 0);
    expect(status.stdout).toMatch(/3_prices/);
  }, 600_000);
});
