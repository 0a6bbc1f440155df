import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { actions, count, createProject, doc, projectDoc, requestsSince, runKinds, scope, startHarness, type Harness } from './harness.js';
import type { AnyDocument, ProjectSpec } from '../../src/manifests/types.js';

const LIST = 'GET /v1/projects/{ref}/functions';
const BODY = 'GET /v1/projects/{ref}/functions/{function_slug}/body';
const ONE = 'GET /v1/projects/{ref}/functions/{function_slug}';
const DEPLOY = 'POST /v1/projects/{ref}/functions/deploy';
const DELETE = 'DELETE /v1/projects/{ref}/functions/{function_slug}';

async function writeFunction(root: string, slug: string, text: string): Promise<void> {
  await mkdir(join(root, 'functions', slug, 'lib'), { recursive: true });
  await writeFile(join(root, 'functions', slug, 'index.ts'), `import { msg } from './lib/msg.ts';\nDeno.serve(() => new Response(msg));\n`);
  await writeFile(join(root, 'functions', slug, 'lib', 'msg.ts'), `export const msg = ${JSON.stringify(text)};\n`);
}

function outOfBandForm(text: string): FormData {
  const form = new FormData();
  form.append('metadata', JSON.stringify({ entrypoint_path: 'index.ts', verify_jwt: false, name: 'hello' }));
  form.append('file', new Blob([`Deno.serve(() => new Response(${JSON.stringify(text)}));\n`]), 'index.ts');
  return form;
}

describe('Function kind against the emulator', () => {
  let h: Harness;
  let ref: string;
  const fnDoc = (slug: string, extra: Record<string, unknown> = {}): AnyDocument =>
    doc('Function', slug, { project: 'shop', source: `functions/${slug}`, entrypoint: 'index.ts', verify_jwt: false, ...extra }, h.root);
  const scopes = (docs: AnyDocument[], spec: Partial<ProjectSpec> = {}) => [scope(projectDoc('shop', ref, h.root, spec), docs)];

  beforeAll(async () => {
    h = await startHarness();
    ref = await createProject(h, 'shop');
    await writeFunction(h.root, 'hello', 'hello v1');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates a function through the multipart deploy endpoint, never the deprecated create', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: false });
    expect(actions(pass.entries)).toEqual({ 'Function/shop/hello': 'create' });
    expect(pass.outcomes).toMatchObject([{ result: 'success' }]);
    const sent = requestsSince(h, since);
    expect(count(sent, DEPLOY)).toBe(1);
    expect(count(sent, 'POST /v1/projects/{ref}/functions')).toBe(0);
    const live = await h.api.listAllFunctions(ref);
    expect(live.map((f) => [f.slug, f.verify_jwt])).toEqual([['hello', false]]);
  });

  it('a no-change pass reads the list only: no body, no per-function read', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(actions(pass.entries)).toEqual({ 'Function/shop/hello': 'noop' });
    expect(requestsSince(h, since)).toEqual([LIST]);
  });

  it('without state, reads the body once, finds it equal, and remembers it', async () => {
    await rm(join(h.stateDir, 'functions'), { recursive: true, force: true });
    let since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(actions(pass.entries)).toEqual({ 'Function/shop/hello': 'noop' });
    expect(requestsSince(h, since)).toEqual([LIST, BODY]);
    since = h.emulator.requests().length;
    await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(requestsSince(h, since)).toEqual([LIST]);
  });

  it('sees a deploy made out of band (sources) and a verify_jwt change', async () => {
    await h.api.deployAFunction(ref, outOfBandForm('changed by hand'), { query: { slug: 'hello' } });
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    const entry = pass.entries.find((e) => e.id === 'Function/shop/hello')!;
    expect(entry.action).toBe('update');
    expect(entry.changes.map((c) => c.path)).toEqual(['sources']);
    const drifted = await runKinds(h, scopes([fnDoc('hello', { verify_jwt: true })]), { dryRun: true });
    expect(drifted.entries[0]!.changes.map((c) => c.path).sort()).toEqual(['sources', 'verify_jwt']);
  });

  it('sees metadata changed by a bulk update that keeps the version (verify_jwt, entrypoint)', async () => {
    const current = (await h.api.listAllFunctions(ref)).find((f) => f.slug === 'hello')!;
    await h.api.bulkUpdateFunctions(ref, [{ id: current.id, slug: 'hello', name: current.name, status: 'ACTIVE', version: current.version, verify_jwt: true, entrypoint_path: 'lib/msg.ts' }]);
    const after = (await h.api.listAllFunctions(ref)).find((f) => f.slug === 'hello')!;
    expect(after.version).toBe(current.version);
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(pass.entries[0]!.changes.map((c) => c.path).sort()).toEqual(['entrypoint_path', 'sources', 'verify_jwt']);
  });

  it('repairs it with exactly one deploy, after which the pass is clean', async () => {
    let since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: false });
    expect(pass.outcomes).toMatchObject([{ result: 'success', action: 'update' }]);
    expect(count(requestsSince(h, since), DEPLOY)).toBe(1);
    since = h.emulator.requests().length;
    const again = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(actions(again.entries)).toEqual({ 'Function/shop/hello': 'noop' });
    expect(requestsSince(h, since)).toEqual([LIST]);
  });

  it('a source change in git deploys the function again', async () => {
    await writeFunction(h.root, 'hello', 'hello v2');
    const dry = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: true });
    expect(dry.entries[0]!.changes.map((c) => c.path)).toEqual(['sources']);
    const since = h.emulator.requests().length;
    await runKinds(h, scopes([fnDoc('hello')]), { dryRun: false });
    const sent = requestsSince(h, since);
    expect(count(sent, DEPLOY)).toBe(1);
    expect(count(sent, BODY) + count(sent, ONE)).toBe(0);
    const body = await h.api.getAFunctionBody(ref, 'hello', { headers: { accept: 'multipart/form-data' } });
    expect(new TextDecoder().decode((body as { bytes: Uint8Array }).bytes)).toContain('hello v2');
  });

  it('keeps a function absent from the manifests unless spec.prune.functions is true', async () => {
    await h.api.deployAFunction(ref, outOfBandForm('stray'), { query: { slug: 'stray' } });
    const since = h.emulator.requests().length;
    const kept = await runKinds(h, scopes([fnDoc('hello')]), { dryRun: false });
    expect(kept.entries.map((e) => e.name)).toEqual(['hello']);
    expect(count(requestsSince(h, since), DELETE)).toBe(0);
    expect((await h.api.listAllFunctions(ref)).map((f) => f.slug).sort()).toEqual(['hello', 'stray']);

    const pruned = await runKinds(h, scopes([fnDoc('hello')], { prune: { functions: true } }), { dryRun: false });
    expect(actions(pruned.entries)).toEqual({ 'Function/shop/hello': 'noop', 'Function/shop/stray': 'delete' });
    expect((await h.api.listAllFunctions(ref)).map((f) => f.slug)).toEqual(['hello']);
  });

  it('under policy.management: observe, a drifted function is reported and not deployed', async () => {
    await h.api.deployAFunction(ref, outOfBandForm('observed drift'), { query: { slug: 'hello' } });
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello', { policy: { management: 'observe' } })]), { dryRun: false });
    expect(pass.entries[0]).toMatchObject({ action: 'update', observeOnly: true });
    expect(count(requestsSince(h, since), DEPLOY)).toBe(0);
    await runKinds(h, scopes([fnDoc('hello')]), { dryRun: false }); // back in sync for the next tests
  });

  it('never prunes a suspended function', async () => {
    const docs = [fnDoc('hello', { policy: { suspend: true } })];
    const pass = await runKinds(h, scopes(docs, { prune: { functions: true } }), { dryRun: true });
    expect(pass.entries).toEqual([]);
  });

  it('deploys a function with an import map, static patterns and a 3 MiB asset (streamed), then sees it unchanged', async () => {
    const dir = join(h.root, 'functions', 'assets');
    await mkdir(join(dir, 'static'), { recursive: true });
    await writeFile(join(dir, 'index.ts'), 'import { x } from "lib";\nDeno.serve(() => new Response(x));\n');
    await writeFile(join(dir, 'import_map.json'), '{"imports":{"lib":"./lib.ts"}}');
    await writeFile(join(dir, 'lib.ts'), 'export const x = 1;\n');
    await writeFile(join(dir, 'static', 'big.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
    const assets = fnDoc('assets', { import_map: 'import_map.json', static_patterns: ['static/*'] });
    const pass = await runKinds(h, scopes([fnDoc('hello'), assets]), { dryRun: false });
    expect(pass.outcomes).toMatchObject([{ entryId: 'Function/shop/assets', result: 'success' }]);
    const live = (await h.api.listAllFunctions(ref)).find((f) => f.slug === 'assets')!;
    expect(live.import_map_path).toBe('import_map.json');
    const since = h.emulator.requests().length;
    const again = await runKinds(h, scopes([fnDoc('hello'), assets]), { dryRun: true });
    expect(again.entries.map((e) => e.action)).toEqual(['noop', 'noop']);
    expect(requestsSince(h, since)).toEqual([LIST]);
    // A changed static pattern is a change of what is deployed, even with the same files.
    const changed = await runKinds(h, scopes([fnDoc('hello'), fnDoc('assets', { import_map: 'import_map.json', static_patterns: ['static/**'] })]), { dryRun: true });
    expect(changed.entries.find((e) => e.name === 'assets')!.changes.map((c) => c.path)).toEqual(['metadata']);
  });

  it('refuses sources past the size cap with an error naming the function and the file', async () => {
    await writeFunction(h.root, 'huge', 'x');
    await writeFile(join(h.root, 'functions', 'huge', 'blob.bin'), '');
    await truncate(join(h.root, 'functions', 'huge', 'blob.bin'), 21 * 1024 * 1024);
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([fnDoc('hello'), fnDoc('huge')]), { dryRun: false });
    const huge = pass.entries.find((e) => e.name === 'huge')!;
    expect(huge.action).toBe('blocked');
    expect(huge.reason).toBe('Function `huge`: sources exceed the limit of 20 MiB per function at file `blob.bin`');
    expect(count(requestsSince(h, since), DEPLOY)).toBe(0);
  });
});
