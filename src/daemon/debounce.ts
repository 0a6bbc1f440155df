import type { Clock } from '../util/clock.js';

export interface Debouncer {
  /** Records an event: `fn` runs once `quietMs` pass without another, or `maxWaitMs` after the first. */
  trigger(): void;
  /** Drops a pending run. */
  cancel(): void;
  /** True while a run is pending. */
  readonly pending: boolean;
}

interface DebounceOptions {
  clock: Clock;
  /** Quiet time after the last event before `fn` runs. */
  quietMs: number;
  /** Upper bound from the first event of a burst: a tree written without pause still gets read. */
  maxWaitMs?: number;
}

/**
 * Collapses a burst of file events into one call. A checkout is written file by file; reading it
 * before the burst settles would see half of a revision.
 */
export function debounce(fn: () => void, options: DebounceOptions): Debouncer {
  const { clock, quietMs } = options;
  if (!Number.isFinite(quietMs) || quietMs < 0) {
    throw new TypeError(`Expected \`quietMs\` to be a finite number >= 0, got \`${quietMs}\` (${typeof quietMs})`);
  }
  const maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
  if (!(maxWaitMs >= quietMs)) {
    throw new TypeError(`Expected \`maxWaitMs\` to be a number >= quietMs (${quietMs}), got \`${maxWaitMs}\` (${typeof maxWaitMs})`);
  }
  let cancelTimer: (() => void) | undefined;
  let firstAt: number | undefined;

  const fire = () => {
    cancelTimer = undefined;
    firstAt = undefined;
    fn();
  };

  return {
    trigger() {
      const now = clock.now();
      firstAt ??= now;
      cancelTimer?.();
      const delay = Math.min(quietMs, Math.max(0, firstAt + maxWaitMs - now));
      cancelTimer = clock.schedule(fire, delay);
    },
    cancel() {
      cancelTimer?.();
      cancelTimer = undefined;
      firstAt = undefined;
    },
    get pending() {
      return cancelTimer !== undefined;
    },
  };
}
