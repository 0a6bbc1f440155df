/**
 * The send times of the last window, oldest first. The invariant the whole budget rests on:
 * for any instant t, the sends in [t, t + windowMs) number at most `limit`. For sorted send
 * times that is the same as `sends[i + limit] - sends[i] >= windowMs` for every i, so a new
 * send at `now` is allowed exactly when the `limit`-th most recent send is at least
 * `windowMs` old.
 */
export class SlidingWindow {
  readonly windowMs: number;
  /** Extra spacing beyond the window before a place is reused (see RequestBudget). */
  readonly guardMs: number;
  #sends: number[] = [];

  constructor(windowMs: number, sends: readonly number[] = [], guardMs = 0) {
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new TypeError(`Expected \`windowMs\` to be a finite number > 0, got \`${windowMs}\` (${typeof windowMs})`);
    }
    this.windowMs = windowMs;
    this.guardMs = guardMs;
    this.#sends = sends.filter((t) => Number.isFinite(t)).slice().sort((a, b) => a - b);
  }

  /** Send times still inside the window ending at `now` (oldest first). */
  sends(now: number): number[] {
    this.#prune(now);
    return this.#sends.slice();
  }

  /** Sends in the window (now - windowMs, now]. */
  count(now: number): number {
    this.#prune(now);
    return this.#sends.length;
  }

  /** Milliseconds until one more send fits under `limit` (0 when it fits now). */
  delayFor(now: number, limit: number): number {
    this.#prune(now);
    if (limit < 1) return this.windowMs;
    if (this.#sends.length < limit) return 0;
    // The send that must leave the window before another may enter.
    const gate = this.#sends[this.#sends.length - limit]!;
    return Math.max(0, gate + this.windowMs + this.guardMs - now);
  }

  /** Records a send at `now`. Times never go backwards: a clock that steps back is clamped. */
  record(now: number): void {
    const last = this.#sends[this.#sends.length - 1];
    this.#sends.push(last !== undefined && last > now ? last : now);
  }

  #prune(now: number): void {
    let drop = 0;
    while (drop < this.#sends.length && this.#sends[drop]! + this.windowMs + this.guardMs <= now) drop++;
    if (drop > 0) this.#sends.splice(0, drop);
  }
}
