// The identity rules as a property: over random sequences of manifest edits (rename, move to
// another organization, delete, re-add, deletion policy changes) and passes, against the
// emulator, no live project is ever deleted unless its document was removed while the policy
// of its last reconciled manifest was `deletion: delete`, and no pass creates a second project
// of a name while the first one is still declared.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startHarness, type Harness } from './helpers/fleet.js';

const KEYS = [0, 1, 2] as const;
type Key = (typeof KEYS)[number];

type Command =
  | { op: 'rename' | 'move' | 'delete' | 'readd' | 'policy'; key: Key }
  | { op: 'pass' };

interface Logical {
  manifest: string;
  renames: number;
  org: 'acme' | 'beta';
  deletion: 'orphan' | 'delete';
  present: boolean;
  /** The deletion policy of the manifest the last pass saw while the document was present. */
  reconciledDeletion?: 'orphan' | 'delete';
}

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constantFrom('rename', 'move', 'delete', 'readd', 'policy') as fc.Arbitrary<'rename' | 'move' | 'delete' | 'readd' | 'policy'>, key: fc.constantFrom(...KEYS) }),
  fc.constant({ op: 'pass' as const }),
);

const organizations = ['acme', 'beta'].map((name) => `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${name}\nspec: {}\n`).join('---\n');

function document(key: Key, model: Logical): string {
  return [
    'apiVersion: reconciler/v1',
    'kind: Project',
    'metadata:',
    `  name: ${model.manifest}`,
    'spec:',
    `  name: lp-${key}`,
    `  organization: ${model.org}`,
    '  region: eu-west-1',
    '  policy:',
    `    deletion: ${model.deletion}`,
    '',
  ].join('\n');
}

async function check(commands: Command[]): Promise<void> {
  const h: Harness = await startHarness();
  try {
    const models = new Map<Key, Logical>(KEYS.map((key) => [key, { manifest: `p${key}`, renames: 0, org: 'acme', deletion: 'delete', present: true }]));
    const sync = async () => {
      await h.write({ 'organizations.yaml': organizations });
      for (const key of KEYS) {
        const model = models.get(key)!;
        // A renamed document stays in its file: the old name is gone with it.
        if (model.present) await h.write({ [`p${key}.yaml`]: document(key, model) });
        else await h.remove(`p${key}.yaml`);
      }
    };
    const pass = async () => {
      await sync();
      const before = await h.client.api.listAllProjects();
      const since = h.emulator.requests().length;
      const result = await h.pass();
      expect(result.result).not.toBe('invalid');
      const deleted = h.emulator.requests().slice(since).filter((r) => r.method === 'DELETE' && r.route === '/v1/projects/{ref}');
      for (const request of deleted) {
        const ref = request.path.split('/').pop()!;
        const project = before.find((p) => p.ref === ref)!;
        const key = Number(project.name.slice('lp-'.length)) as Key;
        const model = models.get(key)!;
        expect({ deleted: project.name, present: model.present, reconciled: model.reconciledDeletion }).toEqual({ deleted: project.name, present: false, reconciled: 'delete' });
      }
      // Never a second live project of one name in one organization.
      const after = (await h.client.api.listAllProjects()).filter((p) => p.status !== 'REMOVED');
      const seen = after.map((p) => `${p.organization_id}/${p.name}`);
      expect(new Set(seen).size).toBe(seen.length);
      for (const model of models.values()) if (model.present) model.reconciledDeletion = model.deletion;
    };

    await pass();
    for (const step of commands) {
      if (step.op === 'pass') {
        await pass();
        continue;
      }
      const model = models.get(step.key)!;
      if (step.op === 'rename' && model.present) model.manifest = `p${step.key}r${++model.renames}`;
      if (step.op === 'move' && model.present) model.org = model.org === 'acme' ? 'beta' : 'acme';
      if (step.op === 'delete') model.present = false;
      if (step.op === 'readd') model.present = true;
      if (step.op === 'policy') model.deletion = model.deletion === 'delete' ? 'orphan' : 'delete';
    }
    await pass();
  } finally {
    await h.close();
  }
}

describe('identity rules (property, against the emulator)', () => {
  it('deletes a live project only when its document was removed under deletion: delete', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: 8 }), (commands) => check(commands)),
      { seed: 20240611, numRuns: 16, endOnFailure: true },
    );
  }, 120_000);
});

// The same rules across shards. Two shards (`sa`, `sb`, one state directory each) split the
// projects by a `team` label. The random sequences add relabels (a project moves to the other
// shard), shard-map edits (the selectors swap; an explicit organization owner comes and goes),
// and lock takeovers (a shard's pass stops part-way, as a killed holder's does, leaving its lock;
// the shard's next pass takes the stale lock over). Whatever the order in which the shards run:
// no live project is deleted unless its document is gone from the whole checkout and the shard
// that deletes it last reconciled it under `deletion: delete`; never two live projects of one
// name in one organization, never two organizations of one name.
const SHARDS = ['sa', 'sb'] as const;
/** Across all runs: the sequences do exercise takeovers and handovers. */
const exercised = { takeovers: 0, handovers: 0 };
type ShardName = (typeof SHARDS)[number];
const LOCK_MS = 10_000;

type ShardCommand =
  | { op: 'rename' | 'move' | 'delete' | 'readd' | 'policy' | 'relabel'; key: Key }
  | { op: 'swap-map' | 'toggle-owner' }
  | { op: 'pass'; shard: ShardName }
  | { op: 'takeover'; shard: ShardName; after: number };

const shardCommand: fc.Arbitrary<ShardCommand> = fc.oneof(
  fc.record({ op: fc.constantFrom('rename', 'move', 'delete', 'readd', 'policy', 'relabel') as fc.Arbitrary<'rename' | 'move' | 'delete' | 'readd' | 'policy' | 'relabel'>, key: fc.constantFrom(...KEYS) }),
  fc.record({ op: fc.constantFrom('swap-map', 'toggle-owner') as fc.Arbitrary<'swap-map' | 'toggle-owner'> }),
  fc.record({ op: fc.constant('pass' as const), shard: fc.constantFrom(...SHARDS) }),
  fc.record({ op: fc.constant('pass' as const), shard: fc.constantFrom(...SHARDS) }),
  fc.record({ op: fc.constant('takeover' as const), shard: fc.constantFrom(...SHARDS), after: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ op: fc.constant('takeover' as const), shard: fc.constantFrom(...SHARDS), after: fc.integer({ min: 1, max: 6 }) }),
);

interface ShardedLogical extends Logical {
  team: 'a' | 'b';
}

function shardedDocument(key: Key, model: ShardedLogical): string {
  return document(key, model).replace(`  name: ${model.manifest}\n`, `  name: ${model.manifest}\n  labels: { team: ${model.team} }\n`);
}

async function checkSharded(commands: ShardCommand[]): Promise<void> {
  const { loadShardedManifests } = await import('../../src/shards/load-sharded.js');
  const { StateLock } = await import('../../src/util/state-lock.js');
  const { ManualClock } = await import('../../src/util/clock.js');
  const { join } = await import('node:path');
  const h: Harness = await startHarness();
  try {
    const models = new Map<Key, ShardedLogical>(KEYS.map((key) => [key, { manifest: `p${key}`, renames: 0, org: 'acme', deletion: 'delete', present: true, team: key === 1 ? 'b' : 'a' }]));
    let swapped = false;
    let explicitOwner = false;
    /** The deletion policies a shard's inventory may hold for each project (a stopped pass may or may not have recorded). */
    const possible = new Map<ShardName, Map<Key, Set<'orphan' | 'delete'>>>(SHARDS.map((s) => [s, new Map()]));
    /** Each shard's lock left behind by a stopped pass. */
    const leftLocked = new Set<ShardName>();
    const ownerOf = (model: ShardedLogical): ShardName => ((model.team === 'a') !== swapped ? 'sa' : 'sb');
    const sync = async () => {
      const selectors = swapped ? ['b', 'a'] : ['a', 'b'];
      await h.write({
        'shards.yaml': `${explicitOwner ? 'organizations:\n  acme: sb\n' : ''}shards:\n${SHARDS.map((s, i) => `  - name: ${s}\n    selector: { labels: { team: ${selectors[i]} } }\n    credentials: { tokenEnv: SHARD_TOKEN }\n`).join('')}`,
        'organizations.yaml': organizations,
      });
      for (const key of KEYS) {
        const model = models.get(key)!;
        if (model.present) await h.write({ [`p${key}.yaml`]: shardedDocument(key, model) });
        else await h.remove(`p${key}.yaml`);
      }
    };
    const pass = async (shard: ShardName, stopAfter?: number) => {
      await sync();
      const stateDir = join(h.stateDir, 'shards', shard);
      // One writer per state directory: the lock of a stopped holder is taken over once stale.
      let taken = await StateLock.acquire({ dir: stateDir, clock: new ManualClock(h.clock.now()), timeoutMs: LOCK_MS, command: `pass ${shard}` });
      if (!taken.acquired) {
        expect(leftLocked.has(shard)).toBe(true);
        await h.clock.advance(LOCK_MS + 1);
        taken = await StateLock.acquire({ dir: stateDir, clock: new ManualClock(h.clock.now()), timeoutMs: LOCK_MS, command: `pass ${shard}` });
        expect(taken.acquired && taken.tookOver !== undefined).toBe(true);
        leftLocked.delete(shard);
        exercised.takeovers++;
      }
      if (!taken.acquired) return;
      const sharded = await loadShardedManifests(h.dir, { cwd: h.dir, shard });
      expect(sharded.set.errors).toEqual([]);
      const before = await h.client.api.listAllProjects();
      const since = h.emulator.requests().length;
      const stop = new AbortController();
      let watching = stopAfter !== undefined;
      const watcher = (async () => {
        while (watching && h.emulator.requests().length - since < stopAfter!) await new Promise((resolve) => setImmediate(resolve));
        if (watching) stop.abort();
      })();
      const result = await h.pass({ manifests: sharded.set, stateDir, organizationWaitMs: 4000, signal: stop.signal }).catch(() => undefined);
      if (result?.plan.entries.some((e) => e.kind === 'Project' && e.changes.some((c) => c.path === 'shard'))) exercised.handovers++;
      watching = false;
      await watcher;
      const stopped = stop.signal.aborted;
      if (stopped) leftLocked.add(shard);
      else await taken.lock.release();
      const deleted = h.emulator.requests().slice(since).filter((r) => r.method === 'DELETE' && r.route === '/v1/projects/{ref}');
      for (const request of deleted) {
        const ref = request.path.split('/').pop()!;
        const project = before.find((p) => p.ref === ref)!;
        const key = Number(project.name.slice('lp-'.length)) as Key;
        const model = models.get(key)!;
        expect({ deleted: project.name, by: shard, present: model.present, mayHold: [...(possible.get(shard)!.get(key) ?? [])].includes('delete') })
          .toEqual({ deleted: project.name, by: shard, present: false, mayHold: true });
      }
      const after = (await h.client.api.listAllProjects()).filter((p) => p.status !== 'REMOVED');
      const seen = after.map((p) => `${p.organization_id}/${p.name}`);
      expect(new Set(seen).size).toBe(seen.length);
      const orgNames = (await h.client.api.listAllOrganizations()).map((o) => o.name);
      expect(new Set(orgNames).size).toBe(orgNames.length);
      // What this shard's inventory may hold from now on.
      const mine = possible.get(shard)!;
      // (A record another shard's document takes over is dropped, or kept when that document
      // declares another organization: either way this shard keeps what it may hold.)
      for (const key of KEYS) {
        const model = models.get(key)!;
        if (!model.present || ownerOf(model) !== shard) continue;
        mine.set(key, new Set([...(stopped ? (mine.get(key) ?? []) : []), model.deletion]));
      }
    };

    await pass('sa');
    await pass('sb');
    for (const step of commands) {
      if (step.op === 'pass') await pass(step.shard);
      else if (step.op === 'takeover') await pass(step.shard, step.after);
      else if (step.op === 'swap-map') swapped = !swapped;
      else if (step.op === 'toggle-owner') explicitOwner = !explicitOwner;
      else {
        const model = models.get(step.key)!;
        if (step.op === 'rename' && model.present) model.manifest = `p${step.key}r${++model.renames}`;
        if (step.op === 'move' && model.present) model.org = model.org === 'acme' ? 'beta' : 'acme';
        if (step.op === 'delete') model.present = false;
        if (step.op === 'readd') model.present = true;
        if (step.op === 'policy') model.deletion = model.deletion === 'delete' ? 'orphan' : 'delete';
        if (step.op === 'relabel' && model.present) model.team = model.team === 'a' ? 'b' : 'a';
      }
    }
    await pass('sa');
    await pass('sb');
  } finally {
    await h.close();
  }
}

describe('identity rules across shards (property, against the emulator)', () => {
  it('hands a relabelled project over instead of deleting it, and creates no second project or organization, through shard-map edits and lock takeovers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(shardCommand, { minLength: 4, maxLength: 12 }), (commands) => checkSharded(commands)),
      { seed: 20261126, numRuns: 16, endOnFailure: true },
    );
    expect(exercised.takeovers).toBeGreaterThan(0);
    expect(exercised.handovers).toBeGreaterThan(0);
  }, 240_000);
});
