/** One send in the window: held from its send until its answer, then for a window more. */
export interface WindowSlot {
  readonly sentAt: number;
}

/**
 * The requests of the last window, as the service may count them. The service counts a
 * request when it arrives, which is some time between its send and its answer; so a request
 * may fall in any of the service's windows that overlap [send, answer]. A request therefore
 * holds its place from its send until a window after its answer (`ends`), and a request still
 * waiting for its answer holds it for as long as it waits (`open`).
 *
 * The invariant the whole budget rests on: for any instant t, the requests that may arrive
 * in [t, t + windowMs) number at most `limit`. Every new send starts after every earlier
 * one, so the count is largest right after a new send, and it suffices to allow a send at
 * `now` only when fewer than `limit` places are held: the open ones, plus the answered ones
 * whose answer came back less than `windowMs` ago.
 */
export class SlidingWindow {
  readonly windowMs: number;
  /** Extra spacing beyond the window before a place is reused (see RequestBudget). */
  readonly guardMs: number;
  // Answer times (or send times restored from disk) of the last window, oldest first.
  #ends: number[] = [];
  readonly #open = new Set<WindowSlot>();
  #lastSend = -Infinity;

  constructor(windowMs: number, sends: readonly number[] = [], guardMs = 0) {
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new TypeError(`Expected \`windowMs\` to be a finite number > 0, got \`${windowMs}\` (${typeof windowMs})`);
    }
    this.windowMs = windowMs;
    this.guardMs = guardMs;
    this.#ends = sends.filter((t) => Number.isFinite(t)).slice().sort((a, b) => a - b);
  }

  /**
   * The times that must survive a restart, oldest first: each answered request at its answer,
   * and each open one at `now` (it may still arrive; a restart cannot know when it is answered).
   */
  sends(now: number): number[] {
    this.#prune(now);
    const times = [...this.#ends, ...Array.from(this.#open, () => now)];
    return times.sort((a, b) => a - b);
  }

  /** Places held at `now`: open requests and those answered in the last window. */
  count(now: number): number {
    this.#prune(now);
    return this.#ends.length + this.#open.size;
  }

  /** Requests sent and not yet answered. */
  get open(): number {
    return this.#open.size;
  }

  /**
   * Milliseconds until one more send fits under `limit` (0 when it fits now). When open
   * requests alone fill the limit, no time is known: the answer of one of them frees a place,
   * and `windowMs` is only when to look again.
   */
  delayFor(now: number, limit: number): number {
    this.#prune(now);
    if (limit < 1) return this.windowMs;
    const free = limit - this.#open.size;
    if (free < 1) return this.windowMs;
    if (this.#ends.length < free) return 0;
    // The answered request that must leave the window before another may enter.
    const gate = this.#ends[this.#ends.length - free]!;
    return Math.max(0, gate + this.windowMs + this.guardMs - now);
  }

  /** Records a send at `now`; the place is held until `answered`. Times never go backwards. */
  record(now: number): WindowSlot {
    const sentAt = Math.max(now, this.#lastSend);
    this.#lastSend = sentAt;
    const slot: WindowSlot = { sentAt };
    this.#open.add(slot);
    return slot;
  }

  /** The answer (or the failure, or the timeout) of a send came at `now`. */
  answered(slot: WindowSlot, now: number): void {
    if (!this.#open.delete(slot)) return;
    const end = Math.max(now, slot.sentAt);
    let index = this.#ends.length;
    while (index > 0 && this.#ends[index - 1]! > end) index--;
    this.#ends.splice(index, 0, end);
  }

  #prune(now: number): void {
    let drop = 0;
    while (drop < this.#ends.length && this.#ends[drop]! + this.windowMs + this.guardMs <= now) drop++;
    if (drop > 0) this.#ends.splice(0, drop);
  }
}
