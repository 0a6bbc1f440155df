// The operator's view of the fleet, built from the status record at a moment: what
// `GET /status` answers, what the status page shows and what `reconcile status` prints
// without --live. Ages are computed at `now`; project states are the worst of their resources.
import type { ResourceState } from '../reconcile/types.js';
import type { PendingChange, RecordedError, ResourceRecord, RolloutView, StatusRecord, WaitReason } from './status-record.js';

export type { RolloutView } from './status-record.js';

export const FLEET_VIEW_VERSION = 1;

/** Worst first: a project takes the first state any of its resources has. */
const STATE_ORDER: readonly ResourceState[] = ['failed', 'drifted', 'pending', 'in_sync'];

export interface ResourceView extends Omit<ResourceRecord, 'observedAt'> {
  /** `<kind>/<project>/<name>` (`<kind>/<name>` outside a project). */
  id: string;
  /** ISO time of the last observation, and its age in seconds. */
  observedAt?: string;
  ageSeconds?: number;
}

export interface PendingView extends Omit<PendingChange, 'since'> {
  project: string;
  /** ISO time since when it waits. */
  since: string;
  waitingSeconds: number;
}

export interface ErrorView extends Omit<RecordedError, 'at'> {
  /** ISO time. */
  at: string;
}

export interface ProjectView {
  name: string;
  ref?: string;
  /** The live status from the project list. */
  status?: string;
  /** The worst state of its resources (`in_sync` with none). */
  state: ResourceState;
  counts: Record<ResourceState, number>;
  /** ISO time of the last observation, and its age in seconds at `generatedAt`. */
  observedAt?: string;
  ageSeconds?: number;
  /** The revision last applied without a failure, and when. */
  revision?: string;
  appliedAt?: string;
  /** The latest version in its migrations history (projects with Migrations documents). */
  schemaVersion?: string;
  resources: ResourceView[];
  pending: PendingView[];
  lastError?: ErrorView;
}

/** How fresh the view is: the drift schedule and the stated bound. */
export interface FreshnessView {
  /** `continuous` or the cron expression of `--resync`. */
  resync?: string;
  /** The bound the daemon states for the largest observation age, seconds. */
  boundSeconds?: number;
  /** `--max-observation-age`, seconds. */
  maxObservationAgeSeconds?: number;
  largestAgeSeconds?: number;
  oldestProject?: string;
}

export interface FleetView {
  version: typeof FLEET_VIEW_VERSION;
  /** ISO time the view was made. */
  generatedAt: string;
  /** `daemon`: a running daemon's memory; `state-dir`: what passes recorded in the state directory. */
  source: 'daemon' | 'state-dir';
  /** The revision of the manifests the daemon works from (the last that loaded cleanly). */
  revision?: string;
  /** ISO time of the last pass recorded. */
  updatedAt?: string;
  dryRun?: boolean;
  shard?: string;
  summary: {
    projects: number;
    /** Projects by their state. */
    projectStates: Record<ResourceState, number>;
    /** Resources by state. */
    resources: Record<ResourceState, number>;
    pendingChanges: number;
  };
  freshness: FreshnessView;
  /** Resources of no project (organizations). */
  fleet: ResourceView[];
  projects: ProjectView[];
  /** Newest first. */
  recentErrors: ErrorView[];
  /** Changes held for a maintenance window or an approval (absent when there are none). */
  waiting?: PendingView[];
  rollouts?: RolloutView[];
}

export interface ViewContext {
  now: number;
  source: FleetView['source'];
  revision?: string;
  dryRun?: boolean;
  shard?: string;
  freshness?: Omit<FreshnessView, 'largestAgeSeconds' | 'oldestProject'>;
  /** Later observations than the record's (the daemon's drift checks), ms since the epoch by project. */
  observedAt?: Readonly<Record<string, number>>;
  /** Only these projects (the manifests' current ones); default: every recorded project. */
  projects?: readonly string[];
  rollouts?: RolloutView[];
}

/** Held by a rollout for a window or an approval (a later wave's changes are pending, not `waiting`). */
const HELD: ReadonlySet<WaitReason> = new Set(['window', 'approval']);

function zero(): Record<ResourceState, number> {
  return { in_sync: 0, drifted: 0, pending: 0, failed: 0 };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function age(now: number, at: number | undefined): number | undefined {
  return at === undefined ? undefined : Math.max(0, Math.round((now - at) / 100) / 10);
}

function resourceView(resource: ResourceRecord, id: string, fallbackAt: number | undefined, now: number): ResourceView {
  const { observedAt, ...rest } = resource;
  const at = observedAt ?? fallbackAt;
  return { id, ...rest, ...(at !== undefined ? { observedAt: iso(at), ageSeconds: age(now, at)! } : {}) };
}

export function buildFleetView(record: StatusRecord, context: ViewContext): FleetView {
  const { now } = context;
  const names = context.projects ? [...context.projects] : Object.keys(record.projects);
  const projects: ProjectView[] = [];
  const projectStates = zero();
  const resources = zero();
  const waiting: PendingView[] = [];
  let pendingChanges = 0;
  let oldest: { project: string; at: number } | undefined;
  for (const name of [...new Set(names)].sort()) {
    const project = record.projects[name];
    const observedAt = Math.max(project?.observedAt ?? Number.NEGATIVE_INFINITY, context.observedAt?.[name] ?? Number.NEGATIVE_INFINITY);
    const at = Number.isFinite(observedAt) ? observedAt : undefined;
    if (at !== undefined && (!oldest || at < oldest.at)) oldest = { project: name, at };
    const counts = zero();
    const resourceViews = (project?.resources ?? []).map((resource) => {
      counts[resource.state] += 1;
      resources[resource.state] += 1;
      return resourceView(resource, resource.kind === 'Project' ? `Project/${resource.name}` : `${resource.kind}/${name}/${resource.name}`, project?.observedAt, now);
    });
    const pending = (project?.pending ?? []).map((change) => ({ ...change, project: name, since: iso(change.since), waitingSeconds: age(now, change.since)! }));
    pendingChanges += pending.length;
    for (const change of pending) if (HELD.has(change.waitingFor)) waiting.push(change);
    const state = project === undefined ? 'pending' : (STATE_ORDER.find((s) => counts[s] > 0) ?? 'in_sync');
    projectStates[state] += 1;
    projects.push({
      name,
      ...(project?.ref ? { ref: project.ref } : {}),
      ...(project?.status ? { status: project.status } : {}),
      state,
      counts,
      ...(at !== undefined ? { observedAt: iso(at), ageSeconds: age(now, at)! } : {}),
      ...(project?.revision ? { revision: project.revision } : {}),
      ...(project?.appliedAt !== undefined ? { appliedAt: iso(project.appliedAt) } : {}),
      ...(project?.schemaVersion ? { schemaVersion: project.schemaVersion } : {}),
      resources: resourceViews,
      pending,
      ...(project?.lastError ? { lastError: { ...project.lastError, at: iso(project.lastError.at) } } : {}),
    });
  }
  const fleet = record.fleet.map((resource) => {
    resources[resource.state] += 1;
    return resourceView(resource, `${resource.kind}/${resource.name}`, record.updatedAt || undefined, now);
  });
  const view: FleetView = {
    version: FLEET_VIEW_VERSION,
    generatedAt: iso(now),
    source: context.source,
    ...((context.revision ?? record.revision) ? { revision: context.revision ?? record.revision } : {}),
    ...(record.updatedAt > 0 ? { updatedAt: iso(record.updatedAt) } : {}),
    ...(context.dryRun !== undefined ? { dryRun: context.dryRun } : {}),
    ...(context.shard !== undefined ? { shard: context.shard } : {}),
    summary: { projects: projects.length, projectStates, resources, pendingChanges },
    freshness: {
      ...context.freshness,
      ...(oldest ? { largestAgeSeconds: age(now, oldest.at)!, oldestProject: oldest.project } : {}),
    },
    fleet,
    projects,
    recentErrors: record.errors.map((error) => ({ ...error, at: iso(error.at) })),
  };
  if (waiting.length > 0) view.waiting = waiting;
  const rollouts = context.rollouts ?? record.rollouts;
  if (rollouts && rollouts.length > 0) view.rollouts = rollouts;
  return view;
}
