import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions, count, createProject, doc, projectDoc, requestsSince, runKinds, scope, startHarness, type Harness } from './harness.js';
import type { AnyDocument, ProjectSpec } from '../../src/manifests/types.js';

describe('Branch kind against the emulator', () => {
  let h: Harness;
  let ref: string;
  const dev = (extra: Record<string, unknown> = {}): AnyDocument =>
    doc('Branch', 'dev', { project: 'shop', git_branch: 'develop', persistent: false, region: 'eu-west-1', desired_instance_size: 'micro', ...extra }, h.root);
  const scopes = (docs: AnyDocument[], spec: Partial<ProjectSpec> = {}) => [scope(projectDoc('shop', ref, h.root, spec), docs)];
  const liveNames = async () => (await h.api.listAllBranches(ref)).filter((b) => !b.is_default).map((b) => b.name).sort();

  beforeAll(async () => {
    h = await startHarness();
    ref = await createProject(h, 'shop');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates a branch with its git branch, persistence, region and size', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([dev()]), { dryRun: false });
    expect(actions(pass.entries)).toEqual({ 'Branch/shop/dev': 'create' });
    expect(pass.outcomes).toMatchObject([{ result: 'success' }]);
    expect(count(requestsSince(h, since), 'POST /v1/projects/{ref}/branches')).toBe(1);
    const live = (await h.api.listAllBranches(ref)).find((b) => b.name === 'dev')!;
    expect(live.git_branch).toBe('develop');
    expect(live.persistent).toBe(false);
  });

  it('a no-change pass is one list', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([dev()]), { dryRun: true });
    expect(actions(pass.entries)).toEqual({ 'Branch/shop/dev': 'noop' });
    expect(requestsSince(h, since)).toEqual(['GET /v1/projects/{ref}/branches']);
  });

  it('sees an out-of-band change and repairs it with PATCH', async () => {
    const id = (await h.api.listAllBranches(ref)).find((b) => b.name === 'dev')!.id;
    await h.api.updateABranchConfig(id, { git_branch: 'hotfix', persistent: true });
    const dry = await runKinds(h, scopes([dev()]), { dryRun: true });
    expect(dry.entries[0]!.changes).toEqual([
      { path: 'git_branch', before: 'hotfix', after: 'develop' },
      { path: 'persistent', before: true, after: false },
    ]);
    const since = h.emulator.requests().length;
    await runKinds(h, scopes([dev()]), { dryRun: false });
    expect(count(requestsSince(h, since), 'PATCH /v1/branches/{branch_id}')).toBe(1);
    const live = (await h.api.listAllBranches(ref)).find((b) => b.name === 'dev')!;
    expect([live.git_branch, live.persistent]).toEqual(['develop', false]);
  });

  it('updates from the manifest', async () => {
    const pass = await runKinds(h, scopes([dev({ persistent: true })]), { dryRun: false });
    expect(pass.entries[0]!.changes.map((c) => c.path)).toEqual(['persistent']);
    expect((await h.api.listAllBranches(ref)).find((b) => b.name === 'dev')!.persistent).toBe(true);
  });

  it('keeps an undeclared branch unless spec.prune.branches is true', async () => {
    await h.api.createABranch(ref, { branch_name: 'stray' });
    const since = h.emulator.requests().length;
    const kept = await runKinds(h, scopes([dev({ persistent: true })]), { dryRun: false });
    expect(kept.entries.map((e) => e.name)).toEqual(['dev']);
    expect(count(requestsSince(h, since), 'DELETE /v1/branches/{branch_id}')).toBe(0);
    expect(await liveNames()).toEqual(['dev', 'stray']);

    const pruned = await runKinds(h, scopes([dev({ persistent: true })], { prune: { branches: true } }), { dryRun: false });
    expect(actions(pruned.entries)).toEqual({ 'Branch/shop/dev': 'noop', 'Branch/shop/stray': 'delete' });
    expect(await liveNames()).toEqual(['dev']);
  });

  it('disables branching only through branching_disabled, as one destructive entry', async () => {
    const dry = await runKinds(h, scopes([], { branching_disabled: true }), { dryRun: true });
    const entry = dry.entries.find((e) => e.name === '(branching)')!;
    expect(entry.action).toBe('delete');
    expect(entry.reason).toMatch(/^DESTRUCTIVE: branching_disabled is true/);
    const since = h.emulator.requests().length;
    await runKinds(h, scopes([], { branching_disabled: true }), { dryRun: false });
    expect(count(requestsSince(h, since), 'DELETE /v1/projects/{ref}/branches')).toBe(1);
    expect(await liveNames()).toEqual([]);
    const after = await runKinds(h, scopes([], { branching_disabled: true }), { dryRun: true });
    expect(actions(after.entries)).toEqual({ 'Branch/shop/(branching)': 'noop' });
  });
});
