// One writer per state directory. Two processes on one state directory (overlapping CI jobs,
// a manual run beside the daemon) each trust their own inventory and intents and can create
// the same project twice, so whoever writes holds `state.lock` in the directory: a file
// created atomically (a hard link of a fully written temp file, which fails when the lock
// exists), naming its holder and renewed by a heartbeat. A lock whose heartbeat is older than
// the stale timeout belongs to a process that died (SIGKILL, a lost node): it is taken over.
// A lock of this host whose process is gone (no process with its pid, or one with another
// start time: the pid was reused) is taken over at once, without waiting for the timeout.
// Each acquisition gets a generation one above every earlier one (kept in `lock-generation`
// and in the lock file): the fencing token that every write of the holder is checked against
// (state-fence.ts), and that its records carry.
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Clock } from './clock.js';
import { LOCK_FILE, registerFence, writeStateFile } from './state-fence.js';

export { LOCK_FILE } from './state-fence.js';
/** The highest generation any holder of the directory took, so that a released lock does not reset it. */
export const GENERATION_FILE = 'lock-generation';
/** Default stale timeout (`--lock-timeout`). */
const DEFAULT_LOCK_TIMEOUT_MS = 60_000;
/** Heartbeats per stale timeout: a live holder misses several before it looks dead. */
const HEARTBEATS_PER_TIMEOUT = 4;

/** Who holds a lock: what `state.lock` contains. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The command line of the holder (flags only; tokens are never flags). */
  command: string;
  /** ISO time the holder took the lock. */
  startedAt: string;
  /** Milliseconds since the epoch of the last heartbeat. */
  heartbeatAt: number;
  /** Random id of this holding, so a holder can tell its lock from a successor's. */
  id: string;
  /** The fencing token: one above the generation of every earlier holding of the directory. */
  generation: number;
  /** The holder process's start time as the kernel states it (Linux: field 22 of /proc/PID/stat), so a reused pid is told apart. */
  processStart?: string;
}

/** Fields 3 and on of /proc/PID/stat (Linux), or undefined where they cannot be read. */
function procStatFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses: fields count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of process `pid` as the kernel records it (Linux), or undefined where it cannot be read. */
export function processStartTime(pid: number): string | undefined {
  return procStatFields(pid)?.[19];
}

/**
 * Whether process `pid` has exited and is only waiting to be reaped (a zombie: its parent has
 * not waited for it, as a container's first process that reaps nothing): it holds nothing.
 */
function isZombie(pid: number): boolean {
  const state = procStatFields(pid)?.[0];
  return state === 'Z' || state === 'X';
}

/**
 * True when the holder is known to be gone: it ran on this host and no process with its pid
 * exists now, the process with its pid has exited and waits to be reaped (a zombie, as one
 * killed whose parent never reaps it), or the process with its pid started at another time
 * than the one it recorded. A holder of another host, or one this process cannot judge, is
 * not known to be gone.
 */
export function holderIsGone(holder: LockHolder): boolean {
  if (holder.host !== hostname() || !(holder.pid > 0)) return false;
  if (holder.pid === process.pid) return holder.processStart !== undefined && holder.processStart !== processStartTime(process.pid);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: a process exists (another user's); ESRCH: none.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  if (isZombie(holder.pid)) return true;
  if (holder.processStart === undefined) return false;
  const start = processStartTime(holder.pid);
  return start !== undefined && start !== holder.processStart;
}

/** `pid 123 on host-a (reconcile --watch), since 2026-01-01T00:00:00.000Z, last heartbeat 4 s ago`. */
export function describeHolder(holder: LockHolder, now: number): string {
  const age = Math.max(0, Math.round((now - holder.heartbeatAt) / 1000));
  return `pid ${holder.pid} on ${holder.host} (${holder.command}), since ${holder.startedAt}, last heartbeat ${age} s ago`;
}

export class StateLockHeldError extends Error {
  constructor(readonly dir: string, readonly holder: LockHolder, now: number) {
    super(`the state directory ${dir} is locked by ${describeHolder(holder, now)}: another reconciler is writing there`);
    this.name = 'StateLockHeldError';
  }
}

interface StateLockOptions {
  /** The state directory (created when missing). */
  dir: string;
  clock: Clock;
  /** A lock whose heartbeat is older than this is stale and taken over. */
  timeoutMs?: number;
  /** Shown to whoever finds the lock held. */
  command: string;
  /** Called once when a heartbeat finds the lock taken by another process (this one was presumed dead). */
  onLost?: (holder: LockHolder | undefined) => void;
}

/** `tookOver`: the stale holder this acquisition replaced. */
type AcquireResult = { acquired: true; lock: StateLock; tookOver?: LockHolder } | { acquired: false; holder: LockHolder };

function isHolder(value: unknown): value is LockHolder {
  const v = value as Partial<LockHolder> | null;
  return typeof v === 'object' && v !== null && typeof v.pid === 'number' && typeof v.heartbeatAt === 'number' && typeof v.id === 'string';
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (isHolder(parsed)) return parsed;
  } catch {
    // Not ours or damaged: judged below like a lock that never heartbeats.
  }
  return { pid: 0, host: 'unknown', command: 'unreadable lock file', startedAt: 'unknown', heartbeatAt: 0, id: 'unreadable', generation: 0 };
}

/** The generation of the last holding (0 before the first). */
async function lastGeneration(dir: string): Promise<number> {
  const text = await readFile(join(dir, GENERATION_FILE), 'utf8').catch(() => '');
  const value = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

function generationIn(holder: LockHolder | undefined): number {
  return holder && Number.isSafeInteger(holder.generation) && holder.generation > 0 ? holder.generation : 0;
}

/** A held lock: renews itself until released. */
export class StateLock {
  #cancelHeartbeat: (() => void) | undefined;
  #released = false;
  #lost = false;
  readonly #lostSignal = new AbortController();

  private constructor(
    readonly path: string,
    private holder: LockHolder,
    private readonly options: StateLockOptions & { timeoutMs: number },
  ) {}

  /** Takes the lock if it is free or stale; otherwise says who holds it. Never waits. */
  static async acquire(options: StateLockOptions): Promise<AcquireResult> {
    const settings = { ...options, timeoutMs: options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS };
    if (!(settings.timeoutMs > 0)) throw new TypeError(`Expected \`timeoutMs\` to be > 0, got \`${settings.timeoutMs}\``);
    await mkdir(options.dir, { recursive: true });
    const dir = resolve(options.dir);
    const path = join(dir, LOCK_FILE);
    // A few rounds: each lost race against another taker means re-reading who won.
    let tookOver: LockHolder | undefined;
    for (let round = 0; round < 3; round++) {
      const now = options.clock.now();
      const holder: LockHolder = {
        pid: process.pid,
        host: hostname(),
        command: options.command,
        startedAt: new Date(now).toISOString(),
        heartbeatAt: now,
        id: randomBytes(8).toString('hex'),
        generation: Math.max(await lastGeneration(dir), generationIn(tookOver)) + 1,
      };
      const start = processStartTime(process.pid);
      if (start !== undefined) holder.processStart = start;
      if (await createExclusive(path, holder)) {
        const lock = new StateLock(path, holder, settings);
        lock.#register(dir);
        await writeStateFile(join(dir, GENERATION_FILE), `${holder.generation}\n`, 0o644);
        lock.#startHeartbeat();
        return { acquired: true, lock, ...(tookOver ? { tookOver } : {}) };
      }
      const current = await readHolder(path);
      if (current === undefined) continue; // released between our attempt and the read
      if (now - current.heartbeatAt <= settings.timeoutMs && !holderIsGone(current)) return { acquired: false, holder: current };
      // Stale (or its process is gone): move it aside (rename succeeds for one taker only), then check that what was
      // moved is the stale lock judged above and not a successor's fresh one.
      const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
      try {
        await rename(path, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const moved = await readHolder(aside);
      if (moved && moved.id !== current.id) {
        // A successor's lock: put it back unless yet another one appeared meanwhile.
        await link(aside, path).catch(() => undefined);
        await unlink(aside).catch(() => undefined);
        continue;
      }
      await unlink(aside).catch(() => undefined);
      tookOver = current;
    }
    const current = await readHolder(path);
    if (current) return { acquired: false, holder: current };
    throw new Error(`could not take the lock ${path}: it changed hands repeatedly`);
  }

  get heartbeatMs(): number {
    return Math.max(1, Math.floor(this.options.timeoutMs / HEARTBEATS_PER_TIMEOUT));
  }

  /** False once a heartbeat (or a fenced write) found another holder. */
  get held(): boolean {
    return !this.#released && !this.#lost;
  }

  /** This holding's fencing token. */
  get generation(): number {
    return this.holder.generation;
  }

  /** Aborted once the lock is known to be lost. */
  get signal(): AbortSignal {
    return this.#lostSignal.signal;
  }

  /** From now on every write below `dir` is checked against this holding. */
  #register(dir: string): void {
    registerFence({
      dir,
      id: this.holder.id,
      generation: this.holder.generation,
      signal: this.#lostSignal.signal,
      lost: () => this.#markLost(),
      released: () => this.#released,
    });
  }

  /** Marks the lock lost at once (no write follows), then reports who holds it now. */
  #markLost(current?: LockHolder): void {
    if (this.#lost || this.#released) return;
    this.#lost = true;
    this.#cancelHeartbeat?.();
    this.#lostSignal.abort(new Error('the state lock was lost'));
    if (current) {
      this.options.onLost?.(current);
      return;
    }
    void readHolder(this.path)
      .catch(() => undefined)
      .then((holder) => this.options.onLost?.(holder));
  }

  #startHeartbeat(): void {
    // The next beat is scheduled first: a slow disk delays one write, not the cadence.
    const beat = () => {
      if (!this.held) return;
      this.#cancelHeartbeat = this.options.clock.schedule(beat, this.heartbeatMs);
      this.heartbeat().catch(() => undefined);
    };
    this.#cancelHeartbeat = this.options.clock.schedule(beat, this.heartbeatMs);
  }

  /** Renews the heartbeat; when the lock is no longer ours, marks it lost and reports it. */
  async heartbeat(): Promise<void> {
    if (!this.held) return;
    const current = await readHolder(this.path);
    if (current?.id !== this.holder.id || generationIn(current) !== this.holder.generation) {
      this.#markLost(current);
      return;
    }
    // Fenced: the lock file is replaced only while it still names this holding, so a holder
    // that resumes after a takeover never overwrites its successor's lock.
    const next = { ...this.holder, heartbeatAt: this.options.clock.now() };
    await writeStateFile(this.path, `${JSON.stringify(next)}\n`, 0o644);
    this.holder = next;
  }

  /** Removes the lock if it is still ours (checked and removed in one synchronous step). */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#cancelHeartbeat?.();
    try {
      const current = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<LockHolder>;
      if (current.id === this.holder.id && generationIn(current as LockHolder) === this.holder.generation) unlinkSync(this.path);
    } catch {
      // Gone, unreadable or not ours: a successor's lock is left alone.
    }
  }
}

/** Creates `path` with the holder's record, failing (false) when it exists. */
async function createExclusive(path: string, holder: LockHolder): Promise<boolean> {
  const temp = `${path}.${holder.id}.tmp`;
  await writeFile(temp, `${JSON.stringify(holder)}\n`, { mode: 0o644 });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * Waits for the lock (a daemon beside another holder): retries every heartbeat interval,
 * reporting the holder each time it is still held, until it is free or stale, or `signal` aborts.
 */
export async function waitForStateLock(
  options: StateLockOptions & { signal: AbortSignal; onWaiting: (holder: LockHolder) => void },
): Promise<{ lock: StateLock; tookOver?: LockHolder } | undefined> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const retryMs = Math.max(1, Math.floor(timeoutMs / HEARTBEATS_PER_TIMEOUT));
  for (;;) {
    if (options.signal.aborted) return undefined;
    const result = await StateLock.acquire(options);
    if (result.acquired) return { lock: result.lock, ...(result.tookOver ? { tookOver: result.tookOver } : {}) };
    options.onWaiting(result.holder);
    try {
      await options.clock.sleep(retryMs, options.signal);
    } catch {
      return undefined;
    }
  }
}

/** The holder's command as shown to others: the program name and its arguments. */
export function commandLine(argv: readonly string[] = process.argv): string {
  return ['reconcile', ...argv.slice(2)].join(' ').slice(0, 300);
}

/** A short lock older than this belongs to a process that died while holding it: it is removed. */
const SHORT_LOCK_STALE_MS = 10_000;

/**
 * Runs `action` holding the lock file `path`, created exclusively and removed after: a lock
 * held for one read and write of a shared file (the request window), not a writer's lock. A
 * lock file older than 10 s (wall clock, against its modification time) is removed as stale.
 */
export async function withShortLock<T>(path: string, action: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = await stat(path).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > SHORT_LOCK_STALE_MS) await unlink(path).catch(() => undefined);
      else if (attempt >= 1_000) throw new Error(`${path} stays held: another process is writing the file it guards`);
      else await new Promise((resolveWait) => setTimeout(resolveWait, Math.min(20, 1 + attempt)));
    }
  }
  try {
    return await action();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}

/** Moves a whole state directory to `to` (its parent created first); fails when `to` exists or lies on another device. */
export async function moveStateDirectory(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await rename(from, to);
}

