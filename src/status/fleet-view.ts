// The operator's view of the fleet, built from the status record at a moment: what
// `GET /status` answers, what the status page shows and what `reconcile status` prints
// without --live. Ages are computed at `now`; project states are the worst of their resources.
// Its `condition` is the one-glance answer, in the manner of Flux's Ready/Stalled conditions
// and Argo's sync and health statuses but in one word: a broken revision first, then what
// failed, what drifted, what the rollout holds and what converges.
import { KIND_MODULES } from '../reconcile/registry.js';
import { RESOURCE_STATES, type ResourceState } from '../reconcile/types.js';
import { HELD_REASONS, type BrokenRevision, type PendingChange, type ProjectRecord, type RecordedError, type ResourceRecord, type RolloutView, type StatusRecord } from './status-record.js';

export type { RolloutView } from './status-record.js';

export const FLEET_VIEW_VERSION = 1;

/** Worst first: a project takes the first state any of its resources has. */
const STATE_ORDER: readonly ResourceState[] = ['failed', 'drifted', 'held', 'pending', 'in_sync'];

export interface ResourceView extends Omit<ResourceRecord, 'observedAt'> {
  /** `<kind>/<project>/<name>` (`<kind>/<name>` outside a project). */
  id: string;
  /** ISO time of the last observation, and its age in seconds. */
  observedAt?: string;
  ageSeconds?: number;
}

export interface PendingView extends Omit<PendingChange, 'since'> {
  project: string;
  /** `held`: the rollout holds it back (its wave, a window, an approval); `pending`: not made yet for another reason (`waitingFor`). */
  state: 'held' | 'pending';
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
  resources: ResourceView[];
  pending: PendingView[];
  lastError?: ErrorView;
  /**
   * The facts the registry's kinds give of the project (KindModule.status), each a field of its
   * own: `schemaVersion`, the latest version in its migrations history (projects with
   * Migrations documents).
   */
  [fact: string]: unknown;
}

/**
 * The fleet at a glance: `broken-revision` (the newest revision of the checkout has manifest
 * errors; the last good one stays applied), `failed`, `drifted`, `held`, `pending` or `in_sync`,
 * with a sentence that says what runs, what waits and why, and what broke.
 */
export interface ConditionView {
  state: 'broken-revision' | ResourceState;
  message: string;
}

export interface BrokenRevisionView extends Omit<BrokenRevision, 'since'> {
  /** ISO time since when the newest revision is broken. */
  since: string;
  /** The last good revision, still applied. */
  lastGoodRevision?: string;
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
  condition: ConditionView;
  /** Present while the newest revision of the checkout has manifest errors. */
  brokenRevision?: BrokenRevisionView;
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
    /** Changes not made yet, each listed once under its project; `heldChanges` of them are held by the rollout. */
    pendingChanges: number;
    heldChanges: number;
  };
  freshness: FreshnessView;
  /** Resources of no project (organizations). */
  fleet: ResourceView[];
  projects: ProjectView[];
  /** Newest first. */
  recentErrors: ErrorView[];
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

function zero(): Record<ResourceState, number> {
  return Object.fromEntries(RESOURCE_STATES.map((state) => [state, 0])) as Record<ResourceState, number>;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** The one-glance condition of the fleet. */
function conditionOf(view: Omit<FleetView, 'condition'>): ConditionView {
  const s = view.summary;
  const broken = view.brokenRevision;
  if (broken) {
    const first = broken.errors[0];
    const where = first ? `${first.file}:${first.line}${first.field ? ` ${first.field}` : ''}: ${first.message}` : 'manifest errors';
    const more = broken.errorCount > 1 ? ` (and ${broken.errorCount - 1} more)` : '';
    const kept = broken.lastGoodRevision ? `; revision ${broken.lastGoodRevision.slice(0, 12)} stays applied` : '; nothing of it is applied';
    return { state: 'broken-revision', message: `broken revision${broken.revision ? ` ${broken.revision.slice(0, 12)}` : ''}: ${where}${more}${kept}` };
  }
  // The last pass failed before it saw the fleet (the API unreachable, every token refused):
  // its error is the newest, of no project, and made at the record's last update.
  const newest = view.recentErrors[0];
  if (newest && newest.project === undefined && view.updatedAt !== undefined && newest.at === view.updatedAt) {
    return { state: 'failed', message: `the last pass failed: ${newest.resource ? `${newest.resource}: ` : ''}${newest.message}` };
  }
  const held = view.projects.flatMap((project) => project.pending).filter((change) => change.state === 'held');
  const reasons = [...new Set(held.map((change) => change.waitingFor))];
  const parts: string[] = [];
  if (s.projectStates.failed) parts.push(`${plural(s.projectStates.failed, 'project')} failed`);
  if (s.projectStates.drifted) parts.push(`${plural(s.projectStates.drifted, 'project')} drifted`);
  if (held.length) parts.push(`${plural(held.length, 'change')} held (waiting for ${reasons.join(', ')})`);
  const halted = view.rollouts?.flatMap((rollout) => rollout.waves.filter((wave) => wave.state === 'halted').map((wave) => `rollout ${rollout.name} halted at wave ${wave.name}`)) ?? [];
  const running = view.rollouts?.flatMap((rollout) => rollout.waves.filter((wave) => wave.state === 'applying' || wave.state === 'soaking').map((wave) => `rollout ${rollout.name}: wave ${wave.name} ${wave.state}`)) ?? [];
  parts.push(...halted, ...running);
  const state = STATE_ORDER.find((candidate) => candidate !== 'in_sync' && s.projectStates[candidate] > 0) ?? 'in_sync';
  if (parts.length === 0) return { state, message: state === 'pending' ? `${plural(s.projectStates.pending, 'project')} converging or not observed yet` : `all ${plural(s.projects, 'project')} in sync` };
  return { state, message: parts.join('; ') };
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

/** The kinds' facts of a project (KindModule.status), in registry order, as the record keeps them. */
function kindFacts(project: ProjectRecord | undefined): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  if (!project) return facts;
  for (const module of KIND_MODULES) for (const field of module.status?.fields ?? []) if (project[field]) facts[field] = project[field];
  return facts;
}

export function buildFleetView(record: StatusRecord, context: ViewContext): FleetView {
  const { now } = context;
  const names = context.projects ? [...context.projects] : Object.keys(record.projects);
  const projects: ProjectView[] = [];
  const projectStates = zero();
  const resources = zero();
  let pendingChanges = 0;
  let heldChanges = 0;
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
    const pending: PendingView[] = (project?.pending ?? []).map((change) => ({
      ...change,
      project: name,
      state: HELD_REASONS.has(change.waitingFor) ? 'held' : 'pending',
      since: iso(change.since),
      waitingSeconds: age(now, change.since)!,
    }));
    pendingChanges += pending.length;
    heldChanges += pending.filter((change) => change.state === 'held').length;
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
      ...kindFacts(project),
      resources: resourceViews,
      pending,
      ...(project?.lastError ? { lastError: { ...project.lastError, at: iso(project.lastError.at) } } : {}),
    });
  }
  const fleet = record.fleet.map((resource) => {
    resources[resource.state] += 1;
    return resourceView(resource, `${resource.kind}/${resource.name}`, record.updatedAt || undefined, now);
  });
  const revision = context.revision ?? record.revision;
  const view: Omit<FleetView, 'condition'> = {
    version: FLEET_VIEW_VERSION,
    generatedAt: iso(now),
    source: context.source,
    ...(revision ? { revision } : {}),
    ...(record.broken
      ? { brokenRevision: { ...record.broken, since: iso(record.broken.since), ...(revision && revision !== record.broken.revision ? { lastGoodRevision: revision } : {}) } }
      : {}),
    ...(record.updatedAt > 0 ? { updatedAt: iso(record.updatedAt) } : {}),
    ...(context.dryRun !== undefined ? { dryRun: context.dryRun } : {}),
    ...(context.shard !== undefined ? { shard: context.shard } : {}),
    summary: { projects: projects.length, projectStates, resources, pendingChanges, heldChanges },
    freshness: {
      ...context.freshness,
      ...(oldest ? { largestAgeSeconds: age(now, oldest.at)!, oldestProject: oldest.project } : {}),
    },
    fleet,
    projects,
    recentErrors: record.errors.map((error) => ({ ...error, at: iso(error.at) })),
  };
  const rollouts = context.rollouts ?? record.rollouts;
  if (rollouts && rollouts.length > 0) view.rollouts = rollouts;
  // The condition comes right after the revision in the JSON: the first thing read.
  const { version, generatedAt, source, ...rest } = view;
  return { version, generatedAt, source, condition: conditionOf(view), ...rest };
}
