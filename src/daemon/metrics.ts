import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Priority } from '../api/request.js';
import { PRIORITIES } from '../api/request.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { PassResult, PlanEntry, ProjectObservation, ResourceStatus } from '../reconcile/types.js';
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
  reconciler_migrations_pending: { type: 'gauge', labels: ['project'], help: 'Migrations of the Migrations documents not yet applied to the project (planned and not applied by the last pass that covered it).' },
  reconciler_migrations_applied_total: { type: 'counter', labels: ['project', 'result'], help: 'Migrations by project and result: applied, failed (the database refused it: nothing of it was kept), blocked (an applied file changed, or an older file is refused).' },
  reconciler_rollout_wave_state: { type: 'gauge', labels: ['rollout', 'wave', 'state'], help: "Each wave's state in the rollout of the current revision (waiting, applying, soaking, done, halted); always 1." },
  reconciler_changes_waiting: { type: 'gauge', labels: ['reason'], help: 'Planned changes held back by the rollout: for a maintenance window (window) or for an approval (approval).' },
  reconciler_project_revision_info: { type: 'gauge', labels: ['project', 'revision'], help: 'The revision of the manifests last applied to the project in full (a Rollout keeps it); always 1.' },
} as const satisfies Record<string, MetricDefinition>;

/**
 * Every metric the daemon exports (names, types and labels are the public interface: dashboards
 * and alerts depend on them; docs/operations.md's metrics table documents each).
 */
export const METRIC_DEFINITIONS = {
  ...DAEMON_METRICS,
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

/**
 * Creates the daemon's metrics on `registry` (a fresh one by default, so tests and several
 * daemons in one process never share series).
 */
export function createMetrics(registry: Registry = new Registry(), options: MetricsOptions = {}): DaemonMetrics {
  const clock = options.clock ?? systemClock;
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  const resources = new Map<string, ResourceStatus>();
  // Resources whose latest observation found them different from their manifest, repaired since or not.
  const foundDrifted = new Set<string>();
  const perResource = options.perResource ?? true;
  const observedAt = new Map<string, number>();
  const observations = new Map<string, ProjectObservation>();

  const metric = metricFactory(registry);
  const driftResources = metric.gauge('reconciler_drift_resources');
  const resourceInSync = metric.gauge('reconciler_resource_in_sync');
  const reconcileTotal = metric.counter('reconciler_reconcile_total');
  const reconcileDuration = metric.histogram('reconciler_reconcile_duration_seconds');
  const applyTotal = metric.counter('reconciler_apply_total');
  const migrationsPending = metric.gauge('reconciler_migrations_pending');
  const migrationsApplied = metric.counter('reconciler_migrations_applied_total');
  const apiRequests = metric.counter('reconciler_api_requests_total');
  const apiDuration = metric.histogram('reconciler_api_request_duration_seconds');
  const rateLimited = metric.counter('reconciler_api_rate_limited_total');
  const budgetRemaining = metric.gauge('reconciler_api_budget_remaining');
  const budgetLimit = metric.gauge('reconciler_api_budget_limit');
  const queueDepth = metric.gauge('reconciler_queue_depth');
  // The observation ages are computed at scrape time.
  metric.gauge('reconciler_observation_age_seconds', function collect() {
    this.reset();
    const now = clock.now();
    for (const [project, at] of observedAt) this.set({ project }, Math.max(0, (now - at) / 1000));
  });
  metric.gauge('reconciler_observation_age_max_seconds', function collect() {
    this.reset();
    if (observedAt.size === 0) return;
    const now = clock.now();
    this.set(Math.max(0, (now - Math.min(...observedAt.values())) / 1000));
  });
  const ageBound = metric.gauge('reconciler_observation_age_bound_seconds');
  const maxObservationAge = metric.gauge('reconciler_max_observation_age_seconds');
  const lastSuccess = metric.gauge('reconciler_last_success_timestamp_seconds');
  const manifestErrors = metric.gauge('reconciler_manifest_errors');
  const revisionBroken = metric.gauge('reconciler_revision_broken');
  const sourceInfo = metric.gauge('reconciler_source_info');
  const projectStatus = metric.gauge('reconciler_project_status');
  const projectHealth = metric.gauge('reconciler_project_health');

  const unownedProjects = metric.gauge('reconciler_unowned_projects');
  const stateLockHeld = metric.gauge('reconciler_state_lock_held');
  const driftDetected = metric.counter('reconciler_drift_detected_total');
  const driftRepaired = metric.counter('reconciler_drift_repaired_total');
  const resourceCondition = metric.gauge('reconciler_resource_condition');
  const buildInfo = metric.gauge('reconciler_build_info');
  /** Kinds whose drift series exist (at 0 or more). */
  const countedKinds = new Set<string>();

  const waveState = metric.gauge('reconciler_rollout_wave_state');
  const changesWaiting = metric.gauge('reconciler_changes_waiting');
  const projectRevision = metric.gauge('reconciler_project_revision_info');
  const WAITING_REASONS = ['window', 'approval'] as const;
  for (const reason of WAITING_REASONS) changesWaiting.set({ reason }, 0);

  const observedGauges = createObservedGauges(registry);
  if (options.build) buildInfo.set(options.build, 1);

  // Series exist from the start so that rate() and absent() behave before the first event.
  for (const result of PASS_RESULTS) reconcileTotal.inc({ result }, 0);
  for (const priority of PRIORITIES) queueDepth.set({ priority }, 0);
  manifestErrors.set(0);
  revisionBroken.set(0);
  unownedProjects.set(0);
  stateLockHeld.set(0);

  /** Pending migrations per project after the pass, and each migration's outcome. */
  function recordMigrations(result: PassResult, projects: readonly string[] | undefined): void {
    const succeeded = new Set(result.outcomes.filter((o) => o.result === 'success').map((o) => o.entryId));
    const pending = new Map<string, number>();
    for (const name of projects ?? result.projects.map((p) => p.name)) migrationsPending.remove({ project: name });
    for (const entry of result.plan.entries) {
      if (entry.kind !== 'Migration' || entry.project === undefined) continue;
      const waiting = entry.action === 'create' && !entry.observeOnly && !succeeded.has(entry.id) ? 1 : 0;
      pending.set(entry.project, (pending.get(entry.project) ?? 0) + waiting);
    }
    for (const [project, count] of pending) migrationsPending.set({ project }, count);
    for (const outcome of result.outcomes) {
      if (outcome.kind !== 'Migration') continue;
      const project = result.plan.entries.find((e) => e.id === outcome.entryId)?.project;
      if (project === undefined) continue;
      if (outcome.action === 'blocked') migrationsApplied.inc({ project, result: 'blocked' });
      else if (outcome.action === 'create' && outcome.result === 'success') migrationsApplied.inc({ project, result: 'applied' });
      else if (outcome.action === 'create' && outcome.result === 'failed') migrationsApplied.inc({ project, result: 'failed' });
    }
  }

  function rebuildResources(): void {
    driftResources.reset();
    resourceInSync.reset();
    resourceCondition.reset();
    const drift = new Map<string, { project: string; kind: string; count: number }>();
    for (const status of resources.values()) {
      const project = label(status.project);
      if (perResource) {
        resourceInSync.set({ project, kind: status.kind, name: status.name }, status.state === 'in_sync' ? 1 : 0);
        resourceCondition.set({ project, kind: status.kind, name: status.name, state: status.state }, 1);
      }
      const key = `${project}\u0000${status.kind}`;
      const entry = drift.get(key) ?? { project, kind: status.kind, count: 0 };
      if (status.state === 'drifted' || foundDrifted.has(status.id)) entry.count += 1;
      drift.set(key, entry);
    }
    for (const { project, kind, count } of drift.values()) driftResources.set({ project, kind }, count);
  }

  function rebuildObservations(): void {
    projectStatus.reset();
    projectHealth.reset();
    for (const observation of observations.values()) {
      if (observation.status) projectStatus.set({ project: observation.name, status: observation.status }, 1);
      for (const [service, healthy] of Object.entries(observation.health ?? {})) {
        projectHealth.set({ project: observation.name, service }, healthy ? 1 : 0);
      }
    }
  }

  const metrics: DaemonMetrics = {
    registry,
    contentType: registry.contentType,

    requestFinished({ method, route, code, durationSeconds }) {
      apiRequests.inc({ method, route, code });
      apiDuration.observe({ method, route }, durationSeconds);
    },
    rateLimited() {
      rateLimited.inc();
    },
    budget(remaining, limit) {
      budgetRemaining.set(remaining);
      budgetLimit.set(limit);
    },
    queueDepth(priority: Priority, depth: number) {
      queueDepth.set({ priority }, depth);
    },

    recordPass(result, scope = {}) {
      // A pass the process's stop cut short is neither a success nor a failure.
      reconcileTotal.inc({ result: result.interrupted ? 'interrupted' : result.result });
      reconcileDuration.observe(Math.max(0, (result.finishedAt - result.startedAt) / 1000));
      if (result.result === 'success') lastSuccess.set(result.finishedAt / 1000);
      for (const outcome of result.outcomes) {
        // Writes only: a readiness wait is a step, and a blocked entry was never attempted (it
        // shows as reconciler_resource_in_sync 0 and fails the pass).
        if (!isWriteOutcome(outcome)) continue;
        applyTotal.inc({ kind: outcome.kind, action: outcome.action, result: outcome.result });
      }
      if (result.result === 'invalid') return;
      recordMigrations(result, scope.projects);
      // The rollout: every pass of a set with a Rollout carries its whole state.
      waveState.reset();
      projectRevision.reset();
      for (const reason of WAITING_REASONS) changesWaiting.set({ reason }, result.rollout?.waiting.filter((w) => w.reason === reason).length ?? 0);
      if (result.rollout) {
        for (const wave of result.rollout.waves) waveState.set({ rollout: result.rollout.name, wave: wave.name, state: wave.state }, 1);
        for (const [project, applied] of Object.entries(result.rollout.revisions)) projectRevision.set({ project, revision: applied.revision }, 1);
      }

      const drifted = driftedEntries(result);
      // Every kind the pass planned gets its drift series at 0 for each trigger, so that the
      // first drift is an increase Prometheus sees (a series born at 1 has no increase).
      for (const kind of new Set(result.plan.entries.map((entry) => entry.kind))) {
        if (countedKinds.has(kind)) continue;
        countedKinds.add(kind);
        for (const trigger of DRIFT_TRIGGERS) {
          driftDetected.inc({ kind, trigger }, 0);
          driftRepaired.inc({ kind, trigger }, 0);
        }
      }
      if (scope.trigger) {
        const repaired = new Set(result.outcomes.filter((o) => o.action === 'update' && o.result === 'success').map((o) => o.entryId));
        for (const entry of drifted) {
          driftDetected.inc({ kind: entry.kind, trigger: scope.trigger });
          if (repaired.has(entry.id)) driftRepaired.inc({ kind: entry.kind, trigger: scope.trigger });
        }
      }

      const covered = scope.projects ? new Set(scope.projects) : undefined;
      // A pass limited to some projects says nothing about the others: keep their figures.
      for (const [id, status] of resources) {
        if (!covered || (status.project !== undefined && covered.has(status.project))) {
          resources.delete(id);
          foundDrifted.delete(id);
        }
      }
      for (const entry of drifted) foundDrifted.add(entry.id);
      for (const status of result.resources) resources.set(status.id, status);
      rebuildResources();

      const observedProjects = covered ?? new Set(result.projects.map((p) => p.name));
      for (const project of observedProjects) {
        const fromPass = result.projects.find((p) => p.name === project)?.observedAt;
        observedAt.set(project, fromPass ?? result.finishedAt);
      }
      if (!covered) {
        for (const project of [...observations.keys()]) if (!observedProjects.has(project)) observations.delete(project);
      }
      for (const observation of result.projects) {
        if (observation.status !== undefined || observation.health !== undefined) observations.set(observation.name, observation);
      }
      rebuildObservations();
    },

    recordInvalidRevision() {
      reconcileTotal.inc({ result: 'invalid' });
    },

    setUnownedProjects(count) {
      unownedProjects.set(count);
    },
    setStateLockHeld(held) {
      stateLockHeld.set(held ? 1 : 0);
    },
    setManifestErrors(count) {
      manifestErrors.set(count);
    },
    setRevisionBroken(broken) {
      revisionBroken.set(broken ? 1 : 0);
    },

    setSourceRevision(revision) {
      sourceInfo.reset();
      if (revision) sourceInfo.set({ revision }, 1);
    },

    setObservationAgeBound(seconds) {
      ageBound.set(seconds);
    },
    setMaxObservationAge(seconds) {
      maxObservationAge.set(seconds);
    },

    setObserved(projects, at) {
      for (const project of projects) observedAt.set(project, at);
    },

    setProjectObservations(list) {
      for (const { observed, ...observation } of list) {
        observations.set(observation.name, observation);
        if (observed) observedGauges.set(observation.name, observed);
      }
      rebuildObservations();
    },

    retainProjects(projects) {
      const keep = new Set(projects);
      for (const project of [...observedAt.keys()]) if (!keep.has(project)) observedAt.delete(project);
      for (const project of [...observations.keys()]) if (!keep.has(project)) observations.delete(project);
      observedGauges.retain(keep);
      for (const [id, status] of resources) {
        if (status.project !== undefined && !keep.has(status.project)) {
          resources.delete(id);
          foundDrifted.delete(id);
        }
      }
      rebuildResources();
      rebuildObservations();
    },

    render() {
      return registry.metrics();
    },
  };
  return metrics;
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
