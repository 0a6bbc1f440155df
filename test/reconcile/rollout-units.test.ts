// The rollout's pure parts: wave membership and shares, maintenance windows on a given clock
// time, change classes, and the loader's checks of a Rollout document.
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { changeClasses } from '../../src/reconcile/rollout/change-class.js';
import { rolloutConfig, sharePoint, type WindowRule } from '../../src/reconcile/rollout/config.js';
import { windowState } from '../../src/reconcile/rollout/windows.js';
import type { PlanEntry } from '../../src/reconcile/types.js';
import { cleanupTrees, tree } from '../manifests/helpers.js';

afterAll(() => cleanupTrees());

const ORG = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n';
const project = (name: string, labels: string) => `---\napiVersion: reconciler/v1\nkind: Project\nmetadata: { name: ${name}, labels: ${labels} }\nspec: { organization: acme, region: eu-west-1 }\n`;

describe('waves', () => {
  it('takes a stable share of a selector: about the share, and the same projects however many others join', async () => {
    const names = Array.from({ length: 1000 }, (_, i) => `tenant-${i}`);
    const rollout = 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: r }\nspec:\n  waves:\n    - { name: early, selector: { labels: { tier: tenant } }, share: 10% }\n    - { name: tenants, selector: { labels: { tier: tenant } } }\n';
    const load = async (count: number) => {
      const set = await loadManifests(tree({ 'org.yaml': ORG, 'rollout.yaml': rollout, 'projects.yaml': names.slice(0, count).map((n) => project(n, '{ tier: tenant }')).join('') }));
      expect(set.errors).toEqual([]);
      return rolloutConfig(set.documents)!;
    };
    const all = await load(1000);
    const early = [...all.waveOf].filter(([, wave]) => wave === 0).map(([name]) => name);
    expect(early.length).toBeGreaterThan(70);
    expect(early.length).toBeLessThan(130);
    expect(all.waves).toEqual(['early', 'tenants']);
    const fewer = await load(500);
    expect([...fewer.waveOf].filter(([, wave]) => wave === 0).map(([name]) => name)).toEqual(early.filter((name) => Number(name.split('-')[1]) < 500));
    expect(sharePoint('early', 'tenant-1')).toBe(sharePoint('early', 'tenant-1'));
    expect(sharePoint('early', 'tenant-1')).not.toBe(sharePoint('tenants', 'tenant-1'));
  });

  it('puts projects no wave takes in the last wave, `rest`, and none without waves', async () => {
    const set = await loadManifests(tree({ 'org.yaml': ORG, 'p.yaml': project('a', '{ ring: canary }') + project('b', '{ ring: x }'), 'r.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: r }\nspec:\n  waves:\n    - { name: canary, selector: { labels: { ring: canary } } }\n' }));
    const config = rolloutConfig(set.documents)!;
    expect(config.waves).toEqual(['canary', 'rest']);
    expect(Object.fromEntries(config.waveOf)).toEqual({ a: 0, b: 1 });
    const windowsOnly = await loadManifests(tree({ 'org.yaml': ORG, 'p.yaml': project('a', '{}'), 'r.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: r }\nspec: {}\n' }));
    expect(rolloutConfig(windowsOnly.documents)!.waves).toEqual([]);
  });
});

describe('maintenance windows', () => {
  const window = (schedule: string, duration: number, timeZone = 'UTC'): WindowRule => ({ name: 'w', schedule, durationMs: duration, timeZone, selector: {}, classes: [] });

  it('is open from each start for its duration, in its time zone, and says when it opens next', () => {
    // Saturdays at 02:00 in Berlin (UTC+1 in November), two hours.
    const saturday = window('0 2 * * 6', 2 * 3_600_000, 'Europe/Berlin');
    expect(windowState(saturday, Date.UTC(2026, 10, 26, 10))).toEqual({ open: false, opensAt: Date.UTC(2026, 10, 28, 1) });
    expect(windowState(saturday, Date.UTC(2026, 10, 28, 1, 0))).toEqual({ open: true, closesAt: Date.UTC(2026, 10, 28, 3) });
    expect(windowState(saturday, Date.UTC(2026, 10, 28, 2, 59, 59)).open).toBe(true);
    expect(windowState(saturday, Date.UTC(2026, 10, 28, 3, 0)).open).toBe(false);
    // A quarter-hour time zone.
    expect(windowState(window('30 1 * * *', 60_000 * 30, 'Asia/Kathmandu'), Date.UTC(2026, 10, 26, 19, 50)).open).toBe(true);
  });

  it('finds the next opening however far away it is', () => {
    expect(windowState(window('0 0 1 1 *', 3_600_000), Date.UTC(2026, 10, 26))).toEqual({ open: false, opensAt: Date.UTC(2027, 0, 1) });
    expect(windowState(window('0 3 29 2 *', 3_600_000), Date.UTC(2026, 10, 26))).toEqual({ open: false, opensAt: Date.UTC(2028, 1, 29, 3) });
  });

  it('opens right after the hour a spring change skips, and once in the hour an autumn change repeats', () => {
    // Berlin, 28 March 2027: 02:00 becomes 03:00. A start at 02:30 opens at 03:00 (01:00 UTC).
    const spring = window('30 2 * * *', 3_600_000, 'Europe/Berlin');
    expect(windowState(spring, Date.UTC(2027, 2, 28, 0, 30))).toEqual({ open: false, opensAt: Date.UTC(2027, 2, 28, 1) });
    expect(windowState(spring, Date.UTC(2027, 2, 28, 1, 10))).toEqual({ open: true, closesAt: Date.UTC(2027, 2, 28, 2) });
    // Berlin, 25 October 2026: 03:00 becomes 02:00. A 02:30 start opens at its first occurrence only.
    const autumn = window('30 2 * * *', 30 * 60_000, 'Europe/Berlin');
    expect(windowState(autumn, Date.UTC(2026, 9, 25, 0, 40))).toEqual({ open: true, closesAt: Date.UTC(2026, 9, 25, 1) });
    expect(windowState(autumn, Date.UTC(2026, 9, 25, 1, 40))).toEqual({ open: false, opensAt: Date.UTC(2026, 9, 26, 1, 30) });
  });
});

describe('change classes', () => {
  const entry = (over: Partial<PlanEntry>): PlanEntry => ({ id: 'x', kind: 'ProjectRestapi', name: 'x', project: 'p', action: 'update', changes: [], ...over });
  it('names the disruptive classes of a planned write', () => {
    expect(changeClasses(entry({ kind: 'ProjectPostgres', changes: [{ path: 'postgres.max_connections', before: 100, after: 200 }] }))).toEqual(['postgres-restart']);
    expect(changeClasses(entry({ kind: 'ProjectPostgres', changes: [{ path: 'postgres.work_mem', before: '4MB', after: '8MB' }] }))).toEqual([]);
    expect(changeClasses(entry({ kind: 'ProjectPostgresVersion' }))).toEqual(['postgres-major-upgrade']);
    expect(changeClasses(entry({ kind: 'ProjectReadReplicas' }))).toEqual(['read-replicas']);
    expect(changeClasses(entry({ kind: 'ProjectCustomHostname', changes: [{ path: 'custom_hostname.status', before: '2_initiated', after: '5_services_reconfigured' }] }))).toEqual(['custom-hostname-activation']);
    expect(changeClasses(entry({ kind: 'ProjectLifecycle' }))).toEqual(['pause-restore']);
    expect(changeClasses(entry({ kind: 'Secret', action: 'delete' }))).toEqual(['deletion']);
    expect(changeClasses(entry({ kind: 'Function', changeClasses: ['disruptive-migration', 'not-a-class'] }))).toEqual(['disruptive-migration']);
    expect(changeClasses(entry({ kind: 'ProjectLifecycle', observeOnly: true }))).toEqual([]);
    expect(changeClasses(entry({ kind: 'ProjectReadReplicas', action: 'noop' }))).toEqual([]);
  });

  it('gives every change that restarts or disconnects a database a class', () => {
    expect(changeClasses(entry({ kind: 'ProjectSslEnforcement', changes: [{ path: 'ssl_enforcement.database', before: false, after: true }] }))).toEqual(['postgres-restart']);
    expect(changeClasses(entry({ kind: 'ProjectCryptoext', changes: [{ path: 'cryptoext.root_key', sensitive: true }] }))).toEqual(['postgres-restart']);
    expect(changeClasses(entry({ kind: 'ProjectPooler', changes: [{ path: 'pooler.default_pool_size', before: 15, after: 20 }] }))).toEqual(['connection-reset']);
    expect(changeClasses(entry({ kind: 'ProjectNetworkRestrictions', changes: [{ path: 'network_restrictions.dbAllowedCidrs', before: [], after: ['10.0.0.0/8'] }] }))).toEqual(['connection-reset']);
    for (const kind of ['ProjectAuth', 'ProjectRestapi', 'ProjectStorage', 'ProjectVanitySubdomain', 'Secret', 'Function', 'Branch', 'SsoProvider'] as const) {
      expect(changeClasses(entry({ kind, changes: [{ path: 'x', before: 1, after: 2 }] })), kind).toEqual([]);
    }
  });
});

describe('the vocabulary of approval rules', () => {
  it('expands document kinds to every entry kind their documents produce', async () => {
    const { expandKinds, RULE_KINDS } = await import('../../src/reconcile/rollout/kinds.js');
    expect(expandKinds(['Migrations'])).toEqual(['Migration']);
    expect(expandKinds(['Secrets', 'Secret'])).toEqual(['Secret']);
    const project = expandKinds(['Project']);
    for (const kind of ['Project', 'ProjectLifecycle', 'ProjectAuth', 'ProjectPostgres', 'ProjectSslEnforcement', 'ProjectPostgresVersion']) expect(project).toContain(kind);
    expect(project).not.toContain('Secret');
    expect(RULE_KINDS).toContain('Migrations');
    expect(RULE_KINDS).not.toContain('Rollout');
  });
});

describe('names in what is printed', () => {
  it('escapes control characters of held reasons and rollout names in the plan and in `reconcile status`', async () => {
    const { entryNote, rolloutLines } = await import('../../src/reconcile/render/format.js');
    const { renderFleetViewText } = await import('../../src/status/fleet-view-text.js');
    const hostile = 'x\u001b[2A\u001b[J';
    const note = entryNote({ id: 'ProjectRestapi/p/restapi', kind: 'ProjectRestapi', name: 'restapi', project: 'p', action: 'update', changes: [], held: { reason: 'approval', message: `needs approval (${hostile})` } });
    expect(note).not.toContain('\u001b');
    expect(note).toContain('x\\u001b[2A');
    const lines = rolloutLines({ name: hostile, revision: 'content-0123456789ab', waves: [{ name: hostile, state: 'halted', projects: 1, members: ['p'] }], halted: { wave: hostile, reason: hostile, at: 0 }, waiting: [], revisions: {} });
    expect(lines.join('\n')).not.toContain('\u001b');
    const view = {
      generatedAt: '2026-11-28T00:00:00.000Z', source: 'daemon', condition: { state: 'held', message: hostile }, summary: { projects: 0, projectStates: { in_sync: 0, drifted: 0, held: 1, pending: 0, failed: 0 }, pendingChanges: 1, heldChanges: 1 },
      freshness: {}, fleet: [], recentErrors: [], projects: [{ name: 'p', state: 'pending', resources: [], pending: [{ project: 'p', kind: 'ProjectRestapi', name: 'restapi', action: 'update', state: 'held', waitingFor: 'approval', since: '2026-11-28T00:00:00.000Z', waitingSeconds: 1, reason: hostile }] }],
      rollouts: [{ name: hostile, waves: [{ name: hostile, state: 'halted', projects: ['p'], detail: hostile }] }],
    };
    const text = renderFleetViewText(view as never, { color: false, from: 'test' });
    expect(text).not.toContain('\u001b');
    expect(text).toContain('x\\u001b[2A');
  });
});

describe('the loader', () => {
  it('refuses a second Rollout, duplicate wave names, a bad schedule and an unknown time zone, naming file and field', async () => {
    const set = await loadManifests(
      tree({
        'a.yaml': `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: one }
spec:
  waves:
    - { name: canary, selector: {} }
    - { name: canary, selector: {} }
  windows:
    - { name: w, schedule: '61 * * * *', duration: 1h }
    - { name: v, schedule: '0 2 * * 6', duration: 1h, timeZone: Mars/Olympus }
`,
        'b.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: two }\nspec: {}\n',
      }),
    );
    const errors = set.errors.map((e) => `${e.file}:${e.line} ${e.path}: ${e.message}`);
    expect(errors).toEqual([
      expect.stringMatching(/^a\.yaml:7 \/spec\/waves\/1\/name: two waves named `canary`/),
      expect.stringMatching(/^a\.yaml:9 \/spec\/windows\/0\/schedule: not a cron expression/),
      expect.stringMatching(/^a\.yaml:10 \/spec\/windows\/1\/timeZone: unknown time zone `Mars\/Olympus`/),
      expect.stringMatching(/^b\.yaml:3 \/metadata\/name: a second Rollout document: the first is at a\.yaml:3/),
    ]);
  });

  it('refuses a share that is not a percentage and an unknown change class', async () => {
    const set = await loadManifests(tree({ 'r.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: r }\nspec:\n  waves:\n    - { name: early, selector: {}, share: ten }\n  approvals:\n    - { name: a, classes: [restarts] }\n' }));
    expect(set.errors.map((e) => e.path).sort()).toEqual(['/spec/approvals/0/classes/0', '/spec/waves/0/share']);
  });
});

describe('the rollout records in a fenced state directory', () => {
  it('carry the generation of the lock they were written under, keep it apart from project names, and are refused once another process holds the lock', async () => {
    const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { ManualClock } = await import('../../src/util/clock.js');
    const { LOCK_FILE, StateLock } = await import('../../src/util/state-lock.js');
    const { StateLockLostError } = await import('../../src/util/state-fence.js');
    const { openStateStore } = await import('../../src/reconcile/state.js');
    const { addApproval, readProjectRevisions, resumeRollout, writeProjectRevisions, writeRollout } = await import('../../src/reconcile/rollout/records.js');
    const root = await mkdtemp(join(tmpdir(), 'rollout-fence-'));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    const dir = join(root, 'state');
    const acquired = await StateLock.acquire({ dir, clock: new ManualClock(), timeoutMs: 8_000, command: 'test' });
    if (!acquired.acquired) throw new Error('expected the lock');
    const lock = acquired.lock;
    const state = openStateStore(dir);
    await addApproval(state, { revision: 'r1', at: 1, by: 'ops-token' });
    await writeProjectRevisions(state, { generation: { revision: 'r1', appliedAt: 1 }, shop: { revision: 'r1', appliedAt: 1 } });
    await writeRollout(state, { name: 'tenants', revision: 'r1', startedAt: 1, waves: [{ name: 'canary', state: 'halted' }, { name: 'rest', state: 'waiting' }], halted: { wave: 'canary', reason: 'x', at: 1 }, waiting: {} });
    expect(JSON.parse(await readFile(join(dir, 'approvals.json'), 'utf8')).generation).toBe(lock.generation);
    expect(JSON.parse(await readFile(join(dir, 'rollouts/tenants.json'), 'utf8')).generation).toBe(lock.generation);
    // A project named like the record's own field keeps its revision.
    expect(await readProjectRevisions(state)).toEqual({ generation: { revision: 'r1', appliedAt: 1 }, shop: { revision: 'r1', appliedAt: 1 } });

    // Another process takes the lock over: no approval, no resume is written.
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'other', command: 'successor', startedAt: 'now', heartbeatAt: Date.now(), id: 'successor', generation: lock.generation + 1 }));
    const before = await readFile(join(dir, 'rollouts/tenants.json'), 'utf8');
    await expect(addApproval(state, { revision: 'r1', at: 2, by: 'ops-token' })).rejects.toBeInstanceOf(StateLockLostError);
    await expect(resumeRollout(state, undefined, 'tenants', 'ops-token', 2)).rejects.toBeInstanceOf(StateLockLostError);
    expect(await readFile(join(dir, 'rollouts/tenants.json'), 'utf8')).toBe(before);
    expect((JSON.parse(await readFile(join(dir, 'approvals.json'), 'utf8')) as { approvals: Array<{ at: number }> }).approvals.map((a) => a.at)).toEqual([1]);
  });
});
