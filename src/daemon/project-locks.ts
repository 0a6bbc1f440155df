/**
 * One pass at a time per project. A pass names the projects it covers; a pass over the whole
 * fleet also takes the fleet key, so two whole-fleet passes never overlap while passes over
 * different projects may.
 */
export const FLEET_KEY = '\u0000fleet';

export class ProjectLocks {
  readonly #held = new Set<string>();
  #waiters: Array<() => void> = [];

  /** True when any of `keys` is held. */
  busy(keys: Iterable<string>): boolean {
    for (const key of keys) if (this.#held.has(key)) return true;
    return false;
  }

  /** Takes `keys` now when all are free; returns a release function, or undefined when any is held. */
  tryAcquire(keys: readonly string[]): (() => void) | undefined {
    if (this.busy(keys)) return undefined;
    for (const key of keys) this.#held.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) this.#held.delete(key);
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    };
  }

  /** Waits until all of `keys` are free and takes them (all at once, so waiting never deadlocks). */
  async acquire(keys: readonly string[], signal?: AbortSignal): Promise<() => void> {
    for (;;) {
      signal?.throwIfAborted();
      const release = this.tryAcquire(keys);
      if (release) return release;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.#waiters.push(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
  }

  /** Keys currently held (diagnostics). */
  held(): string[] {
    return [...this.#held];
  }
}
