import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { actions, count, createProject, doc, projectDoc, requestsSince, runKinds, scope, startHarness, type Harness } from './harness.js';
import { sha256Hex } from '../../src/reconcile/kinds/common.js';
import type { AnyDocument } from '../../src/manifests/types.js';

const CANARY_A = 'canary-secret-A-7f3e9b1c5d';
const CANARY_B = 'canary-secret-B-2a8c4e6f0b';
const CANARY_A2 = 'canary-secret-A2-9d1b3f5a7c';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return out;
}

describe('Secrets kind against the emulator', () => {
  let h: Harness;
  let ref: string;
  const secretsDoc = (prune?: boolean): AnyDocument =>
    doc('Secrets', 'shop-secrets', { project: 'shop', values: { A: { valueFrom: { env: 'S_A' } }, B: { valueFrom: { env: 'S_B' } } }, ...(prune !== undefined ? { prune } : {}) }, h.root);
  const scopes = (prune?: boolean) => [scope(projectDoc('shop', ref, h.root), [secretsDoc(prune)])];
  const outputs: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    ref = await createProject(h, 'shop');
    h.env.S_A = CANARY_A;
    h.env.S_B = CANARY_B;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates every secret with one bulk POST', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes(), { dryRun: false });
    outputs.push(JSON.stringify(pass));
    expect(actions(pass.entries)).toEqual({ 'Secret/shop/A': 'create', 'Secret/shop/B': 'create' });
    expect(pass.outcomes.every((o) => o.result === 'success')).toBe(true);
    const sent = requestsSince(h, since);
    expect(count(sent, 'POST /v1/projects/{ref}/secrets')).toBe(1);
    const live = await h.api.listAllSecrets(ref);
    expect(live.find((s) => s.name === 'A')!.value).toBe(sha256Hex(CANARY_A));
  });

  it('a no-change pass reads one list and plans nothing', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes(), { dryRun: true });
    outputs.push(JSON.stringify(pass));
    expect(actions(pass.entries)).toEqual({ 'Secret/shop/A': 'noop', 'Secret/shop/B': 'noop' });
    expect(requestsSince(h, since)).toEqual(['GET /v1/projects/{ref}/secrets']);
  });

  it('sees a value changed out of band, as a sensitive change', async () => {
    await h.api.bulkCreateSecrets(ref, [{ name: 'A', value: 'changed-by-hand' }, { name: 'STRAY', value: 'x' }]);
    const pass = await runKinds(h, scopes(), { dryRun: true });
    outputs.push(JSON.stringify(pass));
    expect(actions(pass.entries)).toEqual({ 'Secret/shop/A': 'update', 'Secret/shop/B': 'noop' });
    expect(pass.entries.find((e) => e.name === 'A')!.changes).toEqual([{ path: 'value', sensitive: true }]);
  });

  it('updates a changed value with one POST and keeps unlisted secrets without prune', async () => {
    h.env.S_A = CANARY_A2;
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes(), { dryRun: false });
    outputs.push(JSON.stringify(pass));
    expect(actions(pass.entries)).toEqual({ 'Secret/shop/A': 'update', 'Secret/shop/B': 'noop' });
    const sent = requestsSince(h, since);
    expect(count(sent, 'POST /v1/projects/{ref}/secrets')).toBe(1);
    expect(count(sent, 'DELETE /v1/projects/{ref}/secrets')).toBe(0);
    const live = await h.api.listAllSecrets(ref);
    expect(live.find((s) => s.name === 'A')!.value).toBe(sha256Hex(CANARY_A2));
    expect(live.some((s) => s.name === 'STRAY')).toBe(true);
  });

  it('with prune: true deletes unlisted secrets in one bulk DELETE', async () => {
    const dry = await runKinds(h, scopes(true), { dryRun: true });
    expect(dry.entries.find((e) => e.name === 'STRAY')!.action).toBe('delete');
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes(true), { dryRun: false });
    outputs.push(JSON.stringify(pass));
    expect(count(requestsSince(h, since), 'DELETE /v1/projects/{ref}/secrets')).toBe(1);
    const live = await h.api.listAllSecrets(ref);
    expect(live.map((s) => s.name)).not.toContain('STRAY');
    const after = await runKinds(h, scopes(true), { dryRun: true });
    expect(after.entries.every((e) => e.action === 'noop')).toBe(true);
  });

  it('a reference that does not resolve blocks that secret only, naming the reference', async () => {
    const docs = [doc('Secrets', 'shop-secrets', { project: 'shop', values: { A: { valueFrom: { env: 'S_A' } }, M: { valueFrom: { env: 'MISSING_VAR' } } } }, h.root)];
    const pass = await runKinds(h, [scope(projectDoc('shop', ref, h.root), docs)], { dryRun: true });
    const m = pass.entries.find((e) => e.name === 'M')!;
    expect(m.action).toBe('blocked');
    expect(m.reason).toContain('MISSING_VAR');
    expect(pass.entries.find((e) => e.name === 'A')!.action).toBe('noop');
  });

  it('under policy.management: observe, drift is reported and nothing is written', async () => {
    await h.api.bulkCreateSecrets(ref, [{ name: 'B', value: 'edited-again' }]);
    const observed = doc('Secrets', 'shop-secrets', { project: 'shop', values: { A: { valueFrom: { env: 'S_A' } }, B: { valueFrom: { env: 'S_B' } } }, policy: { management: 'observe' } }, h.root);
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, [scope(projectDoc('shop', ref, h.root), [observed])], { dryRun: false });
    outputs.push(JSON.stringify(pass));
    const b = pass.entries.find((e) => e.name === 'B')!;
    expect([b.action, b.observeOnly]).toEqual(['update', true]);
    expect(pass.outcomes).toEqual([]);
    expect(requestsSince(h, since)).toEqual(['GET /v1/projects/{ref}/secrets']);
  });

  it('no canary value appears in plans, outcomes, logs or the state directory', async () => {
    const everything = [...outputs, ...h.log.lines, ...(await filesUnder(h.stateDir).catch(() => []))].join('\n');
    for (const canary of [CANARY_A, CANARY_B, CANARY_A2]) {
      expect(everything).not.toContain(canary);
      expect(everything).not.toContain(sha256Hex(canary));
    }
  });
});
