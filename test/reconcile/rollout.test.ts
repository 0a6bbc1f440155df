// The rollout gate in passes against the emulator (one ManualClock for the emulator's
// lifecycles and the gate's soaks and windows): waves in order, a halt, windows, approvals.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addApproval, readProjectRevisions, resumeRollout } from '../../src/reconcile/rollout/records.js';
import { openStateStore } from '../../src/reconcile/state.js';
import { rolloutConfig } from '../../src/reconcile/rollout/config.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import type { ManifestSet, ProjectDocument } from '../../src/manifests/types.js';
import { ORG, startHarness, type Harness } from './helpers/fleet.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';

const MINUTE = 60_000;

function tenant(name: string, ring: string, restapi: number, extra = ''): string {
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels: { ring: ${ring}, tier: tenant }
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: DB_PASS } }
  restapi:
    max_rows: ${restapi}
${extra}`;
}

const ROLLOUT = (extra = '') => `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: tenants }
spec:
  soak: 10m
  waves:
    - { name: canary, selector: { labels: { ring: canary } } }
    - { name: early, selector: { labels: { ring: early } } }
${extra}`;

let h: Harness;
/** Clients a test opens on the harness's state directory: closed before the harness removes it. */
const clients: ApiClient[] = [];
beforeEach(async () => {
  h = await startHarness({ DB_PASS: 'rollout-db-pass-1f0e' });
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await h.close();
});

const writesTo = (h: Harness, refs: Map<string, string>, names: string[], since = 0) => {
  const wanted = new Set(names.map((name) => refs.get(name)).filter(Boolean));
  return h.emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator') && [...wanted].some((ref) => r.path.includes(`/${ref}`)));
};

async function refs(h: Harness): Promise<Map<string, string>> {
  return new Map((await h.client.api.listAllProjects()).map((p) => [p.name, p.ref]));
}

async function fleet(h: Harness, rows: number, rollout = ROLLOUT()) {
  await h.write({
    'org.yaml': ORG,
    'rollout.yaml': rollout,
    'a.yaml': tenant('a', 'canary', rows),
    'b.yaml': tenant('b', 'early', rows),
    'c.yaml': tenant('c', 'other', rows),
  });
}

describe('waves', () => {
  it('puts each project in the first wave that takes it, the unmatched ones in the implicit last wave', async () => {
    await fleet(h, 100);
    const config = rolloutConfig((await loadManifests(h.dir)).documents)!;
    expect(config.waves).toEqual(['canary', 'early', 'rest']);
    expect(Object.fromEntries(config.waveOf)).toEqual({ a: 0, b: 1, c: 2 });
  });

  it('applies a revision to the next wave only after the soak of the wave before, reporting the later waves as drift meanwhile', async () => {
    await fleet(h, 100);
    // First revision: the projects are created wave by wave.
    let result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting', 'waiting']);
    let live = await refs(h);
    expect([...live.keys()].sort()).toEqual(['a']);
    const held = result.plan.entries.filter((e) => e.held);
    expect(held.every((e) => e.held!.reason === 'wave' && (e.wave === 'early' || e.wave === 'rest'))).toBe(true);
    expect(result.resources.find((r) => r.id === 'Project/b')?.state).toBe('held');

    await h.clock.advance(5 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting', 'waiting']);
    expect([...(await refs(h)).keys()].sort()).toEqual(['a']);

    await h.clock.advance(6 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['done', 'soaking', 'waiting']);
    expect([...(await refs(h)).keys()].sort()).toEqual(['a', 'b']);
    await h.clock.advance(11 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['done', 'done', 'soaking']);
    await h.clock.advance(11 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['done', 'done', 'done']);
    expect(result.rollout!.events.map((e) => e.type)).toContain('rollout_done');
    live = await refs(h);
    expect([...live.keys()].sort()).toEqual(['a', 'b', 'c']);

    // A new revision: a change for every project goes to the canary first.
    const revisions = await readProjectRevisions(openStateStore(h.stateDir));
    expect(Object.keys(revisions).sort()).toEqual(['a', 'b', 'c']);
    await fleet(h, 200);
    const since = h.emulator.requests().length;
    result = await h.pass();
    expect(writesTo(h, live, ['a'], since).length).toBeGreaterThan(0);
    expect(writesTo(h, live, ['b', 'c'], since).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting', 'waiting']);
    expect(result.rollout!.revision).not.toBe(revisions.a!.revision);
  });

  it('outside git, a commit that only adds a migration file is a new revision: it goes to the canary first', async () => {
    const migrations = `apiVersion: reconciler/v1
kind: Migrations
metadata: { name: schema }
spec:
  selector: { labels: { tier: tenant } }
  path: .migrations
`;
    // Each project's database starts on its first query, slowly on a busy machine: this test's
    // passes use a client that waits for it (the harness's own waits 2 s for an answer).
    const patient = await createClient({
      baseUrl: h.emulator.url, auth: staticToken(h.emulator.token), rate: { limit: 100_000, windowMs: 60_000 }, stateDir: h.stateDir,
      retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 }, timeouts: { headersMs: 180_000, bodyMs: 180_000 },
    });
    clients.push(patient);
    const pass = () => h.pass({ client: patient });
    const converge = async () => {
      let result = await pass();
      for (let i = 0; i < 4 && result.rollout!.waves.some((w) => w.state !== 'done'); i++) {
        await h.clock.advance(11 * MINUTE);
        result = await pass();
      }
      expect(result.rollout!.waves.map((w) => w.state), JSON.stringify(result.rollout!.halted)).toEqual(['done', 'done', 'done']);
      return result;
    };
    await fleet(h, 100);
    await converge();
    const live = await refs(h);
    await h.write({ 'schema.yaml': migrations, '.migrations/1_items.sql': 'create table items (id int);\n' });
    const first = (await converge()).rollout!.revision;
    const history = async (name: string) =>
      ((await patient.api.runAQuery(live.get(name)!, { query: 'select version from reconciler.schema_migrations order by version', read_only: true })) as unknown as Array<{ version: string }>).map((row) => row.version);
    expect(await history('c')).toEqual(['1']);

    // Only a SQL file is added: no document changes.
    await h.write({ '.migrations/2_orders.sql': 'create table orders (id int);\n' });
    const result = await pass();
    expect(result.rollout!.revision).not.toBe(first);
    expect(result.rollout!.revision).toMatch(/^content-/);
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting', 'waiting']);
    expect(await history('a')).toEqual(['1', '2']);
    expect(await history('b')).toEqual(['1']);
    expect(await history('c')).toEqual(['1']);
    expect(result.plan.entries.filter((e) => e.kind === 'Migration' && e.held?.reason === 'wave').map((e) => e.project).sort()).toEqual(['b', 'c']);
  });

  it('halts when a change fails in the current wave: later waves get no write until resumed', async () => {
    await fleet(h, 100, ROLLOUT().replace('soak: 10m', 'soak: 1m'));
    for (let i = 0; i < 4; i++) {
      await h.pass();
      await h.clock.advance(2 * MINUTE);
    }
    const live = await refs(h);
    expect(live.size).toBe(3);
    // The canary's restapi write fails from now on.
    await fetch(`${h.emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ route: '/v1/projects/{ref}/restapi', method: 'PATCH', errorRate: 1 }] }),
    });
    await fleet(h, 300);
    const since = h.emulator.requests().length;
    let result = await h.pass();
    expect(result.rollout!.halted?.wave).toBe('canary');
    expect(result.rollout!.events.filter((e) => e.type === 'rollout_halted')).toHaveLength(1);
    await h.clock.advance(30 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.events.filter((e) => e.type === 'rollout_halted')).toHaveLength(0);
    expect(writesTo(h, live, ['b', 'c'], since)).toEqual([]);
    await fetch(`${h.emulator.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [] }) });
    const resumed = await resumeRollout(openStateStore(h.stateDir), undefined, 'tenants', 'ops-token', h.clock.now());
    expect(resumed).toMatchObject({ status: 'resumed', wave: 'canary', next: 'early' });
    result = await h.pass();
    expect(writesTo(h, live, ['b'], since).length).toBeGreaterThan(0);
    expect(writesTo(h, live, ['c'], since)).toEqual([]);
  });
});

describe('a wave with projects of another shard', () => {
  it('never counts as done in this shard, so its later waves get nothing (the gate behind the loader\'s refusal)', async () => {
    await fleet(h, 100);
    const loaded = await loadManifests(h.dir);
    // Shard `b` sees the checkout; the canary `a` belongs to shard `a`.
    const canary = loaded.documents.find((d) => d.kind === 'Project' && d.metadata.name === 'a') as ProjectDocument;
    const manifests: ManifestSet = {
      ...loaded,
      documents: loaded.documents.filter((d) => d !== canary),
      shard: { name: 'b', mapFile: 'shards.yaml', elsewhere: [{ document: canary, shard: 'a' }], organizationOwners: {} },
    };
    for (let i = 0; i < 3; i++) {
      const result = await h.pass({ manifests });
      expect(result.rollout!.waves.map((w) => [w.name, w.state])).toEqual([['canary', 'applying'], ['early', 'waiting'], ['rest', 'waiting']]);
      expect(result.plan.entries.find((e) => e.id === 'Project/b')!.held?.message).toContain('projects of other shards (a)');
      await h.clock.advance(11 * MINUTE);
    }
    expect((await refs(h)).size).toBe(0);
  });
});

describe('health at the gates', () => {
  const healthFails = (on: boolean) =>
    fetch(`${h.emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: on ? [{ route: '/v1/projects/{ref}/health', method: 'GET', errorRate: 1 }] : [] }),
    });

  it('starts the soak once an applied wave reports healthy, and halts a wave unhealthy for as long as a soak', async () => {
    await fleet(h, 100);
    for (let i = 0; i < 4; i++) {
      await h.pass();
      await h.clock.advance(11 * MINUTE);
    }
    await fleet(h, 200);
    await healthFails(true);
    let result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['applying', 'waiting', 'waiting']);
    expect(result.rollout!.halted).toBeUndefined();
    expect(result.rollout!.next).toMatchObject({ reason: 'wave' });
    await healthFails(false);
    await h.clock.advance(result.rollout!.next!.at - h.clock.now());
    result = await h.pass();
    expect(result.rollout!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting', 'waiting']);
    // Unhealthy when the soak ends: halted, and the next wave gets nothing.
    await healthFails(true);
    await h.clock.advance(11 * MINUTE);
    const since = h.emulator.requests().length;
    result = await h.pass();
    expect(result.rollout!.halted?.reason).toContain('unhealthy at the end of the soak');
    expect(writesTo(h, await refs(h), ['b', 'c'], since)).toEqual([]);
    await healthFails(false);

    // A newer revision starts over from the first wave.
    await fleet(h, 300);
    await healthFails(true);
    result = await h.pass();
    expect(result.rollout!.waves[0]!.state).toBe('applying');
    await h.clock.advance(11 * MINUTE);
    result = await h.pass();
    expect(result.rollout!.halted).toMatchObject({ wave: 'canary' });
    expect(result.rollout!.halted!.reason).toContain('unhealthy since the apply');
    expect(result.rollout!.events.map((e) => e.type)).toEqual(['rollout_halted']);
    await healthFails(false);
  });
});

describe('maintenance windows and approvals', () => {
  const pg = (connections: number) => `  postgres:\n    max_connections: ${connections}\n`;

  it('holds a restart-requiring change outside its window, then applies it once the window is open', async () => {
    const start = new Date(h.clock.now() + 3 * 60 * MINUTE);
    const schedule = `${start.getUTCMinutes()} ${start.getUTCHours()} * * *`;
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: windows }
spec:
  windows:
    - { name: nightly, schedule: '${schedule}', duration: 1h, timeZone: UTC }
`;
    await h.write({ 'org.yaml': ORG, 'rollout.yaml': rollout, 'a.yaml': tenant('a', 'canary', 100, pg(100)) });
    await h.pass();
    await h.write({ 'a.yaml': tenant('a', 'canary', 100, pg(120)) });
    let result = await h.pass();
    const entry = result.plan.entries.find((e) => e.kind === 'ProjectPostgres')!;
    expect(entry.held?.reason).toBe('window');
    expect(result.rollout!.waiting).toHaveLength(1);
    expect(result.rollout!.next).toMatchObject({ reason: 'window', projects: ['a'] });
    expect(result.rollout!.events.filter((e) => e.type === 'change_waiting')).toHaveLength(1);
    const [a] = await h.client.api.listAllProjects();
    expect((await h.client.api.getPostgresConfig(a!.ref)).max_connections).toBe(100);
    result = await h.pass();
    // Told once.
    expect(result.rollout!.events).toEqual([]);
    await h.clock.advance(result.rollout!.next!.at - h.clock.now());
    result = await h.pass();
    expect(result.plan.entries.find((e) => e.kind === 'ProjectPostgres')!.held).toBeUndefined();
    expect((await h.client.api.getPostgresConfig(a!.ref)).max_connections).toBe(120);
  });

  it('holds a migration marked disruptive to its window, while an unmarked one before it applies at once', async () => {
    const start = new Date(h.clock.now() + 3 * 60 * MINUTE);
    const schedule = `${start.getUTCMinutes()} ${start.getUTCHours()} * * *`;
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: windows }
spec:
  windows:
    - { name: nightly, schedule: '${schedule}', duration: 1h, timeZone: UTC, classes: [disruptive-migration] }
`;
    const migrations = `apiVersion: reconciler/v1
kind: Migrations
metadata: { name: schema }
spec:
  project: a
  path: migrations
`;
    // A project created in the same pass has nothing to disrupt: its migrations are never held.
    await h.write({ 'org.yaml': ORG, 'rollout.yaml': rollout, 'a.yaml': tenant('a', 'canary', 100) });
    await h.pass();
    await h.write({
      'schema.yaml': migrations,
      'migrations/20260101000000_items.sql': 'create table items (id bigint primary key);\n',
      'migrations/20260102000000_rewrite.sql': '-- reconcile: disruptive\nalter table items add column name text not null default \'\';\n',
    });
    let result = await h.pass();
    const held = (version: string) => result.plan.entries.find((e) => e.kind === 'Migration' && e.name.includes(version))!;
    expect(held('20260101000000').held).toBeUndefined();
    expect(held('20260102000000').changeClasses).toEqual(['disruptive-migration']);
    expect(held('20260102000000').held?.reason).toBe('window');
    const [a] = await h.client.api.listAllProjects();
    const columns = async () => (await h.client.api.runAQuery(a!.ref, { query: "select column_name from information_schema.columns where table_name = 'items' order by 1", read_only: true }) as unknown as Array<{ column_name: string }>).map((row) => row.column_name);
    expect(await columns()).toEqual(['id']);
    await h.clock.advance(result.rollout!.next!.at - h.clock.now());
    result = await h.pass();
    expect(held('20260102000000').held).toBeUndefined();
    expect(await columns()).toEqual(['id', 'name']);
  });

  it('holds a change that needs approval until its revision is approved; an older revision\'s approval does not cover a newer one', async () => {
    const rollout = `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: gated }
spec:
  approvals:
    - { name: rest-settings, kinds: [ProjectRestapi] }
`;
    await h.write({ 'org.yaml': ORG, 'rollout.yaml': rollout, 'a.yaml': tenant('a', 'canary', 100) });
    let result = await h.pass();
    expect(result.plan.entries.find((e) => e.kind === 'ProjectRestapi')!.held?.reason).toBe('approval');
    const state = openStateStore(h.stateDir);
    await addApproval(state, { revision: result.rollout!.revision, at: h.clock.now(), by: 'ops' });
    result = await h.pass();
    expect(result.plan.entries.find((e) => e.kind === 'ProjectRestapi')!.held).toBeUndefined();
    const [a] = await h.client.api.listAllProjects();
    expect((await h.client.api.getRestapiServiceConfig(a!.ref)).max_rows).toBe(100);
    const older = result.rollout!.revision;
    await h.write({ 'a.yaml': tenant('a', 'canary', 250) });
    result = await h.pass();
    expect(result.rollout!.revision).not.toBe(older);
    expect(result.plan.entries.find((e) => e.kind === 'ProjectRestapi')!.held?.reason).toBe('approval');
    expect((await h.client.api.getRestapiServiceConfig(a!.ref)).max_rows).toBe(100);
  });
});

describe('the rollout in the plan, a dry run and a saved plan', () => {
  it('shows each change\'s wave and why it waits, in text, JSON and a saved plan, and a dry run moves nothing on', async () => {
    const { renderText } = await import('../../src/reconcile/render/text.js');
    const { renderJson } = await import('../../src/reconcile/render/json.js');
    const { buildSavedPlan, entryRefusals, newSalt, readSavedPlan, writeSavedPlan } = await import('../../src/reconcile/plan-file.js');
    const { join } = await import('node:path');
    const start = new Date(h.clock.now() + 5 * 60 * MINUTE);
    const rollout = ROLLOUT(`  windows:
    - { name: nightly, schedule: '${start.getUTCMinutes()} ${start.getUTCHours()} * * *', duration: 1h }
  approvals:
    - { name: rows, kinds: [ProjectRestapi], selector: { labels: { ring: canary } } }
`);
    await fleet(h, 100, ROLLOUT());
    for (let i = 0; i < 3; i++) {
      await h.pass();
      await h.clock.advance(11 * MINUTE);
    }
    await h.pass();
    await h.write({
      'rollout.yaml': rollout,
      'a.yaml': tenant('a', 'canary', 150, '  postgres:\n    shared_buffers: 256MB\n'),
      'b.yaml': tenant('b', 'early', 150),
    });
    const since = h.emulator.requests().length;
    const dry = await h.pass({ dryRun: true });
    expect(h.emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'))).toEqual([]);
    const held = Object.fromEntries(dry.plan.entries.filter((e) => e.held).map((e) => [e.id, [e.wave, e.held!.reason]]));
    expect(held).toEqual({
      'ProjectPostgres/a/postgres': ['canary', 'window'],
      'ProjectRestapi/a/restapi': ['canary', 'approval'],
      'ProjectRestapi/b/restapi': ['early', 'wave'],
    });
    const text = renderText(dry, { color: false });
    expect(text).toContain('~ ProjectPostgres/a/postgres update  (wave canary; waiting for a window: postgres-restart: waits for maintenance window nightly (opens ');
    expect(text).toContain('~ ProjectRestapi/a/restapi update  (wave canary; waiting for approval: needs approval (rows): reconcile approve --revision content-');
    expect(text).toContain('~ ProjectRestapi/b/restapi update  (wave early; held: wave early waits for wave canary (applying))');
    expect(text).toMatch(/Rollout tenants at content-[0-9a-f]{12}: canary applying \(1 project\), early waiting \(1 project\), rest waiting \(1 project\)\./);
    expect(text).toContain('1 change waits for a maintenance window.');
    expect(text).toContain('1 change waits for approval: reconcile approve --revision content-');
    // `reconcile status` (built from the same dry pass): the waves, each waiting change and why, each project's applied revision.
    const { buildStatusReport, renderStatusText } = await import('../../src/reconcile/kinds/status-report.js');
    const status = renderStatusText(buildStatusReport(dry, new Map(), h.clock.now()), { color: false });
    expect(status).toMatch(/Rollout tenants at content-[0-9a-f]{12}: canary applying/);
    expect(status).toMatch(/ {2}ProjectPostgres\/a\/postgres: waiting for a window since \S+: postgres-restart: waits for maintenance window nightly/);
    expect(status).toMatch(/ {2}ProjectRestapi\/a\/restapi: waiting for approval since \S+: needs approval \(rows\)/);
    expect(status).toMatch(/Project b \(ref \w+, ACTIVE_HEALTHY\), observed \S+, applied revision content-[0-9a-f]{12}/);
    expect(status).toMatch(/wave early waits for wave canary/);
    // The status view (`GET /status`, the status page, `reconcile status` from the state directory).
    const { foldPass, emptyStatusRecord } = await import('../../src/status/status-record.js');
    const { buildFleetView } = await import('../../src/status/fleet-view.js');
    const { renderStatusPage } = await import('../../src/status/status-page.js');
    const view = buildFleetView(foldPass(emptyStatusRecord(), dry, {}, h.clock.now()), { now: h.clock.now(), source: 'state-dir' });
    expect(view.rollouts).toEqual([
      {
        name: 'tenants',
        waves: [
          { name: 'canary', state: 'applying', projects: ['a'] },
          { name: 'early', state: 'waiting', projects: ['b'], detail: 'waits for wave canary' },
          { name: 'rest', state: 'waiting', projects: ['c'], detail: 'waits for wave canary' },
        ],
      },
    ]);
    expect(view.projects.find((p) => p.name === 'a')!.pending.map((w) => [w.id, w.state, w.waitingFor])).toEqual([
      ['ProjectPostgres/a/postgres', 'held', 'window'],
      ['ProjectRestapi/a/restapi', 'held', 'approval'],
    ]);
    expect(view.projects.find((p) => p.name === 'b')!.pending.map((w) => [w.id, w.state, w.waitingFor])).toEqual([['ProjectRestapi/b/restapi', 'held', 'wave']]);
    const page = renderStatusPage(view, { refreshSeconds: 0 });
    expect(page).toContain('id="rollouts"');
    expect(page).toContain('waits for wave canary');
    const json = JSON.parse(renderJson(dry)) as { entries: Array<{ id: string; wave?: string; held?: { reason: string } }>; rollout: { waves: unknown[] } };
    expect(json.entries.find((e) => e.id === 'ProjectRestapi/b/restapi')).toMatchObject({ wave: 'early', held: { reason: 'wave' } });
    expect(json.rollout.waves).toHaveLength(3);

    // Saved: the waves and holds as planned; applied, the holds are computed afresh and nothing held is written.
    const manifests = await loadManifests(h.dir);
    const file = join(h.stateDir, '..', 'plan.json');
    await writeSavedPlan(file, buildSavedPlan({ manifests, result: dry, salt: newSalt(), secrets: [], now: h.clock.now() }));
    const saved = await readSavedPlan(file);
    expect(saved.result.plan.entries.find((e) => e.id === 'ProjectPostgres/a/postgres')?.held?.reason).toBe('window');
    const applied = await h.pass({ savedPlan: { check: (entries) => entryRefusals(saved, entries) } });
    expect(applied.outcomes.filter((o) => o.action === 'update').map((o) => o.entryId)).toEqual([]);
    expect(h.emulator.requests().slice(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'))).toEqual([]);
  });
});
