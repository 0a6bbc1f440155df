import type { ManifestError, ManifestSet } from '../manifests/types.js';
import type { Logger, PassResult, ProjectObservation } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { projectChanges, projectNames, snapshotFiles, type SourceSnapshot, type TreeFingerprint } from './change-set.js';
import type { CronTrigger } from './cron-trigger.js';
import { debounce, type Debouncer } from './debounce.js';
import { DriftSweep, type RecheckSource } from './drift-sweep.js';
import { ContinuousResync, type FreshnessPlan, type ResyncSchedule } from './resync-scheduler.js';
import type { DaemonMetrics, DaemonObservation } from './metrics.js';
import { logPass } from './pass-log.js';
import { WriteLedger } from './write-ledger.js';
import { FLEET_KEY, ProjectLocks } from './project-locks.js';
import { loadStable, type LoadManifests } from './source-loader.js';
import type { SourceWatcher } from './source-watcher.js';
import type { PassReport, PassTrigger } from '../notify/events.js';
import { openStateStore } from '../reconcile/state.js';
import { rolloutConfig } from '../reconcile/rollout/config.js';
import type { RolloutSummary } from '../reconcile/rollout/gate.js';
import { loadInventory } from '../reconcile/inventory.js';
import { revisionOfSet } from '../reconcile/document-files.js';
import { addApproval, readAppliedRules, resumeRollout, type ResumeAnswer } from '../reconcile/rollout/records.js';

/** What the daemon asks of a pass (the engine's PassOptions minus what the daemon wires itself). */
export interface DaemonPassRequest {
  manifests: ManifestSet;
  priority: 'write' | 'drift';
  /** Limit the pass to these project manifest names; undefined: everything. */
  projects?: string[];
  signal: AbortSignal;
}

type DaemonRunPass = (request: DaemonPassRequest) => Promise<PassResult>;

export type { PassReport, PassTrigger } from '../notify/events.js';

/** What an on-demand request asks for: some projects, or the newest revision (a push's commit, when known). */
export interface PassRequest {
  projects?: string[];
  revision?: string;
}

/** `reconcile approve`: a revision (default the current one), optionally some projects, and the token's name. */
export interface ApproveRequest {
  revision?: string;
  projects?: string[];
  by: string;
}

export type ApproveAnswer =
  | { status: 'approved'; revision: string; projects: string[] | 'all' }
  /** The revision named is not the one the daemon works from: an approval expires with its revision. */
  | { status: 'stale-revision'; revision: string; current: string }
  | { status: 'unknown-projects'; projects: string[]; known: string[] }
  | { status: 'no-rollout' }
  | { status: 'not-ready' };

export type PassRequestAnswer =
  /**
   * `pass`: the on-demand pass that covers the request (numbered per process). `queued`: it starts
   * when the running pass over the same projects ends; `joined`: it was already asked for (the
   * request added nothing new). Absent for the pass of a revision read just now.
   */
  | { status: 'started'; projects: string[] | 'all'; revision?: string; pass?: number; queued?: boolean; joined?: boolean }
  /** The checkout does not have the commit yet: it is read again (backing off) until it does. */
  | { status: 'waiting'; revision: string; current?: string }
  /** The checkout is already at the commit: its pass has run or is running. */
  | { status: 'current'; revision: string }
  /**
   * A pass that covers these projects finished less than the trigger interval ago, with no new
   * revision since: that pass is the answer (its number and result), nothing starts, and
   * `nextPassAt` says when a request may start one again.
   */
  | { status: 'recent'; projects: string[] | 'all'; revision?: string; pass: number; result: PassResult['result']; finishedAt: string; nextPassAt: string; retryAfterSeconds: number }
  /** `known`: the Project manifest names there are, for the answer's suggestions. */
  | { status: 'unknown-projects'; projects: string[]; known: string[] }
  | { status: 'not-ready' };

/**
 * The observed-only reads of a drift re-check (`--observe`: service health, network bans, ...):
 * given the projects a pass saw, returns their observations with health and the facts read
 * filled in. Never throws for a failed read.
 */
export type DaemonObserve = (projects: ProjectObservation[], signal: AbortSignal) => Promise<DaemonObservation[]>;

interface DaemonOptions {
  /** The manifests path as given (a directory or a git-sync link). */
  manifestsPath: string;
  runPass: DaemonRunPass;
  /** Observed-only reads after each drift re-check (`--observe`); none when absent. */
  observe?: DaemonObserve;
  /** Requests `observe` sends per project (one per fact read): the drift pacing counts them. Default 1 with `observe`, else 0. */
  observeReadsPerProject?: number;
  loadManifests: LoadManifests;
  metrics: DaemonMetrics;
  log: Logger;
  clock: Clock;
  /** The drift re-check schedule: cron ticks, or `continuous` (oldest observation first, with the spare budget). */
  trigger: CronTrigger | 'continuous';
  /** The effective request budget (the client's). */
  budget(): { limit: number; windowMs: number };
  /** Starts watching the source; `onEvent` is called for every file event. */
  watch?(path: string, onEvent: () => void): Promise<SourceWatcher>;
  allowEmpty?: boolean;
  dryRun?: boolean;
  /** Quiet time after the last file event before reading the tree (default 2 s). */
  debounceMs?: number;
  /** Longest a burst may postpone the read (default 15 s). */
  maxDebounceMs?: number;
  /** Wait before re-reading a tree that moved during the read (default 500 ms). */
  settleMs?: number;
  /** Called with every finished pass (notifications); must return at once and never throw. */
  onPass?(result: PassResult, report: PassReport): void;
  /**
   * Called after every reading of the checkout that loaded: with its errors (none: it loaded
   * cleanly), and the last good revision, still applied. Must return at once and never throw.
   */
  onManifests?(check: { revision?: string; errors: readonly ManifestError[]; lastGood?: string }): void;
  /** Longest time a push's commit is waited for in the checkout (default 5 min). */
  revisionWaitMs?: number;
  /** Share of the budget drift re-checks may use (default 0.8). */
  driftShare?: number;
  /** Smallest spacing between drift slices (default 5 s). */
  minSliceSpacingMs?: number;
  /** `--max-observation-age`: a floor above it is logged as a warning (the budget cannot meet it). */
  maxObservationAgeMs?: number;
  /** Called after each pass with the projects' observation times and the stated bound (the freshness file). */
  onFreshness?(freshness: Freshness): void;
  /** The state directory: approvals and resumes are recorded there (`POST /approve`, `POST /resume`). */
  stateDir?: string;
  /** The clock a rollout's soaks and windows are timed on (default `clock`; the sandbox's runs at its lifecycle speed). */
  rolloutClock?: Clock;
  /**
   * `--trigger-interval`: an on-demand request for projects that a pass finished less than this
   * long ago, with no new revision since, is answered with that pass and starts nothing (default
   * DEFAULT_TRIGGER_INTERVAL_MS).
   */
  triggerIntervalMs?: number;
}

/** The default of `--trigger-interval`: 30 s between on-demand passes over the same projects of one revision. */
export const DEFAULT_TRIGGER_INTERVAL_MS = 30_000;

/** An on-demand pass that ended: what a request within the trigger interval is answered with. */
interface FinishedOnDemand {
  id: number;
  result: PassResult['result'];
  finishedAt: number;
  /** The revision the pass worked from (the commit, or the digest of the documents and their files). */
  revision: string;
}

/** How fresh the daemon's view of the fleet is. */
export interface Freshness {
  /** Last observation of each project (ms since the epoch). */
  observedAt: Record<string, number>;
  /** The floor of the largest observation age the budget allows, ms (undefined before it is known). */
  boundMs?: number;
}

export interface Readiness {
  ready: boolean;
  reasons: string[];
}

interface OnDemandPass {
  id: number;
  /** undefined: everything. */
  projects: string[] | undefined;
}

/** Requests one project's re-check pass costs before any was measured (the observed-only reads come on top). */
const DEFAULT_READS_PER_PROJECT = 8;

/**
 * The daemon's core: keeps the last good desired state, turns file events into passes over what
 * changed (write priority), re-checks drift on the schedule (drift priority, paced), and runs
 * one pass at a time per project.
 */
export class Daemon {
  readonly #options: DaemonOptions;
  readonly #locks = new ProjectLocks();
  readonly #shutdown = new AbortController();
  readonly #sweep: ResyncSchedule;
  readonly #continuous: ContinuousResync | undefined;
  /** The stated bound: the schedule's floor plus the delay of the writes in flight and recent. */
  #boundMs: number | undefined;
  /** The schedule's floor alone (the budget's re-check cycle). */
  #baseBoundMs: number | undefined;
  readonly #writes = new WriteLedger();
  #restate: (() => void) | undefined;
  readonly #observedAt = new Map<string, number>();
  readonly #debouncer: Debouncer;
  readonly #passes = new Set<Promise<unknown>>();
  #watcher: SourceWatcher | undefined;
  #current: (SourceSnapshot & { revision?: string; gateRevision: string }) | undefined;
  #reloading: Promise<void> | undefined;
  #reloadAgain = false;
  /** Measured cost of a re-check pass per project (moving average); the observed-only reads are added to it, not measured. */
  #passReadsPerProject = DEFAULT_READS_PER_PROJECT;
  readonly #observeReadsPerProject: number;
  #stopped = false;
  /** A pushed commit the checkout does not have yet, and how to stop waiting for it. */
  #awaited: { revision: string; cancel: () => void } | undefined;
  /** The pass a rollout asked for (the end of a soak, a window that opens), and how to cancel it. */
  #rolloutTimer: { at: number; cancel: () => void } | undefined;
  #rollout: RolloutSummary | undefined;
  /** On-demand passes by project set (`*`: everything): at most one running and one queued each. */
  readonly #onDemand = new Map<string, { running?: OnDemandPass; queued?: OnDemandPass }>();
  #onDemandCount = 0;
  /** The last on-demand pass that ended, by project set (`*`: everything). */
  readonly #finishedOnDemand = new Map<string, FinishedOnDemand>();

  constructor(options: DaemonOptions) {
    this.#options = options;
    const observeReads = options.observe ? (options.observeReadsPerProject ?? 1) : 0;
    if (!(Number.isInteger(observeReads) && observeReads >= 0)) {
      throw new TypeError(`Expected \`observeReadsPerProject\` to be a non-negative integer, got \`${String(options.observeReadsPerProject)}\``);
    }
    this.#observeReadsPerProject = observeReads;
    this.#debouncer = debounce(() => this.reload(), {
      clock: options.clock,
      quietMs: options.debounceMs ?? 2_000,
      maxWaitMs: options.maxDebounceMs ?? 15_000,
    });
    const projects = () => (this.#current ? projectNames(this.#current.set) : []);
    const isBusy = (project: string) => this.#locks.busy([project]);
    const source: RecheckSource = {
      clock: options.clock,
      projects,
      runSlice: (slice, signal) => this.#driftSlice(slice, signal),
      budget: options.budget,
      readsPerProject: () => this.readsPerProject(),
      isBusy,
      ...(options.driftShare !== undefined ? { driftShare: options.driftShare } : {}),
      ...(options.minSliceSpacingMs !== undefined ? { minSpacingMs: options.minSliceSpacingMs } : {}),
    };
    if (options.trigger === 'continuous') {
      this.#continuous = new ContinuousResync({ ...source, onPlan: (plan) => this.#setBound(plan.boundMs) });
      this.#sweep = this.#continuous;
    } else {
      this.#continuous = undefined;
      this.#sweep = new DriftSweep({
        ...source,
        trigger: options.trigger,
        onPacing: (pacing) => {
          // A cron sweep re-checks each project once per sweep, and a sweep takes its slices' spacing each.
          this.#setBound(pacing.spacingMs * Math.ceil(Math.max(pacing.due, projects().length) / pacing.sliceSize));
          if (pacing.overBudget) {
            options.log.warn(
              { due: pacing.due, sliceSize: pacing.sliceSize, spacingMs: Math.round(pacing.spacingMs) },
              'drift re-checks need more requests than the budget allows in one interval; observation ages will grow',
            );
          }
        },
      });
    }
  }

  #setBound(boundMs: number): void {
    if (!Number.isFinite(boundMs)) return;
    const limit = this.#options.maxObservationAgeMs;
    const wasOver = limit !== undefined && this.#baseBoundMs !== undefined && this.#baseBoundMs > limit;
    this.#baseBoundMs = boundMs;
    this.#stateBound();
    if (limit !== undefined && boundMs > limit && !wasOver) {
      this.#options.log.warn(
        { boundSeconds: Math.round(boundMs / 1000), maxObservationAgeSeconds: limit / 1000 },
        'the request budget cannot re-observe every project within --max-observation-age',
      );
    }
  }

  /** Re-check reads per ms: the drift share of the budget. */
  #recheckRate(): number {
    const { limit, windowMs } = this.#options.budget();
    return (limit * (this.#options.driftShare ?? 0.8)) / windowMs;
  }

  /**
   * States the bound: the schedule's floor, plus the time the write passes in flight and recent
   * take from re-checks (their requests ÷ the re-check rate), since every write request is sent
   * ahead of a re-check read. Restated when a write pass starts or ends, with every plan, and
   * when a past pass stops counting.
   */
  #stateBound(): void {
    const base = this.#baseBoundMs;
    if (base === undefined) return;
    const { clock, metrics } = this.#options;
    const rate = this.#recheckRate();
    const pending = this.#writes.pendingRequests(clock.now(), base, rate);
    const stated = base + (rate > 0 ? pending / rate : 0);
    if (stated !== this.#boundMs) {
      this.#boundMs = stated;
      metrics.setObservationAgeBound(stated / 1000);
    }
    this.#restate?.();
    this.#restate = undefined;
    const expiry = this.#writes.nextExpiry(base, rate);
    if (expiry !== undefined && !this.#stopped) this.#restate = clock.schedule(() => this.#stateBound(), Math.max(0, expiry - clock.now()) + 1);
  }

  /** The stated bound of the largest observation age, ms: the floor plus the writes' delay (undefined until the schedule has planned). */
  observationAgeBound(): number | undefined {
    return this.#boundMs;
  }

  /** The continuous schedule's current plan (undefined with a cron schedule). */
  freshnessPlan(): FreshnessPlan | undefined {
    return this.#continuous?.plan();
  }

  /** Loads the manifests, applies them (one pass over everything), then watches and schedules. */
  async start(): Promise<void> {
    if (this.#options.watch) {
      this.#watcher = await this.#options.watch(this.#options.manifestsPath, () => this.#debouncer.trigger());
    }
    await this.reload();
    if (!this.#stopped) this.#sweep.start();
  }

  /** The desired state the daemon works from (the last revision that loaded cleanly). */
  current(): { set: ManifestSet; revision?: string } | undefined {
    return this.#current;
  }

  readiness(): Readiness {
    return this.#current ? { ready: true, reasons: [] } : { ready: false, reasons: ['no manifests loaded yet'] };
  }

  /** Reads the source now (file events arrive through the debouncer). Serialized: one read at a time. */
  reload(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#reloading) {
      this.#reloadAgain = true;
      return this.#reloading;
    }
    this.#reloading = (async () => {
      do {
        this.#reloadAgain = false;
        try {
          await this.#reloadOnce();
        } catch (error) {
          if (this.#stopped) return;
          this.#options.log.error({ err: error }, 'reading the manifests failed; keeping the last good state');
        }
      } while (this.#reloadAgain && !this.#stopped);
    })().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #reloadOnce(): Promise<void> {
    const { log, metrics } = this.#options;
    const loaded = await loadStable(this.#options.manifestsPath, {
      load: this.#options.loadManifests,
      clock: this.#options.clock,
      eventCount: this.#watcher ? () => this.#watcher!.eventCount() : undefined,
      settleMs: this.#options.settleMs,
      signal: this.#shutdown.signal,
    });
    if (loaded.kind === 'vanished') {
      log.warn({ path: loaded.path }, 'the manifests directory is missing; keeping the last good state, nothing is pruned');
      return;
    }
    if (loaded.kind === 'unstable') {
      log.warn({ path: loaded.path, attempts: loaded.attempts }, 'the manifests kept changing while being read; will read again');
      this.#debouncer.trigger();
      return;
    }
    const { set, revision } = loaded;
    if (set.errors.length > 0) {
      metrics.setManifestErrors(set.errors.length);
      // Broken while a last good revision stays applied (before the first good one, nothing is).
      metrics.setRevisionBroken(this.#current !== undefined);
      metrics.recordInvalidRevision();
      this.#options.onManifests?.({ ...(revision !== undefined ? { revision } : {}), errors: set.errors, ...(this.#current?.revision !== undefined ? { lastGood: this.#current.revision } : {}) });
      for (const error of set.errors) {
        log.error(
          { file: error.file, line: error.line, column: error.column, field: error.path, hint: error.hint, revision, detail: error.message },
          'manifest error',
        );
      }
      log.error(
        { revision, errors: set.errors.length, keeping: this.#current?.revision },
        'the revision has manifest errors; nothing from it is applied, the last good state stays',
      );
      return;
    }
    metrics.setManifestErrors(0);
    metrics.setRevisionBroken(false);
    this.#options.onManifests?.({ ...(revision !== undefined ? { revision } : {}), errors: [] });
    // For a shard, the whole checkout counts: a shard whose projects all moved away hands them over.
    if (set.documents.length === 0 && (set.shard?.elsewhere.length ?? 0) === 0 && !this.#options.allowEmpty) {
      log.warn({ revision, root: set.root }, 'the manifest set is empty; keeping the last good state, nothing is pruned (--allow-empty lets it prune)');
      return;
    }
    let files: TreeFingerprint;
    try {
      files = await snapshotFiles(set, loaded.resolved);
    } catch {
      // Without digests the change cannot be narrowed down: the revision gets a pass over everything.
      files = new Map();
    }
    // Without git, the revision is the documents and every file they read.
    const next = { set, files, revision, gateRevision: revision ?? (await revisionOfSet(set)) };
    const previous = this.#current;
    this.#current = next;
    metrics.setSourceRevision(revision);
    metrics.retainProjects(projectNames(set));

    if (!previous) {
      log.info({ revision, documents: set.documents.length }, 'manifests loaded');
      this.#spawn(this.#writePass(undefined, 'revision'));
      return;
    }
    const changes = previous.files.size === 0 || files.size === 0 ? undefined : projectChanges(previous, next);
    if (changes && !changes.everything && changes.projects.size === 0) {
      if (changes.files.size > 0 || revision !== previous.revision) {
        log.info({ revision, files: changes.files.size }, 'new revision changes no project; nothing to apply');
      }
      return;
    }
    // A rollout orders every project: a new revision restarts it from the first wave, so its pass covers them all.
    const ordered = set.documents.some((document) => document.kind === 'Rollout');
    const scope = changes && !changes.everything && !ordered ? [...changes.projects].filter((p) => projectNames(set).includes(p)) : undefined;
    log.info({ revision, previous: previous.revision, projects: scope ?? 'all' }, 'new revision');
    this.#spawn(
      this.#writePass(scope, 'revision').then(() => {
        // What the revision did not touch is re-checked in the background, paced.
        if (scope) this.#sweep.enqueue(projectNames(set).filter((p) => !scope.includes(p)));
      }),
    );
  }

  #spawn(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => this.#options.log.error({ err: error }, 'pass failed unexpectedly'));
    this.#passes.add(tracked);
    void tracked.finally(() => this.#passes.delete(tracked));
  }

  async #writePass(projects: string[] | undefined, trigger: PassTrigger): Promise<PassResult | undefined> {
    const signal = this.#shutdown.signal;
    const keys = projects ?? [FLEET_KEY, ...(this.#current ? projectNames(this.#current.set) : [])];
    let release: () => void;
    try {
      release = await this.#locks.acquire(keys, signal);
    } catch {
      return undefined;
    }
    try {
      if (signal.aborted || !this.#current) return undefined;
      // Until it ends: a re-check's reads, one write and its read-back per project it covers.
      const covered = projects?.length ?? projectNames(this.#current.set).length;
      const entry = this.#writes.start(this.#options.clock.now(), 1 + covered * (this.readsPerProject() + 2));
      this.#stateBound();
      let result: PassResult | undefined;
      try {
        result = await this.#run({ manifests: this.#current.set, priority: 'write', projects, signal }, this.#current.revision, trigger);
      } finally {
        this.#writes.finish(entry, this.#options.clock.now(), result?.requests);
        this.#stateBound();
      }
      return result;
    } finally {
      release();
    }
  }

  async #driftSlice(projects: string[], signal: AbortSignal): Promise<void> {
    if (!this.#current || signal.aborted) return;
    // A project already in a pass is being observed right now; a fleet pass covers everything.
    if (this.#locks.busy([FLEET_KEY])) return;
    const free = projects.filter((p) => !this.#locks.busy([p]));
    if (free.length === 0) return;
    const release = this.#locks.tryAcquire(free)!;
    const work = (async () => {
      try {
        const result = await this.#run({ manifests: this.#current!.set, priority: 'drift', projects: free, signal }, this.#current!.revision, 'resync');
        if (!result) return;
        // The pass's own reads are measured; the observed-only reads have a known cost, added in readsPerProject().
        this.#passReadsPerProject = 0.7 * this.#passReadsPerProject + 0.3 * Math.max(1, result.requests / free.length);
        if (this.#options.observe && !signal.aborted) {
          const seen = result.projects.filter((project) => project.ref !== undefined);
          try {
            this.#options.metrics.setProjectObservations(await this.#options.observe(seen, signal));
          } catch (error) {
            if (!signal.aborted) this.#options.log.warn({ err: error, projects: free }, 'observed-only reads failed');
          }
        }
      } finally {
        release();
      }
    })();
    this.#passes.add(work);
    try {
      await work;
    } catch (error) {
      this.#options.log.error({ err: error }, 'drift re-check failed unexpectedly');
    } finally {
      this.#passes.delete(work);
    }
  }

  async #run(request: DaemonPassRequest, revision: string | undefined, trigger: PassTrigger): Promise<PassResult | undefined> {
    const { log, metrics, clock } = this.#options;
    const startedAt = clock.now();
    let result: PassResult;
    try {
      result = await this.#options.runPass(request);
    } catch (error) {
      if (request.signal.aborted) {
        log.info({ priority: request.priority, projects: request.projects ?? 'all' }, 'pass abandoned at shutdown');
        return undefined;
      }
      log.error({ err: error, priority: request.priority, projects: request.projects ?? 'all' }, 'pass failed');
      const failed = failedResult(startedAt, clock.now(), revision, this.#options.dryRun ?? false);
      metrics.recordPass(failed, { projects: [], trigger });
      this.#report(failed, { priority: request.priority, trigger, projects: request.projects, revision });
      return undefined;
    }
    metrics.recordPass(result, { projects: request.projects, trigger });
    this.#recordObservations(request, result);
    this.#scheduleRollout(result);
    logPass(log, result, { priority: request.priority, trigger, projects: request.projects, revision });
    this.#report(result, { priority: request.priority, trigger, projects: request.projects, revision });
    return result;
  }

  /** Feeds the continuous schedule (what was seen, what drifted, what writes spent) and the freshness file. */
  #recordObservations(request: DaemonPassRequest, result: PassResult): void {
    if (result.result === 'invalid') return;
    const seen = request.projects ?? result.projects.map((project) => project.name);
    // Drifted, converging or not yet readable (pending): each is checked again sooner.
    const drifted = new Set<string>();
    for (const entry of result.plan.entries) {
      if (entry.project !== undefined && (entry.action !== 'noop' || entry.pending)) drifted.add(entry.project);
    }
    for (const project of seen) {
      const at = result.projects.find((p) => p.name === project)?.observedAt ?? result.finishedAt;
      this.#observedAt.set(project, at);
      this.#continuous?.observed([project], at, drifted);
    }
    if (this.#current) {
      const names = new Set(projectNames(this.#current.set));
      for (const project of [...this.#observedAt.keys()]) if (!names.has(project)) this.#observedAt.delete(project);
    }
    this.#options.onFreshness?.({
      observedAt: Object.fromEntries(this.#observedAt),
      ...(this.#boundMs !== undefined ? { boundMs: this.#boundMs } : {}),
    });
  }

  /** The rollout as the last pass left it (status, tests). */
  rollout(): RolloutSummary | undefined {
    return this.#rollout;
  }

  /**
   * A rollout moves on by itself at the end of a soak (a pass over everything) and when a
   * window opens (a pass over the projects whose changes wait for it, so they go first).
   */
  #scheduleRollout(result: PassResult): void {
    if (result.result === 'invalid') return;
    this.#rollout = result.rollout;
    const next = result.rollout?.next;
    if (this.#stopped || (this.#options.dryRun ?? false)) return;
    if (!next) {
      if (!result.rollout) this.#cancelRolloutTimer();
      return;
    }
    if (this.#rolloutTimer && this.#rolloutTimer.at <= next.at) return;
    this.#cancelRolloutTimer();
    const clock = this.#options.rolloutClock ?? this.#options.clock;
    const projects = next.reason === 'window' ? next.projects : undefined;
    const cancel = clock.schedule(() => {
      this.#rolloutTimer = undefined;
      this.#options.log.info({ reason: next.reason, projects: projects ?? 'all' }, next.reason === 'window' ? 'a maintenance window opens: its waiting changes go first' : 'rollout gate due');
      this.#spawn(this.#writePass(projects && projects.length > 0 ? projects : undefined, 'revision'));
    }, Math.max(0, next.at - clock.now()));
    this.#rolloutTimer = { at: next.at, cancel };
  }

  #cancelRolloutTimer(): void {
    this.#rolloutTimer?.cancel();
    this.#rolloutTimer = undefined;
  }

  /** The revision the gate keys rollouts and approvals by: the commit, or a digest of the documents and every file they read. */
  #revisionOf(current: { gateRevision: string }): string {
    return current.gateRevision;
  }

  /**
   * `POST /approve`: records an approval of the current revision (for some projects or all),
   * by the token's name, then runs a pass that applies what it covers. An approval for another
   * revision is refused: it expires with its revision.
   */
  async approve(request: ApproveRequest): Promise<ApproveAnswer> {
    const current = this.#current;
    if (this.#stopped || !current || !this.#options.stateDir) return { status: 'not-ready' };
    // A revision that removed the Rollout is still held by its rules as last applied: approvable.
    if (!rolloutConfig(current.set.documents) && (await readAppliedRules(openStateStore(this.#options.stateDir)))?.rollout === undefined) return { status: 'no-rollout' };
    const revision = this.#revisionOf(current);
    if (request.revision !== undefined && request.revision !== revision && !sameRevision(current.revision, request.revision)) {
      return { status: 'stale-revision', revision: request.revision, current: revision };
    }
    // A removed project's deletion may wait for an approval too: the inventory still names it.
    const names = [...new Set([...projectNames(current.set), ...Object.keys((await loadInventory(openStateStore(this.#options.stateDir))).projects)])];
    if (request.projects) {
      const unknown = request.projects.filter((project) => !names.includes(project));
      if (unknown.length > 0) return { status: 'unknown-projects', projects: unknown, known: names };
    }
    const projects = request.projects ? [...new Set(request.projects)] : undefined;
    await addApproval(openStateStore(this.#options.stateDir), {
      revision,
      ...(projects ? { projects } : {}),
      at: (this.#options.rolloutClock ?? this.#options.clock).now(),
      by: request.by,
    });
    this.#options.log.info({ revision, projects: projects ?? 'all', by: request.by }, 'changes approved');
    this.#coalesce(projects);
    return { status: 'approved', revision, projects: projects ?? 'all' };
  }

  /**
   * `POST /resume`: a person decided the halted wave may count as passed; the next wave starts
   * with a pass over everything. Taken under every project's lock, so no pass moves the rollout meanwhile.
   */
  async resume(request: { rollout?: string; revision?: string; by: string }): Promise<ResumeAnswer | { status: 'not-ready' }> {
    const current = this.#current;
    if (this.#stopped || !current || !this.#options.stateDir) return { status: 'not-ready' };
    const config = rolloutConfig(current.set.documents);
    let release: () => void;
    try {
      release = await this.#locks.acquire([FLEET_KEY, ...projectNames(current.set)], this.#shutdown.signal);
    } catch {
      return { status: 'not-ready' };
    }
    let answer: ResumeAnswer;
    try {
      const given = request.revision;
      const revision = given !== undefined ? { given, matches: (halted: string) => halted === given || sameRevision(halted, given) } : undefined;
      answer = await resumeRollout(openStateStore(this.#options.stateDir), request.rollout, config?.name, request.by, (this.#options.rolloutClock ?? this.#options.clock).now(), revision);
    } finally {
      release();
    }
    if (answer.status === 'resumed') {
      this.#options.log.info({ rollout: answer.rollout, wave: answer.wave, next: answer.next, by: request.by }, 'rollout resumed');
      this.#coalesce(undefined);
    }
    return answer;
  }

  #report(result: PassResult, report: PassReport): void {
    try {
      this.#options.onPass?.(result, report);
    } catch (error) {
      this.#options.log.error({ err: error }, 'reporting a pass failed');
    }
  }

  /**
   * An on-demand pass (`POST /reconcile`, a push webhook). The checkout is read first, so a
   * revision already on disk is what runs; a new revision starts its own pass there. Named
   * projects get a write-priority pass at once. A pushed commit the checkout does not have yet
   * is waited for: the checkout is read again, backing off, until it has it (its pass then runs
   * as for any new revision) or `revisionWaitMs` passes.
   */
  async requestPass(request: PassRequest): Promise<PassRequestAnswer> {
    if (this.#stopped) return { status: 'not-ready' };
    const before = this.#current?.revision;
    await this.reload();
    const current = this.#current;
    if (!current || this.#stopped) return { status: 'not-ready' };
    const names = projectNames(current.set);
    if (request.projects) {
      const unknown = request.projects.filter((project) => !names.includes(project));
      if (unknown.length > 0) return { status: 'unknown-projects', projects: unknown, known: names };
      const recent = this.#recentPass([...new Set(request.projects)], request.projects);
      if (recent) return recent;
      const pass = this.#coalesce([...new Set(request.projects)]);
      return { status: 'started', projects: request.projects, ...(current.revision ? { revision: current.revision } : {}), ...pass };
    }
    if (request.revision) {
      if (sameRevision(current.revision, request.revision)) {
        this.#stopAwaiting();
        return { status: 'current', revision: current.revision! };
      }
      this.#awaitRevision(request.revision);
      return { status: 'waiting', revision: request.revision, ...(current.revision ? { current: current.revision } : {}) };
    }
    // A revision read just now has its own pass: a second one over everything would repeat it.
    if (current.revision !== before) return { status: 'started', projects: 'all', ...(current.revision ? { revision: current.revision } : {}) };
    const recent = this.#recentPass(undefined, 'all');
    if (recent) return recent;
    const pass = this.#coalesce(undefined);
    return { status: 'started', projects: 'all', ...(current.revision ? { revision: current.revision } : {}), ...pass };
  }

  /**
   * An on-demand pass of these projects (undefined: everything), coalesced: a request that a
   * queued pass already covers (the same projects, or everything) joins it; otherwise it queues
   * behind the running pass of the same projects, or starts. So each set of projects has at most
   * one pass running and one waiting, however many requests arrive.
   */
  #coalesce(projects: string[] | undefined): { pass: number; queued: boolean; joined: boolean } {
    const key = projects ? [...projects].sort().join(',') : '*';
    const covering = this.#onDemand.get('*')?.queued ?? this.#onDemand.get(key)?.queued;
    if (covering) return { pass: covering.id, queued: true, joined: true };
    const slot = this.#onDemand.get(key) ?? {};
    this.#onDemand.set(key, slot);
    const pass: OnDemandPass = { id: ++this.#onDemandCount, projects };
    if (slot.running) {
      slot.queued = pass;
      return { pass: pass.id, queued: true, joined: false };
    }
    slot.running = pass;
    this.#startOnDemand(key, slot);
    return { pass: pass.id, queued: false, joined: false };
  }

  /**
   * The on-demand pass that answers a request for these projects (undefined: everything)
   * without starting one: it covers them (each project by a pass of a set that held it, or of
   * everything), finished less than the trigger interval ago, and the revision has not changed since; none is waiting for them
   * (then the request joins that one). One running meanwhile starts no second: a steady stream
   * of requests runs at most two passes per interval, not one after another.
   */
  #recentPass(projects: string[] | undefined, asked: string[] | 'all'): PassRequestAnswer | undefined {
    const interval = this.#options.triggerIntervalMs ?? DEFAULT_TRIGGER_INTERVAL_MS;
    const current = this.#current;
    if (interval <= 0 || !current) return undefined;
    const key = projects ? [...projects].sort().join(',') : '*';
    // A pass already waiting covers the request: it joins that one.
    if (this.#onDemand.get(key)?.queued || this.#onDemand.get('*')?.queued) return undefined;
    const now = this.#options.clock.now();
    const revision = this.#revisionOf(current);
    const fresh = [...this.#finishedOnDemand].filter(([, pass]) => pass.revision === revision && now - pass.finishedAt < interval);
    const latestOf = (covers: (passKey: string) => boolean) =>
      fresh.filter(([passKey]) => covers(passKey)).sort(([, a], [, b]) => b.finishedAt - a.finishedAt)[0]?.[1];
    // Each project asked for is covered by a recent pass of a set that held it (or of
    // everything): a request for another combination of recently passed projects starts
    // nothing, so distinct sets cannot each start a pass. The pass that answers is the one
    // whose interval ends first, a failed one before it.
    const covering = projects
      ? projects.map((project) => latestOf((passKey) => passKey === '*' || passKey.split(',').includes(project)))
      : [latestOf((passKey) => passKey === '*')];
    if (covering.some((pass) => pass === undefined)) return undefined;
    const passes = [...new Set(covering as FinishedOnDemand[])].sort((a, b) => a.finishedAt - b.finishedAt);
    const latest = passes.find((pass) => pass.result !== 'success') ?? passes[0]!;
    const next = passes[0]!.finishedAt + interval;
    return {
      status: 'recent',
      projects: asked,
      ...(current.revision ? { revision: current.revision } : {}),
      pass: latest.id,
      result: latest.result,
      finishedAt: new Date(latest.finishedAt).toISOString(),
      nextPassAt: new Date(next).toISOString(),
      retryAfterSeconds: Math.max(1, Math.ceil((next - now) / 1000)),
    };
  }

  #startOnDemand(key: string, slot: { running?: OnDemandPass; queued?: OnDemandPass }): void {
    const pass = slot.running!;
    const revision = this.#current ? this.#revisionOf(this.#current) : undefined;
    this.#spawn(
      this.#writePass(pass.projects, 'manual').then((result) => {
        if (result && revision !== undefined) {
          const now = this.#options.clock.now();
          // Only passes within the interval answer requests: older ones are forgotten.
          const interval = this.#options.triggerIntervalMs ?? DEFAULT_TRIGGER_INTERVAL_MS;
          for (const [other, finished] of this.#finishedOnDemand) if (now - finished.finishedAt >= interval) this.#finishedOnDemand.delete(other);
          this.#finishedOnDemand.set(key, { id: pass.id, result: result.result, finishedAt: now, revision });
        }
      }).finally(() => {
        slot.running = slot.queued;
        slot.queued = undefined;
        if (slot.running && !this.#stopped) this.#startOnDemand(key, slot);
        else {
          slot.running = undefined;
          this.#onDemand.delete(key);
        }
      }),
    );
  }

  #awaitRevision(revision: string): void {
    this.#stopAwaiting();
    const { clock, log } = this.#options;
    const deadline = clock.now() + (this.#options.revisionWaitMs ?? 5 * 60_000);
    let delay = 1_000;
    let cancel: () => void = () => undefined;
    const check = () => {
      if (this.#stopped || this.#awaited?.revision !== revision) return;
      void this.reload().then(() => {
        if (this.#awaited?.revision !== revision) return;
        if (sameRevision(this.#current?.revision, revision)) {
          this.#awaited = undefined;
          return;
        }
        if (clock.now() >= deadline) {
          log.info({ revision, current: this.#current?.revision }, 'the pushed commit did not reach the checkout (another branch?); stopped waiting for it');
          this.#awaited = undefined;
          return;
        }
        delay = Math.min(delay * 2, 30_000);
        cancel = clock.schedule(check, delay);
        this.#awaited = { revision, cancel: () => cancel() };
      });
    };
    cancel = clock.schedule(check, delay);
    this.#awaited = { revision, cancel: () => cancel() };
  }

  #stopAwaiting(): void {
    this.#awaited?.cancel();
    this.#awaited = undefined;
  }

  /** Resolves when no read, pass or re-check is running or waiting (tests). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#reloading) await this.#reloading;
      if (this.#passes.size > 0) await Promise.allSettled([...this.#passes]);
      await this.#sweep.idle();
      if (!this.#reloading && this.#passes.size === 0 && this.#sweep.due().length === 0) return;
    }
  }

  /** Resolves when no read or pass is running (tests and the bench: a continuous schedule is never idle). */
  async settled(): Promise<void> {
    for (;;) {
      if (this.#reloading) await this.#reloading;
      if (this.#passes.size > 0) await Promise.allSettled([...this.#passes]);
      if (!this.#reloading && this.#passes.size === 0) return;
    }
  }

  /**
   * Requests the drift pacing plans for one project's re-check: the measured pass cost plus one
   * request per observed-only fact read (`--observe`), so those reads never push the sweep past
   * the budget's drift share.
   */
  readsPerProject(): number {
    return this.#passReadsPerProject + this.#observeReadsPerProject;
  }

  /** Projects waiting for a drift re-check (tests, diagnostics). */
  driftDue(): string[] {
    return this.#sweep.due();
  }

  /** A scheduled re-check of every project, now. */
  resyncNow(): void {
    this.#sweep.tick();
  }

  /**
   * Stops taking work (watcher, schedule, pending reads), aborts the passes in flight (queued
   * requests are dropped; the client lets a request already sent finish or abandons it safely),
   * and waits for them up to `graceMs`. Returns false when something did not settle in time.
   */
  async stop(graceMs: number): Promise<boolean> {
    if (this.#stopped) return true;
    this.#stopped = true;
    this.#restate?.();
    this.#debouncer.cancel();
    this.#stopAwaiting();
    this.#cancelRolloutTimer();
    this.#shutdown.abort(new Error('shutting down'));
    const settle = Promise.allSettled([
      this.#watcher?.close(),
      this.#sweep.stop(),
      this.#reloading,
      ...this.#passes,
    ]).then(() => true);
    let cancelTimer: (() => void) | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      cancelTimer = this.#options.clock.schedule(() => resolve(false), graceMs);
    });
    const settled = await Promise.race([settle, timeout]);
    cancelTimer?.();
    return settled;
  }
}

/** Full and abbreviated commit ids name the same commit when one starts with the other. */
function sameRevision(a: string | undefined, b: string): boolean {
  if (!a || a.length < 7 || b.length < 7) return false;
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  return x.startsWith(y) || y.startsWith(x);
}

function failedResult(startedAt: number, finishedAt: number, revision: string | undefined, dryRun: boolean): PassResult {
  return {
    startedAt,
    finishedAt,
    dryRun,
    revision,
    manifestErrors: [],
    plan: { entries: [], summary: { create: 0, update: 0, delete: 0, noop: 0, blocked: 0 }, hasChanges: false },
    outcomes: [],
    resources: [],
    projects: [],
    result: 'failed',
    requests: 0,
  };
}
