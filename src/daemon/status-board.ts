// The daemon's view of the fleet for `GET /status` and the status page: every finished pass and
// every reading of the checkout (a broken revision) is folded into the status record through
// the conductor's writer (src/run/status-recorder.ts: kept in memory and written to the state
// directory, so that `reconcile status` can read it without the daemon), and a view is built
// from it on request.
import type { PassResult } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { buildFleetView, type FleetView, type FreshnessView, type RolloutView } from '../status/fleet-view.js';
import type { ManifestError } from '../manifests/types.js';
import type { StatusRecord } from '../status/status-record.js';
import type { StatusRecorder } from '../run/status-recorder.js';
import type { PassReport } from './controller.js';

export interface StatusBoardOptions {
  /** The run's writer of the status record. */
  recorder: StatusRecorder;
  clock: Clock;
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

  constructor(options: StatusBoardOptions) {
    this.#options = options;
  }

  /** Starts from what the state directory holds (the last view before a restart). */
  load(): Promise<void> {
    return this.#options.recorder.load();
  }

  /** Folds a finished pass in (the daemon's onPass); only the current revision's projects are kept. */
  recordPass(result: PassResult, report: PassReport): void {
    const { recorder } = this.#options;
    const keep = this.#options.live().projects;
    // A pass that threw has no projects and no plan: keep its failure, change nothing else.
    if (result.result === 'failed' && result.projects.length === 0 && result.plan.entries.length === 0) {
      recorder.recordFailure(`the ${report.priority} pass failed (see the daemon's log)`, keep);
    } else {
      recorder.recordPass(result, { ...(report.projects ? { projects: report.projects } : {}), ...(report.revision ? { revision: report.revision } : {}) }, keep);
    }
  }

  /** Folds a reading of the checkout in (the daemon's onManifests): a broken revision, or a clean one that clears it. */
  recordManifests(revision: string | undefined, errors: readonly ManifestError[]): void {
    this.#options.recorder.recordManifests(revision, errors);
  }

  /** The record as folded so far. */
  record(): StatusRecord {
    return this.#options.recorder.record();
  }

  view(): FleetView {
    const live = this.#options.live();
    return buildFleetView(this.record(), {
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
    return this.#options.recorder.flush();
  }
}
