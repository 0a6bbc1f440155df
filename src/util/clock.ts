/**
 * Time is injected everywhere (budget windows, backoff, lifecycles, schedules) so that
 * tests drive it without sleeping and the emulator can run its lifecycle faster.
 */
export interface Clock {
  /** Milliseconds since the epoch, as this clock sees it. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Schedules `fn` after `ms` of this clock's time; returns a cancel function. */
  schedule(fn: () => void, ms: number): () => void;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  schedule(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};

/**
 * A clock whose time runs `factor` times faster than real time, starting now.
 * The emulator's `--speed` uses it for lifecycles.
 */
export function scaledClock(factor: number, base: Clock = systemClock): Clock {
  if (!Number.isFinite(factor) || factor <= 0) {
    throw new TypeError(`Expected \`factor\` to be a finite number > 0, got \`${factor}\` (${typeof factor})`);
  }
  const origin = base.now();
  return {
    now: () => origin + (base.now() - origin) * factor,
    sleep: (ms, signal) => base.sleep(ms / factor, signal),
    schedule: (fn, ms) => base.schedule(fn, ms / factor),
  };
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. `advance` fires due timers in time order;
 * `runUntilIdle`-style helpers are built on it in tests.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  schedule(fn: () => void, ms: number): () => void {
    const timer: ManualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const cancel = this.schedule(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        cancel();
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Time of the next timer, or undefined. */
  nextAt(): number | undefined {
    return this.#timers.reduce<number | undefined>((m, t) => (m === undefined || t.at < m ? t.at : m), undefined);
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order; awaits microtasks between them. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.#timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
