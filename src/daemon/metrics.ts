import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Priority } from '../api/request.js';
import { PRIORITIES } from '../api/request.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { KindMetricDefinition, KindMetricSeries, PassResult, PlanEntry, ProjectObservation, ResourceStatus } from '../reconcile/types.js';
import { KIND_MODULES } from '../reconcile/registry.js';
import type { ObservedProjectState } from '../reconcile/kinds/observed.js';
import { isWriteOutcome } from '../reconcile/summary.js';
import { OBSERVED_METRIC_DEFINITIONS, createObservedGauges } from './observed-metrics.js';
import type { DeliveryResult, NotifierMetrics } from '../notify/notifier.js';

/** Results a reconcile attempt can end with (`invalid`: the manifests did not load, nothing ran). */
const PASS_RESULTS = ['success', 'failed', 'invalid', 'interrupted'] as const;

interface MetricDefinition {
  type: 'gauge' | 'counter' | 'histogram';
  labels: readonly string[];
  help: string;
  /** A histogram's bucket bounds, seconds. */
  buckets?: readonly number[];
}

/** The daemon's own metrics: each name, type, labels and help text written once, here. */
const DAEMON_METRICS = {
  reconciler_drift_resources: { type: 'gauge', labels: ['project', 'kind'], help: 'Managed resources whose live state differs from the manifests, by project and kind.' },
  reconciler_resource_in_sync: { type: 'gauge', labels: ['project', 'kind', 'name'], help: '1 when the resource matched its manifest at its last observation, else 0.' },
  reconciler_reconcile_total: { type: 'counter', labels: ['result'], help: 'Reconcile passes by result (success, failed, invalid: the revision did not load, interrupted: the process stopped it).' },
  reconciler_reconcile_duration_seconds: { type: 'histogram', labels: [], help: 'Duration of reconcile passes.', buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800] },
  reconciler_apply_total: { type: 'counter', labels: ['kind', 'action', 'result'], help: 'Applied changes by resource kind, action and result.' },
  reconciler_api_requests_total: { type: 'counter', labels: ['method', 'route', 'code'], help: 'Management API requests by method, route template and status code (`error`: no answer).' },
  reconciler_api_request_duration_seconds: { type: 'histogram', labels: ['method', 'route'], help: 'Management API request durations by method and route template.', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
  reconciler_api_rate_limited_total: { type: 'counter', labels: [], help: 'Answers with status 429 (the budget was spent, possibly by someone sharing the user).' },
  reconciler_api_budget_remaining: { type: 'gauge', labels: [], help: 'Requests that may still be sent in the current budget window.' },
  reconciler_api_budget_limit: { type: 'gauge', labels: [], help: 'Effective request budget per window (lowered after unexpected 429s).' },
  reconciler_queue_depth: { type: 'gauge', labels: ['priority'], help: 'Requests waiting for the budget, by priority.' },
  reconciler_observation_age_seconds: { type: 'gauge', labels: ['project'], help: 'Seconds since each project was last observed (grows when the budget cannot cover the fleet in one resync interval).' },
  reconciler_observation_age_max_seconds: { type: 'gauge', labels: [], help: 'Seconds since the least recently observed project was observed (the largest reconciler_observation_age_seconds).' },
  reconciler_observation_age_bound_seconds: { type: 'gauge', labels: [], help: 'The floor the request budget allows for the largest observation age: reads of a full re-check cycle / spare requests per second.' },
  reconciler_max_observation_age_seconds: { type: 'gauge', labels: [], help: 'The freshness --max-observation-age holds the daemon to (absent when unset).' },
  reconciler_last_success_timestamp_seconds: { type: 'gauge', labels: [], help: 'Unix time of the end of the last successful pass.' },
  reconciler_manifest_errors: { type: 'gauge', labels: [], help: 'Errors in the latest revision of the manifests (0 when it loaded cleanly).' },
  reconciler_revision_broken: { type: 'gauge', labels: [], help: 'Whether the newest revision of the checkout has manifest errors while the last good revision stays applied (1) or not (0).' },
  reconciler_source_info: { type: 'gauge', labels: ['revision'], help: 'The revision (commit) of the manifests the daemon applies; always 1.' },
  reconciler_project_status: { type: 'gauge', labels: ['project', 'status'], help: "The project's live status as last observed; always 1." },
  reconciler_project_health: { type: 'gauge', labels: ['project', 'service'], help: "1 when the project's service reported healthy at the last observation, else 0." },
  reconciler_unowned_projects: { type: 'gauge', labels: [], help: 'Projects of the manifests that the shard map gives no owner or more than one (0 without a shard map).' },
  reconciler_state_lock_held: { type: 'gauge', labels: [], help: '1 while this process holds the lock of its state directory (it may write), else 0 (waiting for another holder).' },
  reconciler_drift_detected_total: { type: 'counter', labels: ['kind', 'trigger'], help: 'Resources a pass found different from their manifest (an update planned, or an observe-only difference), by kind and trigger.' },
  reconciler_drift_repaired_total: { type: 'counter', labels: ['kind', 'trigger'], help: 'Drifted resources whose update the pass applied successfully, by kind and trigger.' },
  reconciler_resource_condition: { type: 'gauge', labels: ['project', 'kind', 'name', 'state'], help: "The resource's state at its last observation (in_sync, drifted, held, pending, failed); always 1." },
  reconciler_build_info: { type: 'gauge', labels: ['version', 'revision'], help: 'The version and source revision of this reconciler; always 1.' },
  reconciler_rollout_wave_state: { type: 'gauge', labels: ['rollout', 'wave', 'state'], help: "Each wave's state in the rollout of the current revision (waiting, applying, soaking, done, halted); always 1." },
  reconciler_changes_waiting: { type: 'gauge', labels: ['reason'], help: 'Planned changes held back by the rollout: for a maintenance window (window) or for an approval (approval).' },
  reconciler_project_revision_info: { type: 'gauge', labels: ['project', 'revision'], help: 'The revision of the manifests last applied to the project in full (a Rollout keeps it); always 1.' },
} as const satisfies Record<string, MetricDefinition>;

/** The metrics of the registry's kinds (KindModule.metrics), by name. */
const KIND_METRICS: Readonly<Record<string, KindMetricDefinition>> = Object.assign({}, ...KIND_MODULES.map((module) => module.metrics?.definitions ?? {}));

/**
 * Every metric the daemon exports (names, types and labels are the public interface: dashboards
 * and alerts depend on them; docs/operations.md's metrics table documents each).
 */
export const METRIC_DEFINITIONS = {
  ...DAEMON_METRICS,
  // The kinds' own (KindModule.metrics: the Migrations kind's pending and applied migrations).
  ...KIND_METRICS,
  // Observed-only facts (`--observe`), beyond the interface's list.
  ...OBSERVED_METRIC_DEFINITIONS,
} as const;

type DaemonMetricName = keyof typeof DAEMON_METRICS;
type NamesOf<T extends MetricDefinition['type']> = { [N in DaemonMetricName]: (typeof DAEMON_METRICS)[N]['type'] extends T ? N : never }[DaemonMetricName];

/** The prom-client metrics of the daemon's definitions, on one registry. */
function metricFactory(registry: Registry) {
  const config = (name: DaemonMetricName) => ({ name, help: DAEMON_METRICS[name].help, labelNames: [...DAEMON_METRICS[name].labels], registers: [registry] });
  return {
    gauge: (name: NamesOf<'gauge'>, collect?: (this: Gauge) => void) => new Gauge({ ...config(name), ...(collect ? { collect } : {}) }),
    counter: (name: NamesOf<'counter'>) => new Counter(config(name)),
    histogram: (name: NamesOf<'histogram'>) => new Histogram({ ...config(name), buckets: [...(DAEMON_METRICS[name] as MetricDefinition).buckets!] }),
  };
}

interface MetricsOptions {
  /** Observation ages are computed against this clock at scrape time. */
  clock?: Clock;
  /** Also export the default process metrics (CPU, memory, event loop, handles). Default true. */
  processMetrics?: boolean;
  /**
   * Export the series per resource (`reconciler_resource_in_sync`, `reconciler_resource_condition`).
   * Default true; false keeps the cardinality in the order of the projects (`--metrics-per-resource`).
   */
  perResource?: boolean;
  /** `reconciler_build_info`: the package version, and the source revision of the build when known. */
  build?: { version: string; revision: string };
}

/** What started a pass (the `trigger` label of the drift counters). */
type MetricsTrigger = 'revision' | 'resync' | 'manual';
const DRIFT_TRIGGERS: readonly MetricsTrigger[] = ['revision', 'resync', 'manual'];

/** Which part of the fleet a pass covered: a restricted pass replaces only its projects' figures. */
interface PassScope {
  /** Project manifest names the pass was limited to; undefined: the whole fleet. */
  projects?: string[];
  /** What started the pass; the drift counters count only passes that name it. */
  trigger?: MetricsTrigger;
}

/** A project's observation after a drift re-check, with the observed-only facts read (`--observe`). */
export interface DaemonObservation extends ProjectObservation {
  /** What the observed-only reads found; absent when none were made for the project. */
  observed?: ObservedProjectState;
}

export interface DaemonMetrics extends ApiTelemetry {
  readonly registry: Registry;
  /** Records a finished pass: counters, duration, per-resource state, observations. */
  recordPass(result: PassResult, scope?: PassScope): void;
  /** A revision that did not load: counted as an `invalid` reconcile; nothing else changes. */
  recordInvalidRevision(): void;
  setManifestErrors(count: number): void;
  /** Whether the newest revision is broken while the last good one stays applied. */
  setRevisionBroken(broken: boolean): void;
  /** Projects the shard map gives no owner or several (0 without a shard map). */
  setUnownedProjects(count: number): void;
  /** Whether this process holds its state directory's lock. */
  setStateLockHeld(held: boolean): void;
  setSourceRevision(revision: string | undefined): void;
  /** The floor of the largest observation age the budget allows (the drift schedule's plan), seconds. */
  setObservationAgeBound(seconds: number): void;
  /** The freshness `--max-observation-age` holds the daemon to, seconds. */
  setMaxObservationAge(seconds: number): void;
  /** Marks projects as observed at `at` (ms since epoch). */
  setObserved(projects: Iterable<string>, at: number): void;
  /**
   * Replaces the observed status and service health of projects, and their observed-only facts
   * when `observed` is present (`reconcile status`'s reads, as `--observe` selects them).
   */
  setProjectObservations(observations: DaemonObservation[]): void;
  /** Keeps only these projects in per-project series (the rest left the manifests). */
  retainProjects(projects: Iterable<string>): void;
  /** Exposition text for `/metrics`. */
  render(): Promise<string>;
  readonly contentType: string;
}

// prom-client rejects a label value that is not a string; undefined becomes the empty value,
// which Prometheus treats as an absent label (organization-level resources have no project).
function label(value: string | undefined): string {
  return value ?? '';
}

/**
 * Entries a pass found different from their manifest: an update (a resource that exists and
 * differs), or an observe-only difference. Creations and deletions are not drift, nor is the
 * configuration of a project the same pass creates (it starts from the service's defaults),
 * nor a resource converging on the service's side (pending).
 */
export function driftedEntries(result: PassResult): PlanEntry[] {
  const created = new Set(result.plan.entries.filter((entry) => entry.kind === 'Project' && entry.action === 'create').map((entry) => entry.name));
  return result.plan.entries.filter(
    (entry) =>
      !entry.pending &&
      // A change the rollout holds back is no drift: the manifests changed, not the live state.
      !(entry.held && !entry.observeOnly) &&
      !(entry.project !== undefined && created.has(entry.project)) &&
      (entry.observeOnly ? entry.changes.length > 0 : entry.action === 'update'),
  );
}

/** What the metrics remember between passes, to rebuild the per-resource and per-project series. */
interface FleetMemory {
  readonly resources: Map<string, ResourceStatus>;
  /** Resources whose latest observation found them different from their manifest, repaired since or not. */
  readonly foundDrifted: Set<string>;
  readonly observedAt: Map<string, number>;
  readonly observations: Map<string, ProjectObservation>;
  /** Kinds whose drift series exist (at 0 or more). */
  readonly countedKinds: Set<string>;
  readonly perResource: boolean;
}

/** Why a planned change waits (reconciler_changes_waiting). */
const WAITING_REASONS = ['window', 'approval'] as const;

/**
 * The series of the registry's kinds' metrics (KindModule.metrics), registered in registry
 * order, and the recording of a pass into them by each kind's own `record`.
 */
function kindSeries(registry: Registry): { record(result: PassResult, projects: readonly string[] | undefined): void } {
  const gauges = new Map<string, Gauge>();
  const counters = new Map<string, Counter>();
  const kinds = KIND_MODULES.flatMap((module) => (module.metrics ? [module.metrics] : []));
  for (const kind of kinds) {
    for (const [name, definition] of Object.entries(kind.definitions)) {
      const config = { name, help: definition.help, labelNames: [...definition.labels], registers: [registry] };
      if (definition.type === 'gauge') gauges.set(name, new Gauge(config));
      else counters.set(name, new Counter(config));
    }
  }
  const find = <T>(metrics: Map<string, T>, name: string, type: string): T => {
    const found = metrics.get(name);
    if (!found) throw new Error(`${name} is not a ${type} of a kind's metrics`);
    return found;
  };
  const series: KindMetricSeries = {
    set: (name, labels, value) => find(gauges, name, 'gauge').set(labels, value),
    inc: (name, labels, by = 1) => find(counters, name, 'counter').inc(labels, by),
    remove: (name, labels) => find(gauges, name, 'gauge').remove(labels),
  };
  return {
    record(result, projects) {
      for (const kind of kinds) kind.record(result, projects, series);
    },
  };
}

/** The daemon's prom-client metrics on `registry`, created (and so exported) in this order. */
function daemonSeries(registry: Registry, memory: FleetMemory, clock: Clock) {
  const metric = metricFactory(registry);
  return {
    driftResources: metric.gauge('reconciler_drift_resources'),
    resourceInSync: metric.gauge('reconciler_resource_in_sync'),
    reconcileTotal: metric.counter('reconciler_reconcile_total'),
    reconcileDuration: metric.histogram('reconciler_reconcile_duration_seconds'),
    applyTotal: metric.counter('reconciler_apply_total'),
    kinds: kindSeries(registry),
    apiRequests: metric.counter('reconciler_api_requests_total'),
    apiDuration: metric.histogram('reconciler_api_request_duration_seconds'),
    rateLimited: metric.counter('reconciler_api_rate_limited_total'),
    budgetRemaining: metric.gauge('reconciler_api_budget_remaining'),
    budgetLimit: metric.gauge('reconciler_api_budget_limit'),
    queueDepth: metric.gauge('reconciler_queue_depth'),
    // The observation ages are computed at scrape time.
    observationAge: metric.gauge('reconciler_observation_age_seconds', function collect() {
      this.reset();
      const now = clock.now();
      for (const [project, at] of memory.observedAt) this.set({ project }, Math.max(0, (now - at) / 1000));
    }),
    observationAgeMax: metric.gauge('reconciler_observation_age_max_seconds', function collect() {
      this.reset();
      if (memory.observedAt.size === 0) return;
      const now = clock.now();
      this.set(Math.max(0, (now - Math.min(...memory.observedAt.values())) / 1000));
    }),
    ageBound: metric.gauge('reconciler_observation_age_bound_seconds'),
    maxObservationAge: metric.gauge('reconciler_max_observation_age_seconds'),
    lastSuccess: metric.gauge('reconciler_last_success_timestamp_seconds'),
    manifestErrors: metric.gauge('reconciler_manifest_errors'),
    revisionBroken: metric.gauge('reconciler_revision_broken'),
    sourceInfo: metric.gauge('reconciler_source_info'),
    projectStatus: metric.gauge('reconciler_project_status'),
    projectHealth: metric.gauge('reconciler_project_health'),
    unownedProjects: metric.gauge('reconciler_unowned_projects'),
    stateLockHeld: metric.gauge('reconciler_state_lock_held'),
    driftDetected: metric.counter('reconciler_drift_detected_total'),
    driftRepaired: metric.counter('reconciler_drift_repaired_total'),
    resourceCondition: metric.gauge('reconciler_resource_condition'),
    buildInfo: metric.gauge('reconciler_build_info'),
    waveState: metric.gauge('reconciler_rollout_wave_state'),
    changesWaiting: metric.gauge('reconciler_changes_waiting'),
    projectRevision: metric.gauge('reconciler_project_revision_info'),
    observed: createObservedGauges(registry),
  };
}

type DaemonSeries = ReturnType<typeof daemonSeries>;

/** Series exist from the start so that rate() and absent() behave before the first event. */
function initialSeries(series: DaemonSeries, build: MetricsOptions['build']): void {
  for (const reason of WAITING_REASONS) series.changesWaiting.set({ reason }, 0);
  if (build) series.buildInfo.set(build, 1);
  for (const result of PASS_RESULTS) series.reconcileTotal.inc({ result }, 0);
  for (const priority of PRIORITIES) series.queueDepth.set({ priority }, 0);
  series.manifestErrors.set(0);
  series.revisionBroken.set(0);
  series.unownedProjects.set(0);
  series.stateLockHeld.set(0);
}

function rebuildResources(series: DaemonSeries, memory: FleetMemory): void {
  series.driftResources.reset();
  series.resourceInSync.reset();
  series.resourceCondition.reset();
  const drift = new Map<string, { project: string; kind: string; count: number }>();
  for (const status of memory.resources.values()) {
    const project = label(status.project);
    if (memory.perResource) {
      series.resourceInSync.set({ project, kind: status.kind, name: status.name }, status.state === 'in_sync' ? 1 : 0);
      series.resourceCondition.set({ project, kind: status.kind, name: status.name, state: status.state }, 1);
    }
    const key = `${project}\u0000${status.kind}`;
    const entry = drift.get(key) ?? { project, kind: status.kind, count: 0 };
    if (status.state === 'drifted' || memory.foundDrifted.has(status.id)) entry.count += 1;
    drift.set(key, entry);
  }
  for (const { project, kind, count } of drift.values()) series.driftResources.set({ project, kind }, count);
}

function rebuildObservations(series: DaemonSeries, memory: FleetMemory): void {
  series.projectStatus.reset();
  series.projectHealth.reset();
  for (const observation of memory.observations.values()) {
    if (observation.status) series.projectStatus.set({ project: observation.name, status: observation.status }, 1);
    for (const [service, healthy] of Object.entries(observation.health ?? {})) {
      series.projectHealth.set({ project: observation.name, service }, healthy ? 1 : 0);
    }
  }
}

/** The attempt itself: its result, duration, and each write it made. */
function recordAttempt(series: DaemonSeries, result: PassResult): void {
  // A pass the process's stop cut short is neither a success nor a failure.
  series.reconcileTotal.inc({ result: result.interrupted ? 'interrupted' : result.result });
  series.reconcileDuration.observe(Math.max(0, (result.finishedAt - result.startedAt) / 1000));
  if (result.result === 'success') series.lastSuccess.set(result.finishedAt / 1000);
  for (const outcome of result.outcomes) {
    // Writes only: a readiness wait is a step, and a blocked entry was never attempted (it
    // shows as reconciler_resource_in_sync 0 and fails the pass).
    if (!isWriteOutcome(outcome)) continue;
    series.applyTotal.inc({ kind: outcome.kind, action: outcome.action, result: outcome.result });
  }
}

/** The rollout: every pass of a set with a Rollout carries its whole state. */
function recordRollout(series: DaemonSeries, rollout: PassResult['rollout']): void {
  series.waveState.reset();
  series.projectRevision.reset();
  for (const reason of WAITING_REASONS) series.changesWaiting.set({ reason }, rollout?.waiting.filter((w) => w.reason === reason).length ?? 0);
  if (!rollout) return;
  for (const wave of rollout.waves) series.waveState.set({ rollout: rollout.name, wave: wave.name, state: wave.state }, 1);
  for (const [project, applied] of Object.entries(rollout.revisions)) series.projectRevision.set({ project, revision: applied.revision }, 1);
}

/** The drift counters: what the pass found drifted and repaired, under the trigger that started it. */
function recordDriftCounters(series: DaemonSeries, memory: FleetMemory, result: PassResult, drifted: readonly PlanEntry[], trigger: MetricsTrigger | undefined): void {
  // Every kind the pass planned gets its drift series at 0 for each trigger, so that the
  // first drift is an increase Prometheus sees (a series born at 1 has no increase).
  for (const kind of new Set(result.plan.entries.map((entry) => entry.kind))) {
    if (memory.countedKinds.has(kind)) continue;
    memory.countedKinds.add(kind);
    for (const each of DRIFT_TRIGGERS) {
      series.driftDetected.inc({ kind, trigger: each }, 0);
      series.driftRepaired.inc({ kind, trigger: each }, 0);
    }
  }
  if (!trigger) return;
  const repaired = new Set(result.outcomes.filter((o) => o.action === 'update' && o.result === 'success').map((o) => o.entryId));
  for (const entry of drifted) {
    series.driftDetected.inc({ kind: entry.kind, trigger });
    if (repaired.has(entry.id)) series.driftRepaired.inc({ kind: entry.kind, trigger });
  }
}

/** The resources' states; a pass limited to some projects (`covered`) says nothing about the others: their figures stay. */
function recordResources(series: DaemonSeries, memory: FleetMemory, result: PassResult, drifted: readonly PlanEntry[], covered: ReadonlySet<string> | undefined): void {
  for (const [id, status] of memory.resources) {
    if (!covered || (status.project !== undefined && covered.has(status.project))) {
      memory.resources.delete(id);
      memory.foundDrifted.delete(id);
    }
  }
  for (const entry of drifted) memory.foundDrifted.add(entry.id);
  for (const status of result.resources) memory.resources.set(status.id, status);
  rebuildResources(series, memory);
}

/** When each project the pass covered was observed, and its live status and health. */
function recordObservations(series: DaemonSeries, memory: FleetMemory, result: PassResult, covered: ReadonlySet<string> | undefined): void {
  const observedProjects = covered ?? new Set(result.projects.map((p) => p.name));
  for (const project of observedProjects) {
    const fromPass = result.projects.find((p) => p.name === project)?.observedAt;
    memory.observedAt.set(project, fromPass ?? result.finishedAt);
  }
  if (!covered) {
    for (const project of [...memory.observations.keys()]) if (!observedProjects.has(project)) memory.observations.delete(project);
  }
  for (const observation of result.projects) {
    if (observation.status !== undefined || observation.health !== undefined) memory.observations.set(observation.name, observation);
  }
  rebuildObservations(series, memory);
}

/** A finished pass: the attempt, then (when the revision loaded) the kinds' own metrics, the rollout, drift, resources and observations. */
function recordPass(series: DaemonSeries, memory: FleetMemory, result: PassResult, scope: PassScope): void {
  recordAttempt(series, result);
  if (result.result === 'invalid') return;
  series.kinds.record(result, scope.projects);
  recordRollout(series, result.rollout);
  const drifted = driftedEntries(result);
  recordDriftCounters(series, memory, result, drifted, scope.trigger);
  const covered = scope.projects ? new Set(scope.projects) : undefined;
  recordResources(series, memory, result, drifted, covered);
  recordObservations(series, memory, result, covered);
}

/** Keeps only these projects in per-project series (the rest left the manifests). */
function retainProjects(series: DaemonSeries, memory: FleetMemory, projects: Iterable<string>): void {
  const keep = new Set(projects);
  for (const project of [...memory.observedAt.keys()]) if (!keep.has(project)) memory.observedAt.delete(project);
  for (const project of [...memory.observations.keys()]) if (!keep.has(project)) memory.observations.delete(project);
  series.observed.retain(keep);
  for (const [id, status] of memory.resources) {
    if (status.project !== undefined && !keep.has(status.project)) {
      memory.resources.delete(id);
      memory.foundDrifted.delete(id);
    }
  }
  rebuildResources(series, memory);
  rebuildObservations(series, memory);
}

/**
 * Creates the daemon's metrics on `registry` (a fresh one by default, so tests and several
 * daemons in one process never share series).
 */
export function createMetrics(registry: Registry = new Registry(), options: MetricsOptions = {}): DaemonMetrics {
  const clock = options.clock ?? systemClock;
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const memory: FleetMemory = {
    resources: new Map(),
    foundDrifted: new Set(),
    observedAt: new Map(),
    observations: new Map(),
    countedKinds: new Set(),
    perResource: options.perResource ?? true,
  };
  const series = daemonSeries(registry, memory, clock);
  initialSeries(series, options.build);

  return {
    registry,
    contentType: registry.contentType,
    requestFinished({ method, route, code, durationSeconds }) {
      series.apiRequests.inc({ method, route, code });
      series.apiDuration.observe({ method, route }, durationSeconds);
    },
    rateLimited: () => series.rateLimited.inc(),
    budget(remaining, limit) {
      series.budgetRemaining.set(remaining);
      series.budgetLimit.set(limit);
    },
    queueDepth: (priority: Priority, depth: number) => series.queueDepth.set({ priority }, depth),
    recordPass: (result, scope = {}) => recordPass(series, memory, result, scope),
    recordInvalidRevision: () => series.reconcileTotal.inc({ result: 'invalid' }),
    setUnownedProjects: (count) => series.unownedProjects.set(count),
    setStateLockHeld: (held) => series.stateLockHeld.set(held ? 1 : 0),
    setManifestErrors: (count) => series.manifestErrors.set(count),
    setRevisionBroken: (broken) => series.revisionBroken.set(broken ? 1 : 0),
    setSourceRevision(revision) {
      series.sourceInfo.reset();
      if (revision) series.sourceInfo.set({ revision }, 1);
    },
    setObservationAgeBound: (seconds) => series.ageBound.set(seconds),
    setMaxObservationAge: (seconds) => series.maxObservationAge.set(seconds),
    setObserved(projects, at) {
      for (const project of projects) memory.observedAt.set(project, at);
    },
    setProjectObservations(list) {
      for (const { observed, ...observation } of list) {
        memory.observations.set(observation.name, observation);
        if (observed) series.observed.set(observation.name, observed);
      }
      rebuildObservations(series, memory);
    },
    retainProjects: (projects) => retainProjects(series, memory, projects),
    render: () => registry.metrics(),
  };
}

/**
 * The notification metrics, registered only when receivers are configured (`--notify`,
 * `--notifications`); documented in docs/notifications-and-triggers.md.
 */
export const NOTIFICATION_METRIC_DEFINITIONS = {
  reconciler_notifications_total: { type: 'counter', labels: ['receiver', 'result'] },
  reconciler_notifications_dropped_total: { type: 'counter', labels: ['receiver'] },
} as const satisfies Record<string, { type: 'counter'; labels: readonly string[] }>;

const DELIVERY_RESULTS: readonly DeliveryResult[] = ['sent', 'failed'];

/** Counters of deliveries by receiver name (never its URL) and result, and of dropped events. */
export function createNotificationMetrics(registry: Registry, receivers: readonly string[]): NotifierMetrics {
  const delivered = new Counter({
    name: 'reconciler_notifications_total',
    help: 'Notification deliveries by receiver and result (sent; failed: after its retries).',
    labelNames: ['receiver', 'result'],
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'reconciler_notifications_dropped_total',
    help: "Events dropped because the receiver's queue was full (it is failing or slow).",
    labelNames: ['receiver'],
    registers: [registry],
  });
  for (const receiver of receivers) {
    for (const result of DELIVERY_RESULTS) delivered.inc({ receiver, result }, 0);
    dropped.inc({ receiver }, 0);
  }
  return {
    delivered: (receiver, result) => delivered.inc({ receiver, result }),
    dropped: (receiver) => dropped.inc({ receiver }),
  };
}
