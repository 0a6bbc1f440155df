import type { Clock } from '../util/clock.js';
import type { WindowSlot } from './budget.js';
import type { BudgetSet } from './rate-model.js';
import { PriorityScheduler } from './priority-scheduler.js';
import type { Priority } from './request.js';

interface DispatchItem {
  readonly priority: Priority;
  readonly project: string;
  /** The budget key the service counts this item's requests under (see rate-model.ts). */
  readonly key: string;
}

/**
 * Given to `run`: waits for the budget, then counts the send and calls `start` in the same
 * synchronous step, so the time counted is the time sent (a promise hop between the two would
 * let other work run in between and push the real send later than the window knows). The
 * place stays held until the promise `start` returns settles: the answer is back.
 */
export type AcquireSend = <R>(start: () => Promise<R>, signal?: AbortSignal) => Promise<R>;

interface DispatcherOptions<T extends DispatchItem> {
  clock: Clock;
  budgets: BudgetSet;
  concurrency: number;
  /** Runs one admitted item (one attempt); the concurrency slot is held until it settles. */
  run(item: T, acquire: AcquireSend): Promise<void>;
  onSend(now: number): void;
  onDepth(priority: Priority, depth: number): void;
  /** The item at the head of the queue waits `waitMs` for its budget (progress reporting). */
  onStall?(key: string, waitMs: number): void;
  /** Undefined when a send may go now; otherwise a promise to wait for first (the persisted window's write-ahead). */
  beforeSend?(now: number): Promise<void> | undefined;
}

/**
 * Admits waiting items in priority order when a concurrency slot is free and the budget
 * has room, and wakes itself (on the clock) when the budget will have room again. An item
 * is admitted only when the budget could take its send now, so a later, more urgent item
 * is not stuck behind less urgent ones that merely wait for the budget.
 */
export class Dispatcher<T extends DispatchItem> {
  readonly #options: DispatcherOptions<T>;
  readonly #queue = new PriorityScheduler<T>();
  #active = 0;
  // Admitted items that have not sent yet, by budget key: that budget's room is promised to them.
  readonly #reserved = new Map<string, number>();
  // Senders waiting for room: an answer coming back may make some, sooner than any timer knows.
  readonly #wakeups = new Set<() => void>();
  #timer: { at: number; cancel: () => void } | undefined;
  #stopped = false;

  constructor(options: DispatcherOptions<T>) {
    this.#options = options;
  }

  get waiting(): number {
    return this.#queue.size;
  }

  get active(): number {
    return this.#active;
  }

  /** What the head of the queue waits for, when it waits for its budget (read only). */
  stall(): { key: string; waitMs: number; queued: number } | undefined {
    const head = this.#queue.peek();
    if (!head || this.#active >= this.#options.concurrency) return undefined;
    const waitMs = this.#options.budgets.get(head.key).delay(this.#options.clock.now(), this.#reserved.get(head.key) ?? 0);
    return waitMs > 0 ? { key: head.key, waitMs, queued: this.#queue.size } : undefined;
  }

  push(item: T, front = false): void {
    this.#queue.push(item, item.priority, item.project, front);
    this.#options.onDepth(item.priority, this.#queue.depth(item.priority));
    this.pump();
  }

  /** Takes out every waiting item `matches` accepts. */
  removeWhere(matches: (item: T) => boolean): T[] {
    const removed = this.#queue.removeWhere(matches);
    if (removed.length === 0) return [];
    for (const priority of new Set(removed.map((entry) => entry.priority))) this.#options.onDepth(priority, this.#queue.depth(priority));
    // The head may have been one of them, waiting for its key's budget: the next may go now.
    this.#timer?.cancel();
    this.#timer = undefined;
    this.pump();
    return removed.map((entry) => entry.item);
  }

  /** Takes every waiting item out (on close). */
  drain(): T[] {
    const items: T[] = [];
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      items.push(next.item);
      this.#options.onDepth(next.priority, this.#queue.depth(next.priority));
    }
    return items;
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /**
   * Waits until the budget of `key` allows one send and records it, in one synchronous step,
   * so two senders can never both take the last place in the window. `pending` sends promised
   * to others are kept free. The place is held until the answer is back.
   */
  async acquire<R>(key: string, start: () => Promise<R>, signal: AbortSignal | undefined, pending: () => number, onRecorded?: () => void): Promise<R> {
    const { clock } = this.#options;
    for (;;) {
      signal?.throwIfAborted();
      const budget = this.#options.budgets.get(key);
      const wait = budget.delay(clock.now(), pending());
      if (wait <= 0) {
        const prerequisite = this.#options.beforeSend?.(clock.now());
        if (prerequisite) {
          // Something had to be written first; time passed, so the budget is asked again.
          await prerequisite;
          continue;
        }
        const now = clock.now();
        const slot = budget.recordSend(now);
        // In the same synchronous step: a promise hop here would let another sender see the
        // send counted and its reservation still held, and wait a whole window for nothing.
        onRecorded?.();
        this.#options.onSend(now);
        let answer: Promise<R>;
        try {
          answer = start();
        } catch (error) {
          this.#answered(key, slot);
          throw error;
        }
        return answer.finally(() => this.#answered(key, slot));
      }
      await this.#sleep(wait, signal);
    }
  }

  #answered(key: string, slot: WindowSlot): void {
    this.#options.budgets.get(key).answered(slot, this.#options.clock.now());
    for (const wake of [...this.#wakeups]) wake();
    this.pump();
  }

  /** Sleeps `ms`, or less when an answer comes back first (it may have freed a place). */
  async #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const woken = new AbortController();
    const wake = () => woken.abort();
    this.#wakeups.add(wake);
    try {
      await this.#options.clock.sleep(ms, signal ? AbortSignal.any([signal, woken.signal]) : woken.signal);
    } catch (error) {
      if (signal?.aborted || !woken.signal.aborted) throw error;
    } finally {
      this.#wakeups.delete(wake);
    }
  }

  pump(): void {
    if (this.#stopped) return;
    const { clock, budgets, concurrency } = this.#options;
    while (this.#active < concurrency && this.#queue.size > 0) {
      const key = this.#queue.peek()!.key;
      const wait = budgets.get(key).delay(clock.now(), this.#reserved.get(key) ?? 0);
      if (wait > 0) {
        this.#wakeIn(wait);
        this.#options.onStall?.(key, wait);
        return;
      }
      const next = this.#queue.shift()!;
      this.#options.onDepth(next.priority, this.#queue.depth(next.priority));
      this.#start(next.item);
    }
  }

  #start(item: T): void {
    const { key } = item;
    this.#active += 1;
    this.#reserved.set(key, (this.#reserved.get(key) ?? 0) + 1);
    let holdsReservation = true;
    const release = () => {
      if (holdsReservation) {
        holdsReservation = false;
        const left = this.#reserved.get(key)! - 1;
        if (left > 0) this.#reserved.set(key, left);
        else this.#reserved.delete(key);
      }
    };
    const acquire: AcquireSend = (start, signal) => {
      // Our own reservation does not count against us.
      const answer = this.acquire(key, start, signal, () => (this.#reserved.get(key) ?? 0) - (holdsReservation ? 1 : 0), () => {
        release();
        // The promised place is now a real send: others may be admitted against what is left.
        queueMicrotask(() => this.pump());
      });
      return answer;
    };
    void this.#options
      .run(item, acquire)
      .catch(() => undefined)
      .finally(() => {
        release();
        this.#active -= 1;
        this.pump();
      });
  }

  #wakeIn(ms: number): void {
    const at = this.#options.clock.now() + ms;
    if (this.#timer && this.#timer.at <= at) return;
    this.#timer?.cancel();
    const cancel = this.#options.clock.schedule(() => {
      this.#timer = undefined;
      this.pump();
    }, ms);
    this.#timer = { at, cancel };
  }
}
