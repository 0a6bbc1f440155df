export interface RequestLogEntry {
  /** Wall-clock milliseconds when the request arrived. */
  time: number;
  method: string;
  /** The raw path (without the query). */
  path: string;
  /** The route template of the spec, or `(unmatched)`. */
  route: string;
  /** The status answered; 0 when no answer was sent (timeout, reset). */
  status: number;
  /** The user the token belongs to. */
  user?: string;
  /** The fault injected into this request, if any. */
  fault?: 'error' | 'timeout' | 'reset' | 'lost-answer' | 'rate-limit';
  /** A query of `database/query`: whether it ran in a read-only transaction. */
  sql?: { readOnly: boolean };
  /** Sequence number, increasing across the emulator's life. */
  seq: number;
}

/** The request log, bounded so a long benchmark cannot exhaust memory. */
export class RequestLog {
  #entries: RequestLogEntry[] = [];
  #seq = 0;
  readonly #max: number;

  constructor(max = 200_000) {
    this.#max = max;
  }

  add(entry: Omit<RequestLogEntry, 'seq'>): RequestLogEntry {
    const full = { ...entry, seq: ++this.#seq };
    this.#entries.push(full);
    if (this.#entries.length > this.#max) this.#entries.splice(0, this.#entries.length - this.#max);
    return full;
  }

  entries(since?: number): RequestLogEntry[] {
    return since === undefined ? [...this.#entries] : this.#entries.filter((e) => e.time >= since);
  }

  clear(): void {
    this.#entries = [];
  }
}
