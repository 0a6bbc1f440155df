// Progressive delivery in the daemon, against the emulator over real HTTP, on a scaled clock
// (the daemon, the engine's waits and the rollout's soaks and windows run SPEED times faster;
// the emulator's lifecycles too). Its request log says what was written to whom, and when.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { main } from '../../src/cli/main.js';
import { Daemon } from '../../src/daemon/controller.js';
import { startHttpServer, type RunningHttpServer } from '../../src/daemon/http-server.js';
import { createMetrics, type DaemonMetrics } from '../../src/daemon/metrics.js';
import { triggerRoutes } from '../../src/daemon/trigger.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { eventsFromPass, type NotificationEvent } from '../../src/notify/events.js';
import { runPass } from '../../src/reconcile/engine.js';
import { scaledClock, type Clock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { manualTrigger } from './fixtures.js';
import { GitSyncDir, commitId } from './git-sync.js';

const SPEED = 600;
const SOAK_MS = 10 * 60_000;
const TOKEN = 'rollout-e2e-trigger-token-41d9';

const ORGANIZATION = `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: {}
`;

function tenant(name: string, ring: string, extra: string): string {
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels: { ring: ${ring}, tier: tenant }
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: ROLLOUT_DB_PASS } }
${extra}`;
}

/** Twelve tenants: two canaries, four early adopters, six others (the implicit last wave). */
const WAVES = {
  canary: ['t01', 't02'],
  early: ['t03', 't04', 't05', 't06'],
  rest: ['t07', 't08', 't09', 't10', 't11', 't12'],
};
const RING: Record<string, string> = Object.fromEntries(Object.entries(WAVES).flatMap(([ring, names]) => names.map((name) => [name, ring === 'rest' ? 'general' : ring])));

function fleet(rows: number, rollout: string): Record<string, string> {
  const files: Record<string, string> = { 'organization.yaml': ORGANIZATION, 'rollout.yaml': rollout };
  for (const name of Object.keys(RING)) files[`${name}.yaml`] = tenant(name, RING[name]!, `  restapi:\n    max_rows: ${rows}\n`);
  return files;
}

const WAVE_ROLLOUT = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: tenants }
spec:
  soak: 10m
  waves:
    - { name: canary, selector: { labels: { ring: canary } } }
    - { name: early, selector: { labels: { ring: early } } }
`;

interface Setup {
  emulator: RunningEmulator;
  client: ApiClient;
  source: GitSyncDir;
  stateDir: string;
  tokenFile: string;
  clock: Clock;
  /** Real ms at which the scaled clock started. */
  origin: number;
  daemon: Daemon;
  metrics: DaemonMetrics;
  server: RunningHttpServer;
  events: NotificationEvent[];
  close(): Promise<void>;
}

async function setUp(): Promise<Setup> {
  const emulator = await startEmulator({ port: 0, speed: SPEED, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 }, retry: { maxAttempts: 1 } });
  const source = await GitSyncDir.create();
  const root = await mkdtemp(join(tmpdir(), 'reconciler-rollout-'));
  const stateDir = join(root, 'state');
  const tokenFile = join(root, 'ops-token');
  await writeFile(tokenFile, `${TOKEN}\n`);
  const clock = scaledClock(SPEED);
  const origin = Date.now();
  const metrics = createMetrics(undefined, { processMetrics: false });
  const events: NotificationEvent[] = [];
  const daemon = new Daemon({
    manifestsPath: source.link,
    loadManifests: (dir) => loadManifests(dir),
    runPass: (request) =>
      runPass({
        manifests: request.manifests,
        client,
        stateDir,
        dryRun: false,
        env: { ROLLOUT_DB_PASS: 'rollout-e2e-db-pass-9a1c' },
        log: silentLogger,
        clock,
        wait: { initialDelayMs: 2_000, maxDelayMs: 10_000 },
        signal: request.signal,
        priority: request.priority,
        ...(request.projects ? { projects: request.projects } : {}),
      }),
    metrics,
    log: silentLogger,
    clock,
    trigger: manualTrigger(24 * 3_600_000),
    budget: () => ({ limit: 100_000, windowMs: 60_000 }),
    stateDir,
    onPass: (result, report) => events.push(...eventsFromPass(result, report, clock.now())),
  });
  const server = await startHttpServer(
    { host: '127.0.0.1', port: 0 },
    {
      metrics: async () => ({ contentType: metrics.contentType, body: await metrics.render() }),
      readiness: () => daemon.readiness(),
      post: triggerRoutes(daemon, { tokenFile }, silentLogger),
    },
    silentLogger,
  );
  return {
    emulator, client, source, stateDir, tokenFile, clock, origin, daemon, metrics, server, events,
    async close() {
      await daemon.stop(5_000);
      await server.close();
      await client.close();
      await emulator.close();
      await source.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls (real time) until `check` holds; the daemon moves on by itself on its scaled clock. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function refsOf(client: ApiClient): Promise<Map<string, string>> {
  return new Map((await client.api.listAllProjects()).map((project) => [project.name, project.ref]));
}

/** Writes (not GET, not the emulator's admin) to the named projects, from request index `since`. */
function writesTo(s: Setup, refs: Map<string, string>, names: readonly string[], since: number) {
  const wanted = names.map((name) => refs.get(name)!);
  return s.emulator
    .requests()
    .slice(since)
    .filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator') && wanted.some((ref) => r.path.startsWith(`/v1/projects/${ref}`)));
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (chunk: string) => ((stdout += chunk), true) } as unknown as NodeJS.WriteStream,
    stderr: { write: (chunk: string) => ((stderr += chunk), true) } as unknown as NodeJS.WriteStream,
    env: {},
  });
  return { code, stdout, stderr };
}

const allDone = (s: Setup, revision: string) => () => {
  const rollout = s.daemon.rollout();
  return rollout?.revision === revision && rollout.waves.every((wave) => wave.state === 'done');
};

describe('waves in the daemon: twelve projects, three waves', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp();
  });
  afterAll(async () => {
    await s?.close();
  });

  it('reaches each wave only after the soak of the wave before, from the request log', async () => {
    await s.source.worktree(commitId(1), fleet(100, WAVE_ROLLOUT));
    await s.source.publish(commitId(1));
    await s.daemon.start();
    await until('the first revision has reached every wave', allDone(s, commitId(1)));
    const refs = await refsOf(s.client);
    expect(refs.size).toBe(12);

    const since = s.emulator.requests().length;
    await s.source.worktree(commitId(2), fleet(200, WAVE_ROLLOUT));
    await s.source.publish(commitId(2), { removePrevious: commitId(1) });
    await s.daemon.reload();
    await until('the second revision has reached every wave', allDone(s, commitId(2)));

    const waves = [WAVES.canary, WAVES.early, WAVES.rest].map((names) => writesTo(s, refs, names, since));
    for (const writes of waves) expect(writes.length).toBeGreaterThanOrEqual(1);
    for (let k = 1; k < waves.length; k++) {
      const lastBefore = Math.max(...waves[k - 1]!.map((r) => r.time));
      const firstAfter = Math.min(...waves[k]!.map((r) => r.time));
      // No write to a wave before the gate of the one before: its soak (real ms = scaled / SPEED).
      expect(firstAfter - lastBefore).toBeGreaterThanOrEqual(SOAK_MS / SPEED - 1);
    }
    for (const name of Object.keys(RING)) expect((await s.client.api.getRestapiServiceConfig(refs.get(name)!)).max_rows).toBe(200);

    const text = await s.metrics.render();
    for (const wave of ['canary', 'early', 'rest']) expect(text).toContain(`reconciler_rollout_wave_state{rollout="tenants",wave="${wave}",state="done"} 1`);
    expect(text.match(new RegExp(`reconciler_project_revision_info\\{project="t\\d\\d",revision="${commitId(2)}"\\} 1`, 'g'))).toHaveLength(12);
    expect(s.events.filter((e) => e.type === 'rollout_wave_started' && e.revision === commitId(2)).map((e) => e.wave)).toEqual(['canary', 'early', 'rest']);
    expect(s.events.filter((e) => e.type === 'rollout_done' && e.revision === commitId(2))).toHaveLength(1);
  }, 120_000);

  it('halts on a failure in wave 1 with no write to waves 2 and 3, tells it once, and continues after `reconcile resume` (401 without the token)', async () => {
    const refs = await refsOf(s.client);
    // Every max_rows write fails from now on (only the first wave is written to).
    s.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/restapi', method: 'PATCH', errorRate: 1, errorStatus: 500 }] });
    const since = s.emulator.requests().length;
    await s.source.worktree(commitId(3), fleet(300, WAVE_ROLLOUT));
    await s.source.publish(commitId(3), { removePrevious: commitId(2) });
    await s.daemon.reload();
    await until('the rollout halts', () => s.daemon.rollout()?.revision === commitId(3) && s.daemon.rollout()?.halted !== undefined);
    expect(s.daemon.rollout()!.halted!.wave).toBe('canary');
    // More passes while halted: nothing more is written to the later waves, and the halt is told once.
    await s.daemon.requestPass({});
    await s.daemon.idle();
    await s.daemon.requestPass({});
    await s.daemon.idle();
    expect(writesTo(s, refs, WAVES.canary, since).length).toBeGreaterThan(0);
    expect(writesTo(s, refs, [...WAVES.early, ...WAVES.rest], since)).toEqual([]);
    expect(s.events.filter((e) => e.type === 'rollout_halted')).toHaveLength(1);
    expect(s.events.find((e) => e.type === 'rollout_halted')).toMatchObject({ rollout: 'tenants', wave: 'canary', revision: commitId(3) });
    const text = await s.metrics.render();
    expect(text).toContain('reconciler_rollout_wave_state{rollout="tenants",wave="canary",state="halted"} 1');
    expect(text).toContain('reconciler_rollout_wave_state{rollout="tenants",wave="early",state="waiting"} 1');

    const anonymous = await fetch(`${s.server.url}/resume`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    const wrong = await fetch(`${s.server.url}/resume`, { method: 'POST', headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(s.daemon.rollout()!.halted).toBeDefined();

    s.emulator.setFaults({ rules: [] });
    // `--revision` names the revision a person means to resume: another one is refused (409), nothing resumed.
    const other = await cli(['resume', '--revision', commitId(2), '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('409');
    expect(other.stderr).toContain(`halted at revision ${commitId(3).slice(0, 12)}`);
    expect(s.daemon.rollout()!.halted).toBeDefined();
    const resumed = await cli(['resume', '--revision', commitId(3).slice(0, 12), '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('rollout tenants resumed');
    expect(resumed.stdout).toContain('wave early starts');
    await until('the second wave has the revision', () => s.daemon.rollout()?.waves[1]?.state === 'soaking' || s.daemon.rollout()?.waves[1]?.state === 'done');
    expect(writesTo(s, refs, WAVES.early, since).length).toBeGreaterThan(0);
    for (const name of WAVES.early) expect((await s.client.api.getRestapiServiceConfig(refs.get(name)!)).max_rows).toBe(300);
    await until('the rollout is done', allDone(s, commitId(3)));
  }, 120_000);
});

describe('maintenance windows and approvals in the daemon', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp();
  });
  afterAll(async () => {
    await s?.close();
  });
  afterEach(() => s.emulator.setFaults({ rules: [] }));

  const pair = (a: string, b: string, rollout: string) => ({
    'organization.yaml': ORGANIZATION,
    'rollout.yaml': rollout,
    'a.yaml': tenant('a', 'canary', a),
    'b.yaml': tenant('b', 'canary', b),
  });
  const NO_RULES = 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: ops }\nspec: {}\n';

  it('holds a restart-requiring change outside its window, then applies it first when the window opens', async () => {
    await s.source.worktree(commitId(11), pair('  postgres:\n    max_connections: 100\n', '  restapi:\n    max_rows: 100\n', NO_RULES));
    await s.source.publish(commitId(11));
    await s.daemon.start();
    await s.daemon.idle();
    const refs = await refsOf(s.client);
    expect(refs.size).toBe(2);

    // A nightly window that opens forty minutes (scaled) from now.
    const opens = new Date(Math.ceil((s.clock.now() + 40 * 60_000) / 60_000) * 60_000);
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: ops }
spec:
  windows:
    - { name: nightly, schedule: '${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *', duration: 1h, timeZone: UTC }
`;
    const since = s.emulator.requests().length;
    await s.source.worktree(commitId(12), pair('  postgres:\n    max_connections: 140\n', '  restapi:\n    max_rows: 100\n', rollout));
    await s.source.publish(commitId(12), { removePrevious: commitId(11) });
    await s.daemon.reload();
    await s.daemon.idle();
    const waiting = s.daemon.rollout()!.waiting;
    expect(waiting.map((w) => [w.id, w.reason])).toEqual([['ProjectPostgres/a/postgres', 'window']]);
    expect(s.clock.now()).toBeLessThan(opens.getTime());
    expect(writesTo(s, refs, ['a'], since)).toEqual([]);
    expect(await s.metrics.render()).toContain('reconciler_changes_waiting{reason="window"} 1');
    expect(s.events.filter((e) => e.type === 'change_waiting')).toHaveLength(1);

    await until('the waiting change is applied', async () => (await s.client.api.getPostgresConfig(refs.get('a')!)).max_connections === 140);
    const writes = s.emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
    // The first write after the hold is the waiting change, and it came once the window was open (scaled time).
    expect(writes[0]!.path).toBe(`/v1/projects/${refs.get('a')}/config/database/postgres`);
    expect(s.origin + (writes[0]!.time - s.origin) * SPEED).toBeGreaterThanOrEqual(opens.getTime() - SPEED);
    await until('the pass at the window has finished', () => s.daemon.rollout()!.waiting.length === 0);
    expect(await s.metrics.render()).toContain('reconciler_changes_waiting{reason="window"} 0');
    expect(s.events.filter((e) => e.type === 'change_waiting')).toHaveLength(1);
  }, 120_000);

  it('holds a change that needs approval until `reconcile approve`; an approval of an older revision does not apply a newer one', async () => {
    const refs = await refsOf(s.client);
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: ops }
spec:
  approvals:
    - { name: api-limits, kinds: [ProjectRestapi] }
`;
    await s.source.worktree(commitId(13), pair('  postgres:\n    max_connections: 140\n', '  restapi:\n    max_rows: 250\n', rollout));
    await s.source.publish(commitId(13), { removePrevious: commitId(12) });
    await s.daemon.reload();
    await s.daemon.idle();
    expect(s.daemon.rollout()!.waiting.map((w) => [w.id, w.reason])).toEqual([['ProjectRestapi/b/restapi', 'approval']]);
    expect(await s.metrics.render()).toContain('reconciler_changes_waiting{reason="approval"} 1');
    const needed = s.events.filter((e) => e.type === 'approval_needed');
    expect(needed).toHaveLength(1);
    expect(needed[0]!.entries).toEqual(['ProjectRestapi/b/restapi update (restapi.max_rows)']);

    // Without --revision and without a terminal to show the revision and ask: refused, nothing approved.
    const unnamed = await cli(['approve', '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('pass --revision R');
    // Approving the revision before (no longer current) approves nothing.
    const stale = await cli(['approve', '--revision', commitId(12), '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('409');
    const anonymous = await fetch(`${s.server.url}/approve`, { method: 'POST', body: JSON.stringify({ revision: commitId(13) }) });
    expect(anonymous.status).toBe(401);
    // The endpoint itself wants the revision: a request without one approves nothing.
    const unnamedRequest = await fetch(`${s.server.url}/approve`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"projects":["b"]}' });
    expect(unnamedRequest.status).toBe(400);
    expect(((await unnamedRequest.json()) as { message: string }).message).toContain('`revision` is required');
    await s.daemon.idle();
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(100);

    // A newer revision arrives: the approval of 13 would not cover it.
    const approved = await cli(['approve', '--revision', commitId(13), '--project', 'b', '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    await s.daemon.idle();
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(250);
    expect(await s.metrics.render()).toContain('reconciler_changes_waiting{reason="approval"} 0');

    await s.source.worktree(commitId(14), pair('  postgres:\n    max_connections: 140\n', '  restapi:\n    max_rows: 400\n', rollout));
    await s.source.publish(commitId(14), { removePrevious: commitId(13) });
    await s.daemon.reload();
    await s.daemon.idle();
    expect(s.daemon.rollout()!.waiting.map((w) => w.id)).toEqual(['ProjectRestapi/b/restapi']);
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(250);
    const record = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(join(s.stateDir, 'approvals.json'), 'utf8'))) as { approvals: Array<{ revision: string; by: string; projects?: string[] }> };
    expect(record.approvals).toEqual([expect.objectContaining({ revision: commitId(13), by: 'ops-token', projects: ['b'] })]);
  }, 120_000);

  it('holds a change of the commit that removes the Rollout under its approval rule until approved; the next commit is not held', async () => {
    const refs = await refsOf(s.client);
    const files = (rows: number) => {
      const next: Record<string, string> = pair('  postgres:\n    max_connections: 140\n', `  restapi:\n    max_rows: ${rows}\n`, '');
      delete next['rollout.yaml'];
      return next;
    };
    await s.source.worktree(commitId(15), files(500));
    await s.source.publish(commitId(15), { removePrevious: commitId(14) });
    await s.daemon.reload();
    await s.daemon.idle();
    const waiting = s.daemon.rollout()!.waiting;
    expect(waiting.map((w) => [w.id, w.reason])).toEqual([['ProjectRestapi/b/restapi', 'approval']]);
    expect(waiting[0]!.message).toContain('the Rollout ops was removed in this revision; its approval rule api-limits still holds changes of this revision');
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(250);

    // The revision has no Rollout, but the removed one's rules hold it: it can be approved.
    const approved = await cli(['approve', '--revision', commitId(15), '--daemon-url', s.server.url, '--trigger-token-file', s.tokenFile]);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    await s.daemon.idle();
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(500);

    // Commit 15 is applied whole: the next commit is judged without the removed Rollout's rules.
    await s.source.worktree(commitId(16), files(600));
    await s.source.publish(commitId(16), { removePrevious: commitId(15) });
    await s.daemon.reload();
    await s.daemon.idle();
    expect((await s.client.api.getRestapiServiceConfig(refs.get('b')!)).max_rows).toBe(600);
    expect(s.daemon.rollout()).toBeUndefined();
  }, 120_000);
});
