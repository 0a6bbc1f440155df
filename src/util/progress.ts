// Progress lines for long waits: the first as soon as a wait is known to last, then at most one
// per interval of the injected clock, so a terminal shows movement without being flooded.
import type { Clock } from './clock.js';

/** At most one progress line per wait in this much clock time. */
const PROGRESS_INTERVAL_MS = 5_000;
/** Shorter waits pass without a line: they are pacing, not a stall anyone would wonder about. */
const PROGRESS_MIN_WAIT_MS = 1_000;

/** `45s`, `2m 20s`, `1h 3m`: how long a wait has lasted, for a person to read. */
export function formatElapsed(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** True at the first call, then when at least `intervalMs` of clock time passed since the last true. */
export function progressGate(clock: Clock, intervalMs = PROGRESS_INTERVAL_MS): () => boolean {
  let last: number | undefined;
  return () => {
    const now = clock.now();
    if (last !== undefined && now - last < intervalMs) return false;
    last = now;
    return true;
  };
}

/**
 * Reports a wait that its owner only learns of in passing (the request queue waiting for its
 * budget): `stalled` arms a report, and `report` runs again every interval for as long as it
 * returns true (it prints a line while something still waits, and returns false once nothing does).
 */
export class WaitProgress {
  readonly #clock: Clock;
  readonly #report: () => boolean;
  readonly #intervalMs: number;
  #cancel: (() => void) | undefined;
  #lastAt: number | undefined;
  #stopped = false;

  constructor(clock: Clock, report: () => boolean, intervalMs = PROGRESS_INTERVAL_MS) {
    this.#clock = clock;
    this.#report = report;
    this.#intervalMs = intervalMs;
  }

  stalled(waitMs: number): void {
    if (this.#stopped || this.#cancel || waitMs < PROGRESS_MIN_WAIT_MS) return;
    const due = this.#lastAt === undefined ? 0 : Math.max(0, this.#lastAt + this.#intervalMs - this.#clock.now());
    this.#cancel = this.#clock.schedule(() => this.#tick(), due);
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #tick(): void {
    this.#cancel = undefined;
    if (this.#stopped || !this.#report()) return;
    this.#lastAt = this.#clock.now();
    this.#cancel = this.#clock.schedule(() => this.#tick(), this.#intervalMs);
  }
}
