// Abort signals shared by many calls: one listener per signal, and one join with the client's closing.

/**
 * One abort listener per signal, however many calls share it: a pass (or a daemon) gives every
 * call one long-lived signal. Adding a listener per call would scan that signal's listener list
 * on every add, a cost that grows with the square of the calls queued; and what the watch keeps
 * per signal is a count, not the calls: a collection of the calls (a closure per call to undo its
 * watch, or a set of them) kept each call's whole answer alive past V8's young generation
 * (docs/development.md, "2026-11-29, the promotions"). Whoever is told of an abort finds its own
 * calls that carry the signal.
 */
export class AbortWatch {
  readonly #watched = new Map<AbortSignal, { count: number; listener: () => void }>();
  readonly #aborted: (signal: AbortSignal) => void;

  /** `aborted` is told once when a watched signal aborts. */
  constructor(aborted: (signal: AbortSignal) => void) {
    this.#aborted = aborted;
  }

  /** One more call carries `signal`. */
  watch(signal: AbortSignal): void {
    const watched = this.#watched.get(signal);
    if (watched) {
      watched.count += 1;
      return;
    }
    const listener = () => {
      this.#watched.delete(signal);
      this.#aborted(signal);
    };
    this.#watched.set(signal, { count: 1, listener });
    signal.addEventListener('abort', listener, { once: true });
  }

  /** A call that carried `signal` is done: the last one's end removes the listener (the signal may outlive the watch). */
  unwatch(signal: AbortSignal): void {
    const watched = this.#watched.get(signal);
    if (!watched || --watched.count > 0) return;
    this.#watched.delete(signal);
    signal.removeEventListener('abort', watched.listener);
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
