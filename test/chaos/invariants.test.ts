import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkInvariants, type Expectations, type LiveFacts } from '../../src/chaos/invariants.js';

const sha = (v: string) => createHash('sha256').update(v).digest('hex');
const expected: Expectations = {
  managedProjects: ['a', 'b'],
  bystanders: ['legacy'],
  secrets: { a: { S: 'one' }, b: { S: 'two' } },
  outOfBandSecrets: { a: ['MANUAL'] },
  functions: { a: ['fn'], b: ['fn'] },
  renamed: [{ project: 'b', manifestName: 'b-renamed-2', formerNames: ['b', 'b-renamed-1'] }],
};
const healthy = (): LiveFacts => ({
  projects: [
    { name: 'a', ref: 'ra' },
    { name: 'b', ref: 'rb' },
    { name: 'legacy', ref: 'rl' },
  ],
  secrets: { ra: { S: sha('one'), MANUAL: sha('x') }, rb: { S: sha('two') } },
  functions: { ra: ['fn'], rb: ['fn'] },
  deletes: [],
  finalPlanExit: 0,
  inventory: { a: 'ra', 'b-renamed-2': 'rb' },
  pausedHolder: { tookOver: true, apiWritesAfter: [], stateFilesChanged: [] },
  rolloutGates: { refusedShards: ['left', 'right'], writesWhileRefused: [], canaryHalted: true, doomedLive: true },
});
const failing = (facts: LiveFacts) => checkInvariants(facts, expected).filter((r) => !r.ok).map((r) => r.name);

describe('chaos invariants', () => {
  it('all hold for a converged fleet with nothing lost', () => {
    expect(failing(healthy())).toEqual([]);
  });

  it('sees a paused holder that wrote after the takeover, and a suite that paused no run', () => {
    const wrote = healthy();
    wrote.pausedHolder = { tookOver: true, apiWritesAfter: [], stateFilesChanged: ['inventory.json'] };
    expect(failing(wrote)).toEqual(['a paused holder writes nothing after the takeover']);
    const sent = healthy();
    sent.pausedHolder = { tookOver: true, apiWritesAfter: ['PATCH /v1/projects/ra/config/auth'], stateFilesChanged: [] };
    expect(failing(sent)).toEqual(['a paused holder writes nothing after the takeover']);
    const never = healthy();
    delete never.pausedHolder;
    expect(failing(never)).toEqual(['a paused holder writes nothing after the takeover']);
  });

  it('sees a tenant written while a rollout across shards should have been refused, and a removed project deleted without approval', () => {
    const name = 'no tenant outruns the canary of another shard, and a removed project waits for its approval';
    const ahead = healthy();
    ahead.rolloutGates = { refusedShards: ['left'], writesWhileRefused: ['PATCH /v1/projects/rt/restapi'], canaryHalted: true, doomedLive: true };
    expect(failing(ahead)).toEqual([name]);
    const deleted = healthy();
    deleted.rolloutGates = { refusedShards: ['left', 'right'], writesWhileRefused: [], canaryHalted: true, doomedLive: false };
    expect(failing(deleted)).toEqual([name]);
    const never = healthy();
    delete never.rolloutGates;
    expect(failing(never)).toEqual([name]);
  });

  it('sees a project created twice', () => {
    const facts = healthy();
    facts.projects.push({ name: 'a', ref: 'ra2' });
    expect(failing(facts)).toEqual(['no project was created twice']);
  });

  it('sees a declared secret whose value is wrong, and an out-of-band secret that is gone', () => {
    const facts = healthy();
    facts.secrets.rb!.S = sha('stale');
    expect(failing(facts)).toEqual(['no secret was lost']);
    const gone = healthy();
    delete gone.secrets.ra!.MANUAL;
    expect(failing(gone)).toEqual(['no secret was lost']);
  });

  it('sees any delete that was served, and a bystander project that vanished', () => {
    const facts = healthy();
    facts.deletes.push({ route: '/v1/projects/{ref}/functions/{function_slug}', path: '/v1/projects/ra/functions/old' });
    expect(failing(facts)).toEqual(['nothing was deleted that the manifests did not ask to delete']);
    const gone = healthy();
    gone.projects = gone.projects.filter((p) => p.name !== 'legacy');
    expect(failing(gone)).toEqual(['nothing was deleted that the manifests did not ask to delete']);
  });

  it('sees a renamed project whose record did not move, or that a former name still holds', () => {
    const stale = healthy();
    stale.inventory = { a: 'ra', 'b-renamed-1': 'rb' };
    expect(failing(stale)).toEqual(['a renamed project is managed under its new name']);
    const twice = healthy();
    twice.inventory.b = 'rb';
    expect(failing(twice)).toEqual(['a renamed project is managed under its new name']);
    const elsewhere = healthy();
    elsewhere.inventory['b-renamed-2'] = 'ra';
    expect(failing(elsewhere)).toEqual(['a renamed project is managed under its new name']);
  });

  it('judges a duplicate of the renamed project as a duplicate, not as a misplaced record', () => {
    const facts = healthy();
    facts.projects.push({ name: 'b', ref: 'rb2' });
    expect(failing(facts)).toEqual(['no project was created twice']);
  });

  it('sees a fleet that did not converge and a function that is missing', () => {
    const facts = healthy();
    facts.finalPlanExit = 2;
    facts.functions.rb = [];
    expect(failing(facts)).toEqual(['the fleet converged', 'every function is deployed']);
  });
});

describe('chaos invariants with a shard move', () => {
  const moved: Expectations = { ...expected, managedProjects: [...expected.managedProjects, 'm'], moved: [{ project: 'm', from: 'left', to: 'right' }] };
  const facts = (inventories: Record<string, Record<string, string>>): LiveFacts => {
    const base = healthy();
    base.projects.push({ name: 'm', ref: 'rm' });
    base.shardInventories = inventories;
    return base;
  };
  const failingMoved = (f: LiveFacts) => checkInvariants(f, moved).filter((r) => !r.ok).map((r) => r.name);

  it('holds when only the new shard records the moved project', () => {
    expect(failingMoved(facts({ left: {}, right: { m: 'rm' } }))).toEqual([]);
  });

  it('sees a moved project the old shard still records, or the new one does not', () => {
    expect(failingMoved(facts({ left: { m: 'rm' }, right: { m: 'rm' } }))).toEqual(['a project moved between shards is managed by its new shard']);
    expect(failingMoved(facts({ left: {}, right: {} }))).toEqual(['a project moved between shards is managed by its new shard']);
  });
});
