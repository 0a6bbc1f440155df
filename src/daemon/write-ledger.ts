// Write passes in flight and recent, for the stated freshness bound. A write pass's requests
// go ahead of re-check reads (write priority in the client's queue), so each one displaces a
// read: the re-check cycle it falls in ends later by (its requests ÷ the re-check rate), and
// every project the pass did not observe is older by as much when its turn comes. That lasts
// until the cycle after the pass has gone round once.

interface WriteEntry {
  id: number;
  startedAt: number;
  endedAt?: number;
  /** Estimated while in flight, counted once finished. */
  requests: number;
}

export class WriteLedger {
  #entries: WriteEntry[] = [];
  #next = 1;

  /** A write pass starts, expected to send `estimate` requests; returns its id. */
  start(now: number, estimate: number): number {
    const id = this.#next++;
    this.#entries.push({ id, startedAt: now, requests: Math.max(0, estimate) });
    return id;
  }

  /** The pass ended having sent `requests` (the estimate stays when the count is unknown). */
  finish(id: number, now: number, requests?: number): void {
    const entry = this.#entries.find((e) => e.id === id);
    if (!entry) return;
    entry.endedAt = now;
    if (requests !== undefined) entry.requests = requests;
  }

  /**
   * Requests of the passes whose delay still shows in observation ages at `now`: in flight, or
   * ended less than a cycle (`cycleMs`, plus the pass's own delay at `ratePerMs`) ago.
   * Entries past that are dropped.
   */
  pendingRequests(now: number, cycleMs: number, ratePerMs: number): number {
    const delay = (entry: WriteEntry) => (ratePerMs > 0 ? entry.requests / ratePerMs : 0);
    this.#entries = this.#entries.filter((entry) => entry.endedAt === undefined || now < entry.endedAt + cycleMs + delay(entry));
    return this.#entries.reduce((sum, entry) => sum + entry.requests, 0);
  }

  /** When the next finished entry stops counting (ms since the epoch), or undefined. */
  nextExpiry(cycleMs: number, ratePerMs: number): number | undefined {
    let next: number | undefined;
    for (const entry of this.#entries) {
      if (entry.endedAt === undefined) continue;
      const at = entry.endedAt + cycleMs + (ratePerMs > 0 ? entry.requests / ratePerMs : 0);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }
}
