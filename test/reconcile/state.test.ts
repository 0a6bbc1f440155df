import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidStateKeyError, openStateStore } from '../../src/reconcile/state.js';
import { IntentLog } from '../../src/reconcile/intents.js';
import { loadInventory, UnsupportedStateError } from '../../src/reconcile/inventory.js';
import { scopedApi } from '../../src/reconcile/scoped-api.js';
import type { ApiRequest, ApiResponse } from '../../src/api/request.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reconcile-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('openStateStore', () => {
  it('lets a burst of writes to one key share the writes still waiting: every call resolves once its value or a later one is on disk', async () => {
    const state = openStateStore(dir);
    const values = Array.from({ length: 50 }, (_, i) => ({ n: i }));
    let settled = 0;
    const writes = values.map((value) => state.set('inventory', value).then(() => {
      settled += 1;
    }));
    await writes[0];
    // The first write was on its way: at most it and one shared write are done by then.
    await Promise.all(writes);
    expect(settled).toBe(50);
    expect(JSON.parse(await readFile(join(dir, 'inventory.json'), 'utf8'))).toMatchObject({ n: 49 });
    // A set after a delete writes after it: the removal never takes the newer value with it.
    const removed = state.delete('inventory');
    const rewritten = state.set('inventory', { n: 50 });
    await Promise.all([removed, rewritten]);
    expect(await state.get('inventory')).toMatchObject({ n: 50 });
  });

  it('round-trips JSON values by key, nested keys included, and leaves no temporary file', async () => {
    const state = openStateStore(dir);
    await state.set('inventory', { a: 1 });
    await state.set('functions/abc/slug', { digest: 'd' });
    expect(await state.get('inventory')).toEqual({ a: 1 });
    expect(await state.get('functions/abc/slug')).toEqual({ digest: 'd' });
    expect(await state.get('missing')).toBeUndefined();
    const files = await readdir(dir, { recursive: true });
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await state.delete('inventory');
    expect(await state.get('inventory')).toBeUndefined();
    await state.delete('inventory');
  });

  it('keeps the last of concurrent writes to one key', async () => {
    const state = openStateStore(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => state.set('k', { i })));
    expect(await state.get('k')).toEqual({ i: 19 });
  });

  it('refuses keys that could escape the directory', () => {
    const state = openStateStore(dir);
    for (const key of ['../x', 'a/../../b', '/abs', '', 'a//b', '.hidden']) {
      expect(() => state.set(key, 1)).toThrow(InvalidStateKeyError);
    }
    expect(() => openStateStore('')).toThrow('Expected `stateDir` to be a non-empty string, got `` (string)');
  });
});

describe('IntentLog', () => {
  it('is on disk as soon as recording returns, and survives a reopen (a crash)', async () => {
    const state = openStateStore(dir);
    const intents = await IntentLog.open(state);
    await intents.recordProject('shop', { name: 'shop', organizationId: 'org', region: 'eu-west-1', sentAt: 5 });
    const onDisk = JSON.parse(await readFile(join(dir, 'intents.json'), 'utf8'));
    expect(onDisk.projects.shop).toEqual({ name: 'shop', organizationId: 'org', region: 'eu-west-1', sentAt: 5 });
    const reopened = await IntentLog.open(openStateStore(dir));
    expect(reopened.project('shop')?.organizationId).toBe('org');
    await reopened.clearProject('shop');
    expect((await IntentLog.open(openStateStore(dir))).pendingProjects()).toEqual([]);
  });

  it('writes changes made while a write is on its way together, and each is on disk when its call returns', async () => {
    const store = openStateStore(dir);
    const written: unknown[] = [];
    const state = { ...store, set: async (key: string, value: unknown) => (written.push(value), store.set(key, value)) };
    const intents = await IntentLog.open(state);
    const names = Array.from({ length: 20 }, (_, i) => `p${i}`);
    await Promise.all(
      names.map(async (name) => {
        await intents.recordProject(name, { name, organizationId: 'org', region: 'eu-west-1', sentAt: 1 });
        const onDisk = JSON.parse(await readFile(join(dir, 'intents.json'), 'utf8'));
        expect(onDisk.projects[name]).toBeDefined();
      }),
    );
    // The first write, then one for everything recorded while it was on its way.
    expect(written.length).toBeLessThanOrEqual(3);
    expect(Object.keys((await IntentLog.open(openStateStore(dir))).pendingProjects())).toHaveLength(20);
  });
});

describe('loadInventory', () => {
  it('starts empty and refuses a state file of another version', async () => {
    expect((await loadInventory(openStateStore(dir))).projects).toEqual({});
    await writeFile(join(dir, 'inventory.json'), JSON.stringify({ version: 99 }));
    await expect(loadInventory(openStateStore(dir))).rejects.toThrow(UnsupportedStateError);
  });

  it('reads labels that are not a mapping of strings as unknown (as a record from before labels), never as labels', async () => {
    const record = (labels: unknown) => ({ ref: 'abcdefghijklmnopqrst', name: 'p', organization: 'o', deletion: 'delete', labels });
    await writeFile(
      join(dir, 'inventory.json'),
      JSON.stringify({ version: 1, projects: { a: record({ plan: ['enterprise'] }), b: record('plan=enterprise'), c: record(null), d: record({ plan: 'enterprise' }), e: record({}) } }),
    );
    const { projects } = await loadInventory(openStateStore(dir));
    expect(Object.fromEntries(Object.entries(projects).map(([name, p]) => [name, p.labels]))).toEqual({ a: undefined, b: undefined, c: undefined, d: { plan: 'enterprise' }, e: {} });
  });
});

describe('scopedApi', () => {
  it('gives reads the pass priority, writes `write`, and every call the project and signal, unless the caller set them', async () => {
    const seen: ApiRequest[] = [];
    const caller = { call: async <T>(request: ApiRequest) => (seen.push(request), { status: 200, headers: {}, body: [] as T } as ApiResponse<T>) };
    const tally = { total: 0, byMethod: {} as Record<string, number> };
    const signal = new AbortController().signal;
    const api = scopedApi(caller, { readPriority: 'drift', project: 'shop', signal }, tally);
    await api.listAllSecrets('ref1');
    await api.bulkDeleteSecrets('ref1', ['A']);
    await api.getAuthServiceConfig('ref1', { priority: 'write', project: 'other' });
    expect(seen.map((r) => [r.method, r.priority, r.project, r.signal === signal])).toEqual([
      ['GET', 'drift', 'shop', true],
      ['DELETE', 'write', 'shop', true],
      ['GET', 'write', 'other', true],
    ]);
    expect(tally).toEqual({ total: 3, byMethod: { GET: 2, DELETE: 1 } });
  });
});
