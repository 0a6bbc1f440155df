// The gate judges a revision under the rules of the Rollout as last applied as well as under its
// own (the stricter wins): a window removed or narrowed with a disruptive change still holds it,
// until a revision without it has been applied whole. And a removed project goes with the wave
// its recorded labels fall in.
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import type { Inventory } from '../../src/reconcile/inventory.js';
import { openRolloutGate } from '../../src/reconcile/rollout/gate.js';
import type { PlanEntry, StateStore } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { cleanupTrees, tree } from '../manifests/helpers.js';

afterAll(() => cleanupTrees());

const ORG = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n';
const project = (name: string, labels: string) => `---\napiVersion: reconciler/v1\nkind: Project\nmetadata: { name: ${name}, labels: ${labels} }\nspec: { organization: acme, region: eu-west-1 }\n`;
// Closed now (1 January 2026) and for years: 29 February, 03:00.
const rollout = (windows: string, waves = '') => `apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: fleet }\nspec:\n  soak: 1m\n${windows}${waves}`;
const TENANT_NIGHTS = "  windows:\n    - { name: tenant-nights, schedule: '0 3 29 2 *', duration: 1h, selector: { labels: { tier: tenant } }, classes: [deletion] }\n";

function memoryState(): StateStore & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return {
    data,
    async get<T>(key: string) {
      return structuredClone(data.get(key)) as T | undefined;
    },
    async set(key: string, value: unknown) {
      data.set(key, structuredClone(value));
    },
  };
}

const inventory = (labels: Record<string, Record<string, string>>): Inventory => ({
  version: 3,
  updatedAt: 0,
  organizations: {},
  projects: Object.fromEntries(Object.entries(labels).map(([name, l]) => [name, { ref: `ref-${name}`, name, organization: 'acme', organizationId: 'org', deletion: 'delete' as const, management: 'full' as const, origin: 'created' as const, since: 0, labels: l }])),
});

const deletion = (name: string): PlanEntry => ({ id: `Project/${name}`, kind: 'Project', name, action: 'delete', changes: [] });

async function pass(files: Record<string, string>, state: StateStore, clock: ManualClock, entries: PlanEntry[], recorded: Inventory, revision: string) {
  const set = await loadManifests(tree({ 'org.yaml': ORG, ...files }));
  expect(set.errors).toEqual([]);
  const gate = await openRolloutGate({ documents: set.documents, state, revision, clock, log: silentLogger, dryRun: false, health: async () => [], inventory: recorded });
  await gate?.hold(entries, undefined);
  const outcomes = entries.filter((e) => !e.held).map((e) => ({ entryId: e.id, action: e.action, result: 'success' as const }));
  await gate?.record(entries, outcomes as never);
  return gate;
}

describe('rules as last applied', () => {
  it('holds a deletion under a window removed in the same revision, then no longer once a revision without it was applied', async () => {
    const state = memoryState();
    const clock = new ManualClock();
    const recorded = inventory({ t1: { tier: 'tenant' }, t2: { tier: 'tenant' } });
    await pass({ 'r.yaml': rollout(TENANT_NIGHTS), 'p.yaml': project('t1', '{ tier: tenant }') + project('t2', '{ tier: tenant }') }, state, clock, [], recorded, 'r1');

    // One revision narrows the window to another tier and removes t1.
    const narrowed = TENANT_NIGHTS.replace('tier: tenant', 'tier: none');
    let entries = [deletion('t1')];
    await pass({ 'r.yaml': rollout(narrowed), 'p.yaml': project('t2', '{ tier: tenant }') }, state, clock, entries, recorded, 'r2');
    expect(entries[0]!.held?.reason).toBe('window');
    expect(entries[0]!.held?.message).toMatch(/waits for maintenance window tenant-nights .*; the window tenant-nights was loosened in this revision; as last applied it still holds changes of this revision/);

    // The Rollout removed altogether: its window still holds.
    entries = [deletion('t1')];
    await pass({ 'p.yaml': project('t2', '{ tier: tenant }') }, state, clock, entries, recorded, 'r3');
    expect(entries[0]!.held?.message).toMatch(/the Rollout fleet was removed in this revision; its window tenant-nights still holds changes of this revision/);

    // A revision without the Rollout applied whole (t1 is declared again: nothing held) ...
    entries = [];
    await pass({ 'p.yaml': project('t1', '{ tier: tenant }') + project('t2', '{ tier: tenant }') }, state, clock, entries, recorded, 'r4');
    expect(state.data.get('rollout-rules')).toMatchObject({ rules: { revision: 'r4', windows: [], approvals: [] } });
    // ... and the next deletion is not held; no gate opens at all.
    entries = [deletion('t1')];
    const gate = await pass({ 'p.yaml': project('t2', '{ tier: tenant }') }, state, clock, entries, recorded, 'r5');
    expect(gate).toBeUndefined();
    expect(entries[0]!.held).toBeUndefined();
  });

  it('places a removed project in the wave its recorded labels fall in', async () => {
    const state = memoryState();
    const clock = new ManualClock();
    const waves = '  waves:\n    - { name: canary, selector: { labels: { ring: canary } } }\n    - { name: tenants, selector: { labels: { tier: tenant } } }\n';
    const recorded = inventory({ gone: { ring: 'canary' } });
    const files = { 'r.yaml': rollout('', waves), 'p.yaml': project('c', '{ ring: canary }') + project('t', '{ tier: tenant }') + project('o', '{ team: x }') };
    // The canary has a change of its own (not disruptive): the canary wave is being applied, the later ones wait.
    const change: PlanEntry = { id: 'ProjectAuth/c/auth', kind: 'ProjectAuth', project: 'c', name: 'auth', action: 'update', changes: [{ path: 'site_url', before: 'a', after: 'b' }] };
    const entries = [deletion('gone'), deletion('unknown'), change];
    await pass(files, state, clock, entries, recorded, 'r1');
    expect(entries.map((e) => e.wave)).toEqual(['canary', 'after-every-wave', 'canary']);
    expect(entries[0]!.held).toBeUndefined();
    expect(entries[1]!.held?.reason).toBe('wave');
  });
  it('deletes a removed project no wave takes after every wave, never beside the canary', async () => {
    const state = memoryState();
    const clock = new ManualClock();
    // One declared wave and no project left for `rest`: the canary is the last wave.
    const waves = '  waves:\n    - { name: canary, selector: { labels: { ring: canary } } }\n';
    const recorded = inventory({ 'ten-a': { tier: 'tenant' } });
    const files = { 'r.yaml': rollout('', waves), 'p.yaml': project('c', '{ ring: canary }') };
    const change: PlanEntry = { id: 'ProjectAuth/c/auth', kind: 'ProjectAuth', project: 'c', name: 'auth', action: 'update', changes: [{ path: 'site_url', before: 'a', after: 'b' }] };
    const entries = [deletion('ten-a'), change];
    await pass(files, state, clock, entries, recorded, 'r1');
    expect(entries.map((e) => e.wave)).toEqual(['after-every-wave', 'canary']);
    expect(entries[0]!.held).toMatchObject({ reason: 'wave', message: expect.stringContaining('waits for wave canary') });
    expect(entries[1]!.held).toBeUndefined();
  });
});
