// Abort signals shared by many calls: one listener per signal, and one join with the client's closing.

/**
 * One abort listener per signal, however many calls share it: a pass (or a daemon) gives every
 * call one long-lived signal, and adding a listener per call would scan that signal's listener
 * list on every add, a cost that grows with the square of the calls queued.
 */
export class AbortWatch<T> {
  readonly #watchers = new Map<AbortSignal, Set<T>>();
  readonly #listeners = new WeakMap<Set<T>, () => void>();
  readonly #aborted: (item: T, reason: unknown) => void;

  /** `aborted` is told of each item still watched when its signal aborts. */
  constructor(aborted: (item: T, reason: unknown) => void) {
    this.#aborted = aborted;
  }

  /** Watches `signal` for `item` until `unwatch`. */
  watch(signal: AbortSignal, item: T): void {
    let items = this.#watchers.get(signal);
    if (!items) {
      const own = new Set<T>();
      const onAbort = () => {
        this.#watchers.delete(signal);
        for (const waiting of [...own]) this.#aborted(waiting, signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#listeners.set(own, onAbort);
      this.#watchers.set(signal, own);
      items = own;
    }
    items.add(item);
  }

  /**
   * Stops watching `signal` for `item`. When the last item of a signal stops, its listener is
   * removed (the signal may outlive the watch). No closure is made per call to undo a watch:
   * in the transport, a closure per request kept on the request made every request's answer
   * outlive the young generation (docs/development.md, "2026-11-29, the promotions").
   */
  unwatch(signal: AbortSignal, item: T): void {
    const items = this.#watchers.get(signal);
    if (!items || !items.delete(item) || items.size > 0) return;
    this.#watchers.delete(signal);
    signal.removeEventListener('abort', this.#listeners.get(items)!);
  }
}

/** A client's closing, and each call's signal joined with it (made once per signal, not per exchange). */
export class Closing {
  readonly #controller = new AbortController();
  readonly #joined = new WeakMap<AbortSignal, AbortSignal>();

  /** Aborts on close. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  close(): void {
    this.#controller.abort();
  }

  /** A signal that aborts with `signal` or on close; the closing alone without one. */
  with(signal: AbortSignal | undefined): AbortSignal {
    if (!signal) return this.#controller.signal;
    let both = this.#joined.get(signal);
    if (!both) {
      both = AbortSignal.any([signal, this.#controller.signal]);
      this.#joined.set(signal, both);
    }
    return both;
  }
}
