// The request window keeps reaching the disk when its directory disappears under it: the
// writer creates the directory before each write, and its writes never overlap.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { loadWindow, WindowWriter, WINDOW_FILE, type PersistedWindow } from '../../src/api/window-store.js';
import { fakeTransport, reply, track } from './helpers/fake-transport.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function runUntil(clock: ManualClock, done: () => boolean): Promise<void> {
  while (!done()) {
    const next = clock.nextAt();
    if (next === undefined) await new Promise<void>((resolve) => setImmediate(resolve));
    else await clock.advance(Math.max(0, next - clock.now()));
  }
}

describe('window store', () => {
  it('a persist and a close after the state directory was removed write it again instead of failing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'window-store-'));
    dirs.push(root);
    const stateDir = join(root, '.state');
    const clock = new ManualClock();
    const fake = fakeTransport(clock, { latencyMs: 5 });
    fake.setDefault(reply(200, []));
    const errors: unknown[] = [];
    const log = { error: (fields: unknown) => errors.push(fields), warn: () => undefined, info: () => undefined, debug: () => undefined, trace: () => undefined, fatal: () => undefined, child: () => log } as never;
    const client = await createClient({ baseUrl: 'http://api.test', auth: staticToken('tok'), clock, transport: fake.transport, rate: { limit: 20, windowMs: 60_000 }, stateDir, log });
    const first = [1, 2, 3].map(() => track(client.api.listAllProjects()));
    await runUntil(clock, () => first.every((c) => c.settled));
    await rm(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 1 });
    const second = [1, 2, 3].map(() => track(client.api.listAllProjects()));
    await runUntil(clock, () => second.every((c) => c.settled));
    // The debounced write of the send times, then the final one.
    await clock.advance(1_000);
    await rm(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 1 });
    await client.close();
    expect([...first, ...second].map((c) => c.error)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(errors).toEqual([]);
    const saved = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
    expect(saved.sends).toHaveLength(6);
    expect(await readdir(stateDir)).toEqual([WINDOW_FILE]);
  });

  it('writes never overlap, and each write survives the directory vanishing between writes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'window-store-'));
    dirs.push(root);
    const stateDir = join(root, 'state');
    const clock = new ManualClock();
    let sends: number[] = [];
    const errors: unknown[] = [];
    const writer = new WindowWriter({
      stateDir,
      clock,
      debounceMs: 10,
      claimCount: 2,
      claimMs: 50,
      snapshot: () => ({ version: 1, windowMs: 1_000, sends, blockedUntil: 0 }),
      onError: (error) => errors.push(error),
    });
    for (let i = 0; i < 20; i++) {
      sends = [...sends, clock.now()];
      writer.changed();
      const claim = writer.beforeSend(clock.now());
      if (i % 3 === 0) await rm(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 1 });
      await Promise.all([claim, writer.flush()]);
      await clock.advance(5);
    }
    await writer.flush({ final: true });
    expect(errors).toEqual([]);
    const saved = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
    expect(saved.sends).toEqual(sends);
    expect(saved.claim).toBeUndefined();
    expect(await readdir(stateDir)).toEqual([WINDOW_FILE]);
  });

  it('two clients of one state directory at once (a daemon and a dry run) merge their parts: the file counts both, neither twice', async () => {
    const root = await mkdtemp(join(tmpdir(), 'window-store-'));
    dirs.push(root);
    const stateDir = join(root, '.state');
    const clock = new ManualClock();
    const writer = (sends: () => number[], loaded: number[] = []) =>
      new WindowWriter({ stateDir, clock, debounceMs: 10, claimCount: 2, claimMs: 10, snapshot: () => ({ version: 1, windowMs: 60_000, sends: sends(), blockedUntil: 0 }), loaded, onError: () => undefined });
    const daemonSends = [clock.now() + 1, clock.now() + 2];
    const daemon = writer(() => daemonSends);
    daemon.changed();
    await daemon.flush({ final: true });
    // The dry run starts from the daemon's window (it counts those sends too), then sends one of its own.
    const dryLoaded = [...daemonSends];
    const drySends = [...dryLoaded, clock.now() + 3];
    const dry = writer(() => drySends, dryLoaded);
    dry.changed();
    await dry.flush({ final: true });
    // The daemon writes again, with one more send: the dry run's part stays.
    daemonSends.push(clock.now() + 4);
    daemon.changed();
    await daemon.flush({ final: true });
    const file = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
    expect(file.sends).toEqual([clock.now() + 1, clock.now() + 2, clock.now() + 3, clock.now() + 4]);
    expect(Object.values(file.writers!).map((part) => part.sends.length).sort()).toEqual([1, 3]);
    // The window's own lock is released after each write.
    expect(await readdir(stateDir)).not.toContain('request-window.lock');
  });
  it("another writer's claim that ended inside the window is kept as sends at its end when a second client merges the file", async () => {
    const root = await mkdtemp(join(tmpdir(), 'window-store-'));
    dirs.push(root);
    const stateDir = join(root, '.state');
    const clock = new ManualClock();
    const writer = (sends: () => number[]) =>
      new WindowWriter({ stateDir, clock, debounceMs: 10, claimCount: 2, claimMs: 10, snapshot: () => ({ version: 1, windowMs: 60_000, sends: sends(), blockedUntil: 0 }), onError: () => undefined });
    // The daemon claims two places and sends; their times would go with its next claim.
    const daemon = writer(() => []);
    await daemon.beforeSend(clock.now());
    daemon.sent();
    daemon.sent();
    const claimedUntil = clock.now() + 10;
    await clock.advance(20);
    // A dry run writes its part after the claim ended: the daemon's two sends still count.
    const dry = writer(() => [clock.now()]);
    dry.changed();
    await dry.flush({ final: true });
    const file = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
    expect(file.sends).toEqual([claimedUntil, claimedUntil, clock.now()]);
  });

  it('claims hold longer while their places go mostly unused (up to the longest allowed), and as long as at first once one is mostly used; the file always accounts for every send', async () => {
    const root = await mkdtemp(join(tmpdir(), 'window-store-'));
    dirs.push(root);
    const stateDir = join(root, 'state');
    const clock = new ManualClock();
    const sends: number[] = [];
    const errors: unknown[] = [];
    const writer = new WindowWriter({
      stateDir,
      clock,
      debounceMs: 10,
      claimCount: 10,
      claimMs: 50,
      maxClaimMs: 400,
      snapshot: () => ({ version: 1, windowMs: 1_000, sends: [...sends], blockedUntil: 0 }),
      onError: (error) => errors.push(error),
    });
    const claimHolds: number[] = [];
    // Sends `count` requests at the current time, each only once the file accounts for it.
    const send = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const waited = writer.beforeSend(clock.now());
        if (waited) {
          await waited;
          // A claim was written: how long it holds, as the file says.
          const file = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
          claimHolds.push(file.claim!.until - clock.now());
        }
        expect(writer.beforeSend(clock.now())).toBeUndefined();
        sends.push(clock.now());
        writer.sent();
        // Write-ahead: a process killed now restarts counting at least every send made so far.
        expect((await loadWindow(stateDir)).sends.length).toBeGreaterThanOrEqual(sends.length);
      }
    };
    // One send per claim: each claim ends by time with 9 of its 10 places unused.
    for (let round = 0; round < 6; round++) {
      await send(1);
      await clock.advance(claimHolds[claimHolds.length - 1]! + 1);
    }
    expect(claimHolds).toEqual([50, 100, 200, 400, 400, 400]);
    // A claim used more than half: the next one holds as long as the first.
    await send(1);
    await send(5);
    await clock.advance(401);
    await send(1);
    expect(claimHolds.slice(6)).toEqual([400, 50]);
    // A claim that runs out of places is followed at once by a claim as long as the first.
    await send(10);
    expect(claimHolds.slice(8)).toEqual([50]);
    await writer.flush({ final: true });
    expect(errors).toEqual([]);
    const saved = JSON.parse(await readFile(join(stateDir, WINDOW_FILE), 'utf8')) as PersistedWindow;
    expect(saved.sends).toEqual(sends);
    expect(saved.claim).toBeUndefined();
  });
});
