import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { LOCK_FILE, StateLock, StateLockHeldError, processStartTime, type LockHolder } from '../../src/util/state-lock.js';

/** Waits (on I/O turns, not time) until the lock file shows a heartbeat at `at`. */
async function heartbeatWritten(dir: string, at: number): Promise<void> {
  for (let turn = 0; turn < 1_000_000; turn++) {
    const text = await readFile(join(dir, LOCK_FILE), 'utf8').catch(() => '{}');
    if ((JSON.parse(text) as Partial<LockHolder>).heartbeatAt === at) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`no heartbeat at ${at}`);
}

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'state-lock-'));
  roots.push(root);
  return join(root, 'state');
}

describe('StateLock', () => {
  it('lets one holder in and tells the second who holds it', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const first = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile --watch' });
    expect(first.acquired).toBe(true);
    const second = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' });
    expect(second.acquired).toBe(false);
    if (second.acquired) return;
    expect(second.holder).toMatchObject({ pid: process.pid, command: 'reconcile --watch' });
    expect(new StateLockHeldError(dir, second.holder, clock.now()).message).toMatch(new RegExp(`locked by pid ${process.pid} on .* \\(reconcile --watch\\)`));
    if (first.acquired) await first.lock.release();
    expect((await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' })).acquired).toBe(true);
  });

  it('keeps a live holder fresh with its heartbeat on the injected clock', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const first = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'a' });
    for (let i = 0; i < 10; i++) {
      await clock.advance(2_000);
      await heartbeatWritten(dir, clock.now());
    }
    const second = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'b' });
    expect(second.acquired).toBe(false);
    if (first.acquired) await first.lock.release();
  });

  it('takes over a lock whose heartbeat is older than the timeout, and the old holder learns it lost it', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const result = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'old' });
    if (!result.acquired) throw new Error('expected the lock');
    const old = result.lock;
    // The old holder stops beating (a killed process, a paused VM): its heartbeat is cancelled.
    await old.release();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 999_999, host: 'elsewhere', command: 'old', startedAt: 'then', heartbeatAt: clock.now(), id: 'dead' }));
    await clock.advance(8_000);
    expect((await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'new' })).acquired).toBe(false);
    await clock.advance(1);
    const taken = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'new' });
    expect(taken.acquired).toBe(true);
    const content = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder;
    expect(content.command).toBe('new');
    if (taken.acquired) await taken.lock.release();
  });

  it('takes at once a lock of this host whose process is gone (no such pid), however fresh its heartbeat', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    // A process that ran and exited: its pid names no process now.
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(exited.stdout);
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, host: hostname(), command: 'reconcile', startedAt: 'then', heartbeatAt: clock.now(), id: 'gone', generation: 4, processStart: '1' }));
    const taken = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'new' });
    expect(taken.acquired).toBe(true);
    if (!taken.acquired) return;
    expect(taken.tookOver).toMatchObject({ pid, id: 'gone' });
    expect(taken.lock.generation).toBe(5);
    await taken.lock.release();
  });

  it('takes at once a lock whose pid was reused by a later process (another start time), and keeps a live holder\'s', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    const ownStart = processStartTime(process.pid);
    expect(ownStart).toMatch(/^\d+$/);
    // The parent of this process is alive; with its real start time the lock is held, with another it is not.
    const parent = process.ppid;
    const live = { pid: parent, host: hostname(), command: 'reconcile', startedAt: 'then', heartbeatAt: clock.now(), id: 'live', generation: 1, processStart: processStartTime(parent) };
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(live));
    expect((await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'new' })).acquired).toBe(false);
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ ...live, id: 'reused', processStart: String(Number(live.processStart) + 1) }));
    const taken = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'new' });
    expect(taken.acquired).toBe(true);
    if (taken.acquired) await taken.lock.release();
    // A holder on another host is judged by its heartbeat only.
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ ...live, host: `${hostname()}-other`, pid: 999_999_999, id: 'remote' }));
    expect((await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'new' })).acquired).toBe(false);
  });

  it('a holder presumed dead stops as soon as its heartbeat finds a successor', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const lost: Array<LockHolder | undefined> = [];
    const first = await StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: 'paused', onLost: (holder) => lost.push(holder) });
    if (!first.acquired) throw new Error('expected the lock');
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'other', command: 'successor', startedAt: 'now', heartbeatAt: clock.now(), id: 'successor' }));
    await first.lock.heartbeat();
    expect(first.lock.held).toBe(false);
    expect(lost.map((h) => h?.command)).toEqual(['successor']);
    await first.lock.release();
    // The successor's lock is left alone.
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).id).toBe('successor');
  });

  it('of several processes racing for a free lock, exactly one wins', async () => {
    const dir = await tempDir();
    const clock = new ManualClock();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => StateLock.acquire({ dir, clock, timeoutMs: 8_000, command: `p${i}` })));
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
    for (const r of results) if (r.acquired) await r.lock.release();
  });
});
