// The daemon's view of the fleet for `GET /status` and the status page: every finished pass and
// every reading of the checkout (a broken revision) is folded into the status record (kept in
// memory and written to the state directory, so that `reconcile status` can read it without the
// daemon), and a view is built from it on request.
import type { Logger, PassResult } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { buildFleetView, type FleetView, type FreshnessView, type RolloutView } from '../status/fleet-view.js';
import { readStatusRecord, statusRecordWriter } from '../status/status-file.js';
import type { ManifestError } from '../manifests/types.js';
import { emptyStatusRecord, foldFailure, foldManifests, foldPass, retainProjects, type StatusRecord } from '../status/status-record.js';
import type { PassReport } from './controller.js';

export interface StatusBoardOptions {
  stateDir: string;
  clock: Clock;
  log: Logger;
  /** What the daemon knows at the moment of a request: its revision, projects and stated bound. */
  live(): {
    revision?: string;
    /** The Project manifest names of the current revision (undefined before one loaded). */
    projects?: string[];
    freshness: Omit<FreshnessView, 'largestAgeSeconds' | 'oldestProject'>;
    /** Rollouts' wave progress, when rollouts are declared. */
    rollouts?: RolloutView[];
  };
  dryRun: boolean;
  shard?: string;
}

export class StatusBoard {
  readonly #options: StatusBoardOptions;
  readonly #writer: ReturnType<typeof statusRecordWriter>;
  #record: StatusRecord = emptyStatusRecord();

  constructor(options: StatusBoardOptions) {
    this.#options = options;
    this.#writer = statusRecordWriter(options.stateDir, (error) =>
      options.log.warn({ err: error, stateDir: options.stateDir }, 'writing the status record failed; reconcile status without a daemon shows an older view'),
    );
  }

  /** Starts from what the state directory holds (the last view before a restart). */
  async load(): Promise<void> {
    const recorded = await readStatusRecord(this.#options.stateDir);
    if (recorded && this.#record.updatedAt === 0) this.#record = recorded;
  }

  /** Folds a finished pass in (the daemon's onPass). */
  recordPass(result: PassResult, report: PassReport): void {
    const at = this.#options.clock.now();
    // A pass that threw has no projects and no plan: keep its failure, change nothing else.
    if (result.result === 'failed' && result.projects.length === 0 && result.plan.entries.length === 0) {
      this.#record = foldFailure(this.#record, `the ${report.priority} pass failed (see the daemon's log)`, at);
    } else {
      this.#record = foldPass(this.#record, result, { ...(report.projects ? { projects: report.projects } : {}), ...(report.revision ? { revision: report.revision } : {}) }, at);
    }
    const projects = this.#options.live().projects;
    if (projects) this.#record = retainProjects(this.#record, projects);
    this.#writer.write(this.#record);
  }

  /** Folds a reading of the checkout in (the daemon's onManifests): a broken revision, or a clean one that clears it. */
  recordManifests(revision: string | undefined, errors: readonly ManifestError[]): void {
    const next = foldManifests(this.#record, revision, errors, this.#options.clock.now());
    if (next === this.#record) return;
    this.#record = next;
    this.#writer.write(this.#record);
  }

  /** The record as folded so far. */
  record(): StatusRecord {
    return this.#record;
  }

  view(): FleetView {
    const live = this.#options.live();
    return buildFleetView(this.#record, {
      now: this.#options.clock.now(),
      source: 'daemon',
      ...(live.revision ? { revision: live.revision } : {}),
      ...(live.projects ? { projects: live.projects } : {}),
      freshness: live.freshness,
      dryRun: this.#options.dryRun,
      ...(this.#options.shard ? { shard: this.#options.shard } : {}),
      ...(live.rollouts ? { rollouts: live.rollouts } : {}),
    });
  }

  /** Resolves when the newest record is on disk. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }
}
