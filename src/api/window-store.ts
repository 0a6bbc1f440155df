import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { withShortLock } from '../util/state-lock.js';
import { join } from 'node:path';
import type { Clock } from '../util/clock.js';
import { readJsonFile, writeJsonAtomic } from '../util/atomic-file.js';

/** The request window as kept in `<stateDir>/request-window.json`. */
export interface PersistedWindow {
  version: 1;
  windowMs: number;
  /** Send times (ms since the epoch) of the last window, oldest first. */
  sends: number[];
  /** End of a 429 block still running when written, 0 when none. */
  blockedUntil: number;
  /**
   * Sends that may have happened after the file was written: up to `count` more, all before
   * `until`. A run that starts from this file counts them as sends at `until`.
   */
  claim?: { count: number; until: number };
  /**
   * Each process's own part (by a random id per client), when several send from one state
   * directory at once (a daemon and a dry run beside it): the fields above are their union.
   */
  writers?: Record<string, WriterPart>;
}

/** What one process sent and claimed, as it last wrote it (ms since the epoch). */
interface WriterPart {
  sends: number[];
  claim?: { count: number; until: number };
  blockedUntil: number;
}

export const WINDOW_FILE = 'request-window.json';
/**
 * The request window's own lock: held for one read and write of the file, so that processes
 * sending from one state directory at once (a daemon, and a dry run, which takes no writer lock)
 * merge their parts instead of replacing each other's.
 */
export const WINDOW_LOCK_FILE = 'request-window.lock';
/**
 * `sends` without one occurrence of each time in `loaded` (what this client started from: not
 * its own). Both in ascending order (the budget's sends are; `loaded` is sorted once by the
 * writer): one walk over the two, without a table per write.
 */
function withoutLoaded(sends: readonly number[], loaded: readonly number[]): number[] {
  if (loaded.length === 0) return sends.slice();
  const kept: number[] = [];
  let next = 0;
  for (const at of sends) {
    while (next < loaded.length && loaded[next]! < at) next++;
    if (next < loaded.length && loaded[next] === at) next++;
    else kept.push(at);
  }
  return kept;
}

const ascending = (times: readonly number[]): boolean => times.every((at, index) => index === 0 || times[index - 1]! <= at);

/**
 * This client's part (its own sends: the window it started from belongs to the writers before
 * it) merged with the other writers' parts still current at `now`; their union on top, which is
 * what the next client starts from.
 */
function mergeWindow(mine: PersistedWindow, id: string, loaded: readonly number[], existing: Partial<PersistedWindow> | undefined, now: number): PersistedWindow {
  const since = now - mine.windowMs;
  const parts: Record<string, WriterPart> = {};
  const current = (part: WriterPart) => part.sends.some((at) => at > since) || (part.claim !== undefined && part.claim.until >= now) || part.blockedUntil > now;
  // The file as this client found it, when it is gone since (a removed directory): the window it started from.
  const found = existing && Array.isArray(existing.sends) ? existing : loaded.length > 0 ? { sends: [...loaded], blockedUntil: 0 } : undefined;
  if (found) {
    const earlier = found.writers && typeof found.writers === 'object' ? found.writers : { earlier: { sends: found.sends!, ...(found.claim ? { claim: found.claim } : {}), blockedUntil: found.blockedUntil ?? 0 } };
    for (const [other, part] of Object.entries(earlier)) {
      if (other === id || !part || !Array.isArray(part.sends)) continue;
      const sends = part.sends.filter((at) => typeof at === 'number' && at > since);
      // A claim that ended inside the window stands for sends its writer has not written yet
      // (they go with its next claim): counted as sends at its end, never dropped.
      const ended = part.claim && finite(part.claim.count) && finite(part.claim.until) && part.claim.until < now && part.claim.until > since ? part.claim : undefined;
      if (ended) for (let i = 0; i < Math.min(ended.count, 100_000); i++) sends.push(ended.until);
      const kept: WriterPart = { sends, blockedUntil: typeof part.blockedUntil === 'number' ? part.blockedUntil : 0, ...(part.claim && part.claim.until >= now ? { claim: part.claim } : {}) };
      if (current(kept)) parts[other] = kept;
    }
  }
  parts[id] = { sends: withoutLoaded(ascending(mine.sends) ? mine.sends : [...mine.sends].sort((a, b) => a - b), loaded), blockedUntil: mine.blockedUntil, ...(mine.claim ? { claim: mine.claim } : {}) };
  const all = Object.values(parts);
  const claims = all.flatMap((part) => (part.claim ? [part.claim] : []));
  const union: PersistedWindow = {
    version: 1,
    windowMs: mine.windowMs,
    sends: all.flatMap((part) => part.sends).sort((a, b) => a - b),
    blockedUntil: Math.max(...all.map((part) => part.blockedUntil)),
    ...(claims.length > 0 ? { claim: { count: claims.reduce((sum, claim) => sum + claim.count, 0), until: Math.max(...claims.map((claim) => claim.until)) } } : {}),
  };
  return { ...union, writers: parts };
}

class WindowFileError extends Error {
  readonly path: string;
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = 'WindowFileError';
    this.path = path;
  }
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Loads the persisted window, claimed sends included (as sends at the end of their claim).
 * A missing file is a fresh start; an unreadable one is an error (starting empty after a crash
 * would let a crash loop burst past the limit).
 */
export async function loadWindow(stateDir: string): Promise<{ sends: number[]; blockedUntil: number }> {
  const path = join(stateDir, WINDOW_FILE);
  let data: unknown;
  try {
    data = await readJsonFile<unknown>(path);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new WindowFileError(path, 'not valid JSON; delete it only if no other process sends with this user', { cause: error });
    }
    throw new WindowFileError(path, `cannot read the request window: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
  }
  if (data === undefined) return { sends: [], blockedUntil: 0 };
  const value = data as Partial<PersistedWindow>;
  if (typeof value !== 'object' || value === null || !Array.isArray(value.sends) || !value.sends.every(finite)) {
    throw new WindowFileError(path, 'expected `sends` to be an array of numbers');
  }
  const sends = [...value.sends];
  const claim = value.claim;
  if (claim !== undefined) {
    if (typeof claim !== 'object' || claim === null || !finite(claim.count) || claim.count < 0 || !finite(claim.until)) {
      throw new WindowFileError(path, 'expected `claim` to be { count, until } with numbers');
    }
    for (let i = 0; i < Math.min(claim.count, 100_000); i++) sends.push(claim.until);
  }
  return { sends, blockedUntil: finite(value.blockedUntil) ? value.blockedUntil : 0 };
}

interface WindowWriterOptions {
  stateDir: string;
  clock: Clock;
  /** Longest time between writes of the actual send times. */
  debounceMs: number;
  /** Sends one write may claim ahead, and for how long the claim holds. */
  claimCount: number;
  claimMs: number;
  /**
   * Longest a claim may hold (default `claimMs`; at most the window, so a claim never lies
   * further ahead than a loader of the file takes a send to be). While claims end with most of
   * their places unused, each next one holds twice as long, up to this: a pass far below the
   * budget writes a claim every `maxClaimMs`, not every `claimMs`.
   */
  maxClaimMs?: number;
  snapshot: () => Omit<PersistedWindow, 'claim'>;
  /** The sends this client started from (loadWindow's, as the budget took them): the earlier writers'. */
  loaded?: readonly number[];
  onError: (error: unknown) => void;
}

/**
 * Keeps the window on disk. Write-ahead: no send goes out unless the file already accounts
 * for it, either as a recorded send or as one of a claim of up to `claimCount` sends before
 * `now + claimMs`; so a process killed right after a burst restarts knowing the burst, and a
 * crash loop cannot burst past the limit. Claims keep fsyncs to one per `claimCount` sends.
 * The actual send times (they make a restart less pessimistic) go with the next claim and on
 * `flush()`; other changes (a 429 block) follow within `debounceMs`. Writes never overlap:
 * the latest state wins.
 */
export class WindowWriter {
  readonly #path: string;
  readonly #options: WindowWriterOptions;
  #cancelTimer: (() => void) | undefined;
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;
  #claim: { left: number; until: number; ms: number } | undefined;
  #claiming: Promise<void> | undefined;

  /** This client's part of the file. */
  readonly #id = randomBytes(6).toString('hex');
  /** The sends this client started from, in ascending order. */
  readonly #loaded: readonly number[];

  constructor(options: WindowWriterOptions) {
    this.#path = join(options.stateDir, WINDOW_FILE);
    this.#options = options;
    this.#loaded = [...(options.loaded ?? [])].sort((a, b) => a - b);
  }

  /**
   * Undefined when a send at `now` is already on disk (claimed); otherwise a promise that
   * settles once a new claim is written. The caller checks again after it.
   */
  beforeSend(now: number): Promise<void> | undefined {
    if (this.#claim && this.#claim.left > 0 && now <= this.#claim.until) return undefined;
    this.#claiming ??= this.#writeClaim().finally(() => {
      this.#claiming = undefined;
    });
    return this.#claiming;
  }

  /**
   * A send went out: it uses one claimed place. The file already accounts for it (as a place
   * of the claim), so its exact time is written with the next claim or on `flush()`, not by a
   * write of its own: a busy pass would otherwise rewrite the whole window every `debounceMs`.
   */
  sent(): void {
    if (this.#claim) this.#claim.left -= 1;
    else this.changed();
  }

  /** Marks the window changed; a write follows within `debounceMs`. */
  changed(): void {
    this.#dirty = true;
    if (this.#cancelTimer) return;
    this.#cancelTimer = this.#options.clock.schedule(() => {
      this.#cancelTimer = undefined;
      void this.#write().catch(this.#options.onError);
    }, this.#options.debounceMs);
  }

  /**
   * Writes now if anything changed, and waits for every write to finish. `final`: no send
   * follows (the client is closing), so the file keeps the actual sends and drops the claim.
   */
  async flush(options: { final?: boolean } = {}): Promise<void> {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    await this.#claiming?.catch(() => undefined);
    if (options.final && this.#claim) {
      this.#claim = undefined;
      this.#dirty = true;
    }
    await this.#write();
  }

  async #writeClaim(): Promise<void> {
    const ms = this.#nextClaimMs();
    const claim = { left: this.#options.claimCount, until: this.#options.clock.now() + ms, ms };
    this.#dirty = true;
    await this.#write(claim);
    this.#claim = claim;
  }

  /**
   * How long the next claim holds: twice as long as the last one when that one ended by time
   * with more than half its places unused (the budget is far above what this client sends),
   * up to `maxClaimMs`; `claimMs` when it ran out of places or there was none.
   */
  #nextClaimMs(): number {
    const { claimMs, claimCount } = this.#options;
    const last = this.#claim;
    if (!last || last.left * 2 <= claimCount) return claimMs;
    return Math.max(claimMs, Math.min(this.#options.maxClaimMs ?? claimMs, last.ms * 2));
  }

  #write(nextClaim?: { left: number; until: number }): Promise<void> {
    const next = this.#writing.catch(() => undefined).then(async () => {
      if (!this.#dirty && !nextClaim) return;
      this.#dirty = false;
      const claim = nextClaim ?? this.#claim;
      const now = this.#options.clock.now();
      const value: PersistedWindow = {
        ...this.#options.snapshot(),
        ...(claim && claim.left > 0 && claim.until >= now ? { claim: { count: claim.left, until: claim.until } } : {}),
      };
      try {
        await this.#writeFile(value);
      } catch (error) {
        this.#dirty = true;
        throw new WindowFileError(this.#path, `cannot write the request window: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
      }
    });
    this.#writing = next;
    return next;
  }

  /**
   * One write of the file. The state directory is created first, every time: something may
   * have removed it since the last write (a cleanup, an operator), and the window must still
   * reach the disk. A removal racing this very write (the temp file's directory gone between
   * its creation and the rename) is met by one more attempt.
   */
  async #writeFile(value: PersistedWindow): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(this.#options.stateDir, { recursive: true });
        await withShortLock(join(this.#options.stateDir, WINDOW_LOCK_FILE), async () => {
          const existing = await readJsonFile<Partial<PersistedWindow>>(this.#path).catch(() => undefined);
          await writeJsonAtomic(this.#path, mergeWindow(value, this.#id, this.#loaded, existing, this.#options.clock.now()));
        });
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw error;
      }
    }
  }
}
