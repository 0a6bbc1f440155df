// Fencing of the state directory: each acquisition of the lock takes a generation above every
// earlier one, and once another holder has the lock, this process writes nothing there and
// sends no API write.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { GENERATION_FILE, LOCK_FILE, StateLock, type LockHolder } from '../../src/util/state-lock.js';
import { StateLockLostError, checkFence, removeStateFile, writeStateFile, writeStateJson } from '../../src/util/state-fence.js';
import { openStateStore } from '../../src/reconcile/state.js';
import { ManifestsTreeWriteError, protectManifestsTree } from '../../src/util/manifests-tree.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { reply } from '../api/helpers/fake-transport.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'state-fence-'));
  roots.push(root);
  return join(root, 'state');
}

async function hold(dir: string, clock: ManualClock, lost: Array<LockHolder | undefined> = []): Promise<StateLock> {
  const result = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'test', onLost: (holder) => lost.push(holder) });
  if (!result.acquired) throw new Error('expected the lock');
  return result.lock;
}

/** Another process takes the lock over: its own holding, one generation up. */
async function successor(dir: string, generation: number): Promise<void> {
  await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'other', command: 'successor', startedAt: 'now', heartbeatAt: Date.now(), id: 'successor', generation }));
}

describe('the generation of the state lock', () => {
  it('grows with every acquisition, across a release and across a takeover', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const first = await hold(dir, clock);
    expect(first.generation).toBe(1);
    await first.release();
    const second = await hold(dir, clock);
    expect(second.generation).toBe(2);
    expect(readFileSync(join(dir, GENERATION_FILE), 'utf8').trim()).toBe('2');
    // Left behind by a process that stopped (its heartbeat no longer runs): taken over after the timeout, one generation up.
    await second.release();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 999_999, host: 'elsewhere', command: 'stopped', startedAt: 'then', heartbeatAt: clock.now(), id: 'stopped', generation: 2 }));
    await writeFile(join(dir, GENERATION_FILE), '1\n');
    await clock.advance(9_000);
    const third = await hold(dir, clock);
    expect(third.generation).toBe(3);
    expect((JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder).generation).toBe(3);
    await third.release();
  });
});

describe('fenced writes', () => {
  it('records carry the generation they were written under', async () => {
    const dir = await tempDir();
    const lock = await hold(dir, new ManualClock());
    const state = openStateStore(dir);
    await state.set('inventory', { version: 1 });
    expect(JSON.parse(await readFile(join(dir, 'inventory.json'), 'utf8'))).toEqual({ version: 1, generation: lock.generation });
    await lock.release();
  });

  it('after a takeover: no API write, no write, no removal; the lock is marked lost at once and the holder told', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const lost: Array<LockHolder | undefined> = [];
    const lock = await hold(dir, clock, lost);
    const state = openStateStore(dir);
    await state.set('intents', { projects: { a: {} } });
    const sent: string[] = [];
    const client = await createClient({
      baseUrl: 'http://api.test',
      auth: staticToken('tok'),
      stateDir: dir,
      clock,
      retry: { maxAttempts: 1 },
      transport: {
        send: async (request: { method: string; path: string }) => {
          sent.push(`${request.method} ${request.path}`);
          return reply(200, request.method === 'GET' ? [] : {});
        },
        close: async () => undefined,
      } as never,
    });
    await client.api.listAllProjects();
    const before = readdirSync(dir).sort();
    await successor(dir, lock.generation + 1);

    // The write is refused right before it would be sent.
    await expect(client.api.createAProject({ name: 'x', organization_id: 'o', region: 'eu-west-1', db_pass: 'p' } as never)).rejects.toThrow(/state lock of .* is no longer held/);
    expect(sent).toEqual(['GET /v1/projects']);
    expect(lock.held).toBe(false);
    expect(lock.signal.aborted).toBe(true);
    for (let turn = 0; turn < 10_000 && lost.length === 0; turn++) await new Promise((r) => setImmediate(r));
    expect(lost.map((h) => h?.id)).toEqual(['successor']);

    await expect(state.set('inventory', { version: 1 })).rejects.toBeInstanceOf(StateLockLostError);
    await expect(state.delete('intents')).rejects.toBeInstanceOf(StateLockLostError);
    await expect(writeStateFile(join(dir, 'anything-new'), 'x')).rejects.toBeInstanceOf(StateLockLostError);
    // Closing the client does not write its request window either.
    await client.close().catch(() => undefined);
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('a record written under a newer generation is never overwritten, and reading it tells the holder it lost the lock', async () => {
    const dir = await tempDir();
    const lock = await hold(dir, new ManualClock());
    await writeFile(join(dir, 'inventory.json'), JSON.stringify({ version: 1, generation: lock.generation + 1 }));
    await expect(writeStateJson(join(dir, 'inventory.json'), { version: 1 })).rejects.toBeInstanceOf(StateLockLostError);
    expect(JSON.parse(await readFile(join(dir, 'inventory.json'), 'utf8'))).toEqual({ version: 1, generation: lock.generation + 1 });
    expect(lock.held).toBe(false);

    const dir2 = await tempDir();
    const lock2 = await hold(dir2, new ManualClock());
    await writeFile(join(dir2, 'inventory.json'), JSON.stringify({ version: 1, generation: lock2.generation + 3 }));
    await expect(openStateStore(dir2).get('inventory')).rejects.toBeInstanceOf(StateLockLostError);
    expect(lock2.held).toBe(false);
  });

  it('a released lock writes nothing more; a directory no lock of this process holds is written unfenced', async () => {
    const dir = await tempDir();
    const lock = await hold(dir, new ManualClock());
    await lock.release();
    await expect(writeStateFile(join(dir, 'late'), 'x')).rejects.toBeInstanceOf(StateLockLostError);
    await expect(removeStateFile(join(dir, 'late'))).rejects.toBeInstanceOf(StateLockLostError);
    expect(() => checkFence(dir)).toThrow(StateLockLostError);
    const free = await tempDir();
    await writeStateFile(join(free, 'file'), 'x');
    expect(await readFile(join(free, 'file'), 'utf8')).toBe('x');
  });

  it('a stale holder\'s heartbeat never overwrites its successor\'s lock', async () => {
    const dir = await tempDir();
    const lost: Array<LockHolder | undefined> = [];
    const lock = await hold(dir, new ManualClock(), lost);
    await successor(dir, lock.generation + 1);
    await lock.heartbeat();
    expect((JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder).id).toBe('successor');
    expect(lock.held).toBe(false);
  });
});

describe('the manifests tree', () => {
  it('once protected, nothing is written or removed inside it (a symbolic link into it included), except below a dot-directory and a file the user named as output', async () => {
    const root = await mkdtemp(join(tmpdir(), 'manifests-tree-'));
    roots.push(root);
    const tree = join(root, 'manifests');
    await mkdir(join(tree, 'functions', 'hello'), { recursive: true });
    await symlink(join(tree, 'functions'), join(root, 'link'));
    protectManifestsTree(tree);
    await expect(writeStateFile(join(tree, 'functions', 'hello', 'refresh-token'), 'x')).rejects.toBeInstanceOf(ManifestsTreeWriteError);
    await expect(writeStateFile(join(root, 'link', 'hello', 'refresh-token'), 'x')).rejects.toBeInstanceOf(ManifestsTreeWriteError);
    await expect(removeStateFile(join(tree, 'fleet.yaml'))).rejects.toBeInstanceOf(ManifestsTreeWriteError);
    expect(readdirSync(join(tree, 'functions', 'hello'))).toEqual([]);
    await writeStateFile(join(tree, '.reconcile', 'inventory.json'), '{}');
    await writeStateFile(join(tree, 'plan.json'), '{}', 0o600, { userOutput: true });
    await writeStateFile(join(root, 'outside'), 'x');
    expect(readdirSync(tree).sort()).toEqual(['.reconcile', 'functions', 'plan.json']);
  });
});

describe('every writer of the state directory goes through the fenced primitive', () => {
  const SRC = resolve(new URL('../../src', import.meta.url).pathname);
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  // Writers of files that are not the state directory's: generators of committed files, the
  // export's output, the sandbox's own temporary directory, the emulator, the bench, the chaos suite.
  const ELSEWHERE = new Set([
    'util/state-fence.ts',
    'util/state-lock.ts',
    'api/generate/generate-api.ts',
    'tools/generate-schemas.ts',
    'cli/commands/export.ts',
    'cli/sandbox-session.ts',
    'chaos/run.ts',
  ]);
  it('no other module imports a file-writing function of node:fs', () => {
    const offending = files(SRC)
      .map((file) => relative(SRC, file))
      .filter((file) => !file.startsWith('emulator/') && !file.startsWith('bench/') && !ELSEWHERE.has(file))
      .filter((file) => {
        const text = readFileSync(join(SRC, file), 'utf8');
        return [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'node:fs(?:\/promises)?'/g)].some((m) =>
          /\b(writeFile|writeFileSync|appendFile|appendFileSync|rename|renameSync|unlink|unlinkSync|rm|rmSync|copyFile|createWriteStream|truncate)\b/.test(m[1]!),
        );
      });
    expect(offending).toEqual([]);
  });
});
