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
}

export const WINDOW_FILE = 'request-window.json';

export class WindowFileError extends Error {
  readonly path: string;
  constructor(path: string, detail: string, options?: ErrorOptions) {
    super(`${path}: ${detail}`, options);
    this.name = 'WindowFileError';
    this.path = path;
  }
}

/**
 * Loads the persisted window. A missing file is a fresh start; an unreadable one is an error
 * (starting empty after a crash would let a crash loop burst past the limit).
 */
export async function loadWindow(stateDir: string): Promise<{ sends: number[]; blockedUntil: number }> {
  const path = join(stateDir, WINDOW_FILE);
  let data: unknown;
  try {
    data = await readJsonFile<unknown>(path);
  } catch (error) {
    throw new WindowFileError(path, 'not valid JSON; delete it only if no other process sends with this user', { cause: error });
  }
  if (data === undefined) return { sends: [], blockedUntil: 0 };
  const value = data as Partial<PersistedWindow>;
  if (typeof value !== 'object' || value === null || !Array.isArray(value.sends) || !value.sends.every((t) => typeof t === 'number' && Number.isFinite(t))) {
    throw new WindowFileError(path, 'expected `sends` to be an array of numbers');
  }
  const blockedUntil = typeof value.blockedUntil === 'number' && Number.isFinite(value.blockedUntil) ? value.blockedUntil : 0;
  return { sends: value.sends, blockedUntil };
}

/**
 * Writes the window at most once per `debounceMs` of the clock (sends are frequent, fsyncs
 * are not free) and on `flush()`. Writes never overlap: the latest state wins.
 */
export class WindowWriter {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #debounceMs: number;
  readonly #snapshot: () => PersistedWindow;
  readonly #onError: (error: unknown) => void;
  #cancelTimer: (() => void) | undefined;
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;

  constructor(options: { stateDir: string; clock: Clock; debounceMs: number; snapshot: () => PersistedWindow; onError: (error: unknown) => void }) {
    this.#path = join(options.stateDir, WINDOW_FILE);
    this.#clock = options.clock;
    this.#debounceMs = options.debounceMs;
    this.#snapshot = options.snapshot;
    this.#onError = options.onError;
  }

  /** Marks the window changed; a write follows within `debounceMs`. */
  changed(): void {
    this.#dirty = true;
    if (this.#cancelTimer) return;
    this.#cancelTimer = this.#clock.schedule(() => {
      this.#cancelTimer = undefined;
      void this.#write().catch(this.#onError);
    }, this.#debounceMs);
  }

  /** Writes now if anything changed, and waits for every write to finish. */
  async flush(): Promise<void> {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    await this.#write();
  }

  #write(): Promise<void> {
    const next = this.#writing.catch(() => undefined).then(async () => {
      if (!this.#dirty) return;
      this.#dirty = false;
      try {
        await writeJsonAtomic(this.#path, this.#snapshot());
      } catch (error) {
        this.#dirty = true;
        throw error;
      }
    });
    this.#writing = next;
    return next;
  }
}
