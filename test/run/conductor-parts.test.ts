// The conductor's parts on their own: the status record's one writer, the state lock for a
// one-shot run (tried once) and for the daemon (waited for), and the session opened under it
// (nothing left open or held when it is refused or fails).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import type { Logger } from '../../src/util/logger.js';
import { protectManifestsTree } from '../../src/util/manifests-tree.js';
import { StateLock } from '../../src/util/state-lock.js';
import { STATUS_FILE, readStatusRecord, writeStatusRecord } from '../../src/status/status-file.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import { StatusRecorder } from '../../src/run/status-recorder.js';
import { takeStateLock } from '../../src/run/state-lock.js';
import { openHeldSession, type PassSession, type SessionRequest } from '../../src/run/session.js';
import { passResult } from '../daemon/fixtures.js';

interface Line {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

/** A logger that keeps its lines, with their level. */
function linesLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, fields, msg });
  };
  const log = { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') };
  return log as unknown as Logger & { lines: Line[] };
}

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  roots.push(root);
  return root;
}

/** Waits (on I/O turns, not time) until `check` holds. */
async function until(check: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100_000 && !check(); turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

describe('the status record has one writer', () => {
  it('starts from the record the state directory holds and folds a pass into it', async () => {
    const dir = await tempDir('recorder-');
    await writeStatusRecord(dir, foldPass(emptyStatusRecord(), passResult({ revision: 'r1' }), {}, Date.UTC(2026, 0, 1)));
    const recorder = new StatusRecorder({ stateDir: dir, clock: new ManualClock(Date.UTC(2026, 0, 2)), log: linesLogger() });
    await recorder.load();
    expect(Object.keys(recorder.record().projects).sort()).toEqual(['blog', 'shop']);
    recorder.recordPass(passResult({ revision: 'r2' }), { newestCheckout: true });
    await recorder.flush();
    expect(await readStatusRecord(dir)).toEqual(recorder.record());
    expect(recorder.record().updatedAt).toBe(Date.UTC(2026, 0, 2));
  });

  it('writes the newest of several folds, keeping only the projects it is told to', async () => {
    const dir = await tempDir('recorder-');
    const recorder = new StatusRecorder({ stateDir: dir, clock: new ManualClock(), log: linesLogger() });
    recorder.recordPass(passResult(), {});
    recorder.recordFailure('the drift pass failed (see the daemon\'s log)', ['shop']);
    recorder.recordPass(passResult({ revision: 'r3' }), {}, ['shop']);
    await recorder.flush();
    const written = await readStatusRecord(dir);
    expect(written).toEqual(recorder.record());
    expect(Object.keys(written!.projects)).toEqual(['shop']);
    expect(written!.errors.map((error) => error.message)).toContain("the drift pass failed (see the daemon's log)");
  });

  it('logs a write that fails and goes on', async () => {
    const root = await tempDir('recorder-');
    // The state directory is a file: no record can be written under it.
    const dir = join(root, 'state');
    await writeFile(dir, 'not a directory');
    const log = linesLogger();
    const recorder = new StatusRecorder({ stateDir: dir, clock: new ManualClock(), log });
    recorder.recordPass(passResult(), {});
    await recorder.flush();
    expect(log.lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toEqual(['writing the status record failed; reconcile status without a daemon shows an older view']);
    expect(await readFile(dir, 'utf8')).toBe('not a directory');
    await expect(readFile(join(dir, STATUS_FILE), 'utf8')).rejects.toThrow();
  });
});

describe('the state lock', () => {
  it('tried once, is refused while another process holds it, with the holder in the log', async () => {
    const dir = join(await tempDir('lock-'), 'state');
    const clock = new ManualClock();
    const other = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile --watch' });
    const log = linesLogger();
    const answer = await takeStateLock({ stateDir: dir, timeoutMs: 60_000, clock, log });
    expect(answer).toMatchObject({ refused: 'held' });
    expect(log.lines).toEqual([{ level: 'error', fields: expect.objectContaining({ stateDir: dir }), msg: expect.stringMatching(/locked by pid \d+ .*\(reconcile --watch\)/) }]);
    if (other.acquired) await other.lock.release();
    const taken = await takeStateLock({ stateDir: dir, timeoutMs: 60_000, clock, log });
    expect('lock' in taken).toBe(true);
    if ('lock' in taken) await taken.lock.release();
  });

  it('is refused inside the manifests tree: an error for a one-shot run, fatal for the daemon', async () => {
    const tree = await tempDir('tree-');
    protectManifestsTree(tree);
    const stateDir = join(tree, 'state');
    const message = `the state directory ${stateDir} lies inside the manifests tree ${tree}: choose --state-dir outside it, or a dot-directory such as .reconcile`;
    const once = linesLogger();
    expect(await takeStateLock({ stateDir, timeoutMs: 60_000, clock: new ManualClock(), log: once })).toEqual({ refused: 'inside-manifests', problem: `the state directory ${stateDir} lies inside the manifests tree ${tree}` });
    expect(once.lines).toEqual([{ level: 'error', fields: { stateDir }, msg: message }]);
    const waiting = linesLogger();
    const answer = await takeStateLock({ stateDir, timeoutMs: 60_000, clock: new ManualClock(), log: waiting, wait: { signal: new AbortController().signal } });
    expect(answer).toMatchObject({ refused: 'inside-manifests' });
    expect(waiting.lines).toEqual([{ level: 'fatal', fields: { stateDir }, msg: message }]);
  });

  it('waited for, is taken once its holder releases it; the wait says so once per holder', async () => {
    const dir = join(await tempDir('lock-'), 'state');
    const clock = new ManualClock();
    const other = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' });
    if (!other.acquired) throw new Error('expected the lock');
    const log = linesLogger();
    const problems: string[] = [];
    let taken = false;
    const answer = takeStateLock({
      stateDir: dir,
      timeoutMs: 60_000,
      clock,
      log,
      wait: { signal: new AbortController().signal, onWaiting: (problem) => problems.push(problem), onTaken: () => (taken = true) },
    });
    await until(() => problems.length === 1);
    // Another try a heartbeat interval later: the same holder, no second line.
    await clock.advance(20_000);
    await until(() => problems.length === 2);
    await other.lock.release();
    await clock.advance(20_000);
    const result = await answer;
    expect('lock' in result && taken).toBe(true);
    expect(log.lines.map((line) => [line.level, line.msg.replace(/locked by .*/, 'locked by …')])).toEqual([
      ['warn', `waiting: the state directory ${dir} is locked by …`],
      ['info', 'holding the state directory lock'],
    ]);
    if ('lock' in result) await result.lock.release();
  });

  it('waited for, ends when the signal aborts', async () => {
    const dir = join(await tempDir('lock-'), 'state');
    const clock = new ManualClock();
    const other = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' });
    const stop = new AbortController();
    let waiting = 0;
    const answer = takeStateLock({ stateDir: dir, timeoutMs: 60_000, clock, log: linesLogger(), wait: { signal: stop.signal, onWaiting: () => (waiting += 1) } });
    await until(() => waiting === 1);
    stop.abort();
    expect(await answer).toMatchObject({ refused: 'ended' });
    if (other.acquired) await other.lock.release();
  });
});

describe('the session under the lock', () => {
  function fakeSession(stateDir: string, closed: string[]): PassSession {
    return { client: {} as PassSession['client'], baseUrl: 'http://127.0.0.1:1', stateDir, rate: { limit: 1, windowMs: 1000 }, close: async () => void closed.push(stateDir) };
  }

  function request(stateDir: string, overrides: Partial<SessionRequest>): SessionRequest {
    return {
      settings: { sandbox: false, allowEmpty: false, lockTimeoutMs: 60_000, organizationWaitMs: 60_000 },
      env: {},
      log: linesLogger(),
      clock: new ManualClock(),
      openers: { sandbox: () => Promise.reject(new Error('no sandbox')), api: () => Promise.reject(new Error('no API')) },
      stateDir,
      lock: true,
      ...overrides,
    };
  }

  it("the sandbox's session is closed when its state directory's lock is refused", async () => {
    const dir = join(await tempDir('session-'), 'state');
    const clock = new ManualClock();
    const other = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' });
    const closed: string[] = [];
    const answer = await openHeldSession(
      request('/unused', { clock, settings: { sandbox: true, allowEmpty: false, lockTimeoutMs: 60_000, organizationWaitMs: 60_000 }, openers: { sandbox: async () => fakeSession(dir, closed), api: () => Promise.reject(new Error('no API')) } }),
    );
    expect(answer).toMatchObject({ refused: 'held' });
    expect(closed).toEqual([dir]);
    if (other.acquired) await other.lock.release();
  });

  it("a real API's state directory is locked before the client opens, and released when it fails to", async () => {
    const dir = join(await tempDir('session-'), 'state');
    const clock = new ManualClock();
    let heldWhileOpening = false;
    const failing = request(dir, {
      clock,
      openers: {
        sandbox: () => Promise.reject(new Error('no sandbox')),
        api: async () => {
          heldWhileOpening = !(await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'probe' })).acquired;
          throw new Error('the API URL is missing');
        },
      },
    });
    await expect(openHeldSession(failing)).rejects.toThrow('the API URL is missing');
    expect(heldWhileOpening).toBe(true);
    const after = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile' });
    expect(after.acquired).toBe(true);
    if (after.acquired) await after.lock.release();
  });

  it('a dry run that needs no lock opens its session without one', async () => {
    const dir = join(await tempDir('session-'), 'state');
    await mkdir(dir, { recursive: true });
    const clock = new ManualClock();
    const other = await StateLock.acquire({ dir, clock, timeoutMs: 60_000, command: 'reconcile --watch' });
    const closed: string[] = [];
    const answer = await openHeldSession(request(dir, { clock, lock: false, openers: { sandbox: () => Promise.reject(new Error('no sandbox')), api: async () => fakeSession(dir, closed) } }));
    expect('held' in answer).toBe(true);
    if ('held' in answer) {
      expect(answer.held.lock).toBeUndefined();
      expect(answer.held.lockLost()).toBe(false);
      await answer.held.session.close();
      await answer.held.release();
    }
    if (other.acquired) await other.lock.release();
  });
});
