// The one writer of the status record in the state directory (`status.json`): a one-shot
// apply folds its result in before it releases the state lock; the daemon's status board
// folds every finished pass and every reading of the checkout in. Writes never overlap and the
// newest record wins (one folded in while another is written is written next).
import type { ManifestError } from '../manifests/types.js';
import type { Logger, PassResult } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { readStatusRecord, writeStatusRecord } from '../status/status-file.js';
import { emptyStatusRecord, foldFailure, foldManifests, foldPass, retainProjects, type PassScope, type StatusRecord } from '../status/status-record.js';

export interface StatusRecorderOptions {
  stateDir: string;
  clock: Clock;
  log: Logger;
}

export class StatusRecorder {
  readonly #options: StatusRecorderOptions;
  #record: StatusRecord = emptyStatusRecord();
  #pending: StatusRecord | undefined;
  #writing: Promise<void> | undefined;

  constructor(options: StatusRecorderOptions) {
    this.#options = options;
  }

  /** Starts from what the state directory holds (the last record before this process). */
  async load(): Promise<void> {
    const recorded = await readStatusRecord(this.#options.stateDir);
    if (recorded && this.#record.updatedAt === 0) this.#record = recorded;
  }

  /** The record as folded so far. */
  record(): StatusRecord {
    return this.#record;
  }

  /** A finished pass over `scope`; with `keep`, only those projects stay (the Project manifests of the current revision). */
  recordPass(result: PassResult, scope: PassScope, keep?: readonly string[]): void {
    this.#write(foldPass(this.#record, result, scope, this.#options.clock.now()), keep);
  }

  /** A pass that failed before it saw anything: its failure, nothing else changed (but `keep`). */
  recordFailure(message: string, keep?: readonly string[]): void {
    this.#write(foldFailure(this.#record, message, this.#options.clock.now()), keep);
  }

  /** A reading of the checkout: a broken revision, or a clean one that clears it. */
  recordManifests(revision: string | undefined, errors: readonly ManifestError[]): void {
    const next = foldManifests(this.#record, revision, errors, this.#options.clock.now());
    if (next !== this.#record) this.#write(next);
  }

  /** Resolves when the newest record is on disk. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  #write(folded: StatusRecord, keep?: readonly string[]): void {
    const record = keep ? retainProjects(folded, keep) : folded;
    this.#record = record;
    this.#pending = record;
    this.#writing ??= this.#drain().finally(() => {
      this.#writing = undefined;
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const next = this.#pending;
      this.#pending = undefined;
      try {
        await writeStatusRecord(this.#options.stateDir, next);
      } catch (error) {
        this.#options.log.warn({ err: error, stateDir: this.#options.stateDir }, 'writing the status record failed; reconcile status without a daemon shows an older view');
      }
    }
  }
}
