// What the reconciler remembers of the fleet's condition between processes: per project and
// resource the state found at the last observation, the revision last applied, the changes
// that wait and why, the last errors (scrubbed), and a broken newest revision of the checkout.
// Passes (the daemon's and one-shot ones) and the daemon's reading of each revision fold their
// results into it, here and nowhere else; `GET /status`, the status page and `reconcile
// status` (from a daemon or the state directory) read it. It holds names, states, times and
// scrubbed messages only: never a value.
import { scrubMessage } from '../util/scrub.js';
import type { ManifestError } from '../manifests/types.js';
import { KIND_MODULES } from '../reconcile/registry.js';
import { stateOfPlanEntry } from '../reconcile/summary.js';
import type { PassResult, PlanEntry, ResourceKind, ResourceState, WaveState } from '../reconcile/types.js';
import type { RolloutSummary } from '../reconcile/rollout/gate.js';

/** A rollout's progress, wave by wave (present once rollouts are declared). */
export interface RolloutView {
  name: string;
  waves: Array<{
    name: string;
    /** The rollout's own state: `waiting`, `applying`, `soaking`, `halted` or `done`. */
    state: WaveState;
    projects: string[];
    /** In words: why it waits or halted, when it may start. */
    detail?: string;
  }>;
}

export const STATUS_RECORD_VERSION = 1;
/** Recent errors kept, newest first. */
export const MAX_RECENT_ERRORS = 20;

export interface ResourceRecord {
  kind: ResourceKind;
  name: string;
  state: ResourceState;
  /** Field paths that differ (names only). */
  fields?: string[];
  /** Why it is not in sync (scrubbed). */
  message?: string;
  /** ms since the epoch; absent when equal to the project's observation. */
  observedAt?: number;
}

/**
 * Why a planned change was not made: `dry-run` (the pass only plans), `blocked` (a policy or a
 * check refused it), `service` (it converges on the service's side), `dependency` (something
 * it depends on failed), `not-applied` (the pass stopped before it), and the reasons a rollout
 * holds a change: `wave` (its wave has not started), `window` (outside a maintenance window)
 * and `approval` (not approved yet).
 */
export type WaitReason = 'dry-run' | 'blocked' | 'service' | 'dependency' | 'not-applied' | 'wave' | 'window' | 'approval';

/** The reasons a rollout holds a change back: such a change is `held`, not drift. */
export const HELD_REASONS: ReadonlySet<WaitReason> = new Set(['wave', 'window', 'approval']);

/** Manifest errors kept in the record (the count says how many there were). */
export const MAX_BROKEN_ERRORS = 20;

/**
 * The newest revision of the checkout does not load (manifest errors): nothing of it is
 * applied, the last good revision stays applied. Cleared when a revision loads cleanly.
 */
export interface BrokenRevision {
  /** The broken revision (absent outside git when no digest could be made). */
  revision?: string;
  /** ms since the epoch: when this revision was first found broken. */
  since: number;
  errorCount: number;
  /** The first errors, each naming its file, line and field (messages scrubbed). */
  errors: Array<{ file: string; line: number; column?: number; field?: string; message: string }>;
}

export interface PendingChange {
  /** The plan entry id, `<kind>/<project>/<name>`. */
  id: string;
  kind: ResourceKind;
  name: string;
  action: PlanEntry['action'];
  waitingFor: WaitReason;
  /** In words (scrubbed). */
  reason?: string;
  /** Since when it waits (ms since the epoch): the first pass that found it waiting for the same reason. */
  since: number;
}

export interface RecordedError {
  /** ms since the epoch. */
  at: number;
  project?: string;
  /** The plan entry id. */
  resource?: string;
  /** Error class and scrubbed message. */
  message: string;
}

export interface ProjectRecord {
  ref?: string;
  /** The live status from the project list (`ACTIVE_HEALTHY`, ...). */
  status?: string;
  /** ms since the epoch. */
  observedAt?: number;
  /** The revision of the manifests last applied to this project without a failure. */
  revision?: string;
  /** When that revision was applied (ms since the epoch). */
  appliedAt?: number;
  resources: ResourceRecord[];
  pending: PendingChange[];
  lastError?: RecordedError;
  /**
   * The facts the registry's kinds give of the project (KindModule.status), as the last pass
   * that covered it left them, each a field of its own: `schemaVersion`, the latest version in
   * its migrations history (projects with Migrations documents).
   */
  [fact: string]: unknown;
}

export interface StatusRecord {
  version: typeof STATUS_RECORD_VERSION;
  /** ms since the epoch of the last pass folded in. */
  updatedAt: number;
  /** The revision of the manifests the last pass worked from. */
  revision?: string;
  /** Project manifest name to record. */
  projects: Record<string, ProjectRecord>;
  /** Resources of no project (organizations). */
  fleet: ResourceRecord[];
  /** Newest first, at most MAX_RECENT_ERRORS. */
  errors: RecordedError[];
  /** The rollout's wave progress as the last pass left it (a Rollout document). */
  rollouts?: RolloutView[];
  /** Present while the newest revision of the checkout has manifest errors. */
  broken?: BrokenRevision;
}

/** What a pass covered and how it ran. */
export interface PassScope {
  /** The projects it was limited to; undefined: the whole fleet (projects it did not see are dropped). */
  projects?: string[];
  /** The revision the pass worked from, when the result does not carry it. */
  revision?: string;
  /**
   * The pass read the newest checkout (a one-shot run): a pass that loaded clears a broken
   * revision. A daemon's pass works from its last good revision and leaves that to the reading
   * of each revision (foldManifests).
   */
  newestCheckout?: boolean;
}

export function emptyStatusRecord(): StatusRecord {
  return { version: STATUS_RECORD_VERSION, updatedAt: 0, projects: {}, fleet: [], errors: [] };
}

/** The project a plan entry or resource belongs to: its own project, or itself for a Project. */
function ownerOf(item: { kind: string; name: string; project?: string }): string | undefined {
  if (item.project !== undefined) return item.project;
  return item.kind === 'Project' ? item.name : undefined;
}

/**
 * A recorded error of a project the pass covered still stands only while its resource is
 * failed (a resource the pass no longer planned left the manifests).
 */
function errorStands(error: RecordedError | undefined, resources: ReadonlyMap<string, ResourceRecord>, failed: boolean): error is RecordedError {
  if (!error) return false;
  if (error.resource === undefined) return failed;
  return resources.get(error.resource)?.state === 'failed';
}

function waitOf(entry: PlanEntry, result: PassResult, outcome: PassResult['outcomes'][number] | undefined): { waitingFor: WaitReason; reason?: string } | undefined {
  if (entry.action === 'noop') return entry.pending ? { waitingFor: 'service', ...(entry.reason ? { reason: entry.reason } : {}) } : undefined;
  if (entry.action === 'blocked') return { waitingFor: 'blocked', ...(entry.reason ? { reason: entry.reason } : {}) };
  if (outcome?.result === 'success' || outcome?.result === 'failed') return entry.pending ? { waitingFor: 'service', ...(entry.reason ? { reason: entry.reason } : {}) } : undefined;
  if (entry.observeOnly) return { waitingFor: 'blocked', reason: 'under the observe policy: reported, never written' };
  if (entry.held) return { waitingFor: entry.held.reason, reason: entry.held.message };
  if (result.dryRun) return { waitingFor: 'dry-run', reason: 'the pass only plans (--dry-run)' };
  if (outcome?.result === 'interrupted') return { waitingFor: 'not-applied', reason: 'interrupted: the process was stopping while it was under way; the next pass checks it' };
  if (outcome?.result === 'skipped') return { waitingFor: 'dependency', ...(outcome.error ? { reason: `${outcome.error.type}: ${outcome.error.message}` } : { reason: 'a change it depends on did not succeed' }) };
  return { waitingFor: 'not-applied', reason: 'the pass ended before it' };
}

/** What a pass left of one project while it is folded in. */
interface ProjectFold {
  resources: ResourceRecord[];
  pending: PendingChange[];
  errors: RecordedError[];
  failed: boolean;
}

/** A pass being folded into the record: each project's part, the fleet's resources, the errors, every resource described by id. */
interface Fold {
  readonly result: PassResult;
  readonly at: number;
  readonly projects: Map<string, ProjectFold>;
  readonly fleet: ResourceRecord[];
  readonly errors: RecordedError[];
  readonly described: Map<string, ResourceRecord>;
}

function emptyProjectFold(): ProjectFold {
  return { resources: [], pending: [], errors: [], failed: false };
}

function projectFold(fold: Fold, project: string): ProjectFold {
  let found = fold.projects.get(project);
  if (!found) {
    found = emptyProjectFold();
    fold.projects.set(project, found);
  }
  return found;
}

/** Records a resource once (the pass's own status wins over its plan entry), under its project or the fleet. */
function addResource(fold: Fold, id: string, item: { kind: ResourceKind; name: string; project?: string }, resource: ResourceRecord): void {
  if (fold.described.has(id)) return;
  fold.described.set(id, resource);
  const project = ownerOf(item);
  const observedAt = project === undefined ? undefined : fold.result.projects.find((p) => p.name === project)?.observedAt;
  if (resource.observedAt !== undefined && resource.observedAt === observedAt) delete resource.observedAt;
  if (project === undefined) fold.fleet.push(resource);
  else projectFold(fold, project).resources.push(resource);
}

/** The resources the pass reported a status for. */
function foldStatuses(fold: Fold): void {
  for (const status of fold.result.resources) {
    addResource(fold, status.id, status, {
      kind: status.kind,
      name: status.name,
      state: status.state,
      ...(status.fields?.length ? { fields: [...status.fields] } : {}),
      ...(status.message ? { message: scrubMessage(status.message) } : {}),
      ...(status.observedAt !== undefined ? { observedAt: status.observedAt } : {}),
    });
  }
}

/** The plan's entries: the resources no status described, and each change not made yet (since when it waits for the same reason). */
function foldEntries(fold: Fold, record: StatusRecord): void {
  const { result, at } = fold;
  const outcomes = new Map(result.outcomes.map((outcome) => [outcome.entryId, outcome]));
  const statuses = new Map(result.resources.map((status) => [status.id, status]));
  const previousPending = new Map<string, PendingChange>();
  for (const project of Object.values(record.projects)) for (const change of project.pending) previousPending.set(change.id, change);
  for (const entry of result.plan.entries) {
    const state = stateOfPlanEntry(entry);
    const status = statuses.get(entry.id);
    addResource(fold, entry.id, entry, {
      kind: entry.kind,
      name: entry.name,
      state,
      ...(state !== 'in_sync' && entry.changes.length ? { fields: entry.changes.map((change) => change.path) } : {}),
      ...(state !== 'in_sync' && entry.reason ? { message: scrubMessage(entry.reason) } : {}),
      ...(status?.observedAt !== undefined ? { observedAt: status.observedAt } : { observedAt: result.finishedAt }),
    });
    const project = ownerOf(entry);
    const wait = waitOf(entry, result, outcomes.get(entry.id));
    if (project !== undefined && wait) {
      const earlier = previousPending.get(entry.id);
      projectFold(fold, project).pending.push({
        id: entry.id,
        kind: entry.kind,
        name: entry.name,
        action: entry.action,
        waitingFor: wait.waitingFor,
        ...(wait.reason ? { reason: scrubMessage(wait.reason) } : {}),
        since: earlier && earlier.waitingFor === wait.waitingFor ? earlier.since : at,
      });
    }
  }
}

/** Each failed outcome: an error of the pass and of its project, and its resource failed whatever the plan said. */
function foldFailures(fold: Fold): void {
  const { result, at } = fold;
  for (const outcome of result.outcomes) {
    if (outcome.result !== 'failed') continue;
    const entry = result.plan.entries.find((e) => e.id === outcome.entryId);
    const project = entry ? ownerOf(entry) : undefined;
    const error: RecordedError = {
      at,
      ...(project !== undefined ? { project } : {}),
      resource: outcome.entryId,
      message: outcome.error ? scrubMessage(`${outcome.error.type}: ${outcome.error.message}`) : 'failed',
    };
    fold.errors.push(error);
    if (project !== undefined) {
      const target = projectFold(fold, project);
      target.failed = true;
      target.errors.push(error);
    }
    const item = fold.described.get(outcome.entryId);
    if (item) {
      item.state = 'failed';
      item.message = error.message;
    }
  }
}

/** The facts of each project the registry's kinds give (KindModule.status: the schema version of its migrations). */
function kindFacts(result: PassResult): Map<string, Record<string, string>> {
  const facts = new Map<string, Record<string, string>>();
  for (const module of KIND_MODULES) {
    if (!module.status) continue;
    for (const [project, own] of module.status.facts(result)) facts.set(project, { ...facts.get(project), ...own });
  }
  return facts;
}

/** One project the pass covered, as the record keeps it: what it found, the revision applied, the kinds' facts, an error that stands. */
function projectRecord(fold: Fold, name: string, before: ProjectRecord | undefined, revision: string | undefined, facts: Record<string, string> | undefined): ProjectRecord {
  const { result } = fold;
  const found = fold.projects.get(name) ?? emptyProjectFold();
  const observation = result.projects.find((p) => p.name === name);
  // Applied: written (not a dry run) with nothing failed or held back; converging on the service's side is fine.
  const holding = found.pending.some((change) => change.waitingFor !== 'service');
  const applied = !result.dryRun && !found.failed && !holding && revision !== undefined;
  const next: ProjectRecord = {
    ...(observation?.ref ?? before?.ref ? { ref: observation?.ref ?? before?.ref } : {}),
    ...(observation?.status ? { status: observation.status } : {}),
    observedAt: observation?.observedAt ?? result.finishedAt,
    resources: found.resources.sort(byKindThenName),
    pending: found.pending,
  };
  if (applied) {
    next.revision = revision;
    next.appliedAt = before?.revision === revision && before.appliedAt !== undefined ? before.appliedAt : fold.at;
  } else if (before?.revision !== undefined) {
    next.revision = before.revision;
    if (before.appliedAt !== undefined) next.appliedAt = before.appliedAt;
  }
  Object.assign(next, facts);
  // An error clears once its resource is applied or read back in sync.
  const lastError = found.errors[found.errors.length - 1] ?? before?.lastError;
  if (errorStands(lastError, fold.described, found.failed)) next.lastError = lastError;
  return next;
}

/**
 * Folds a finished pass into the record (a new record; the old one is not changed). A pass
 * limited to some projects replaces only theirs; a full pass replaces all and drops projects it
 * no longer saw. An invalid pass (the manifests did not load) changes nothing but the broken
 * revision it names (foldManifests).
 */
export function foldPass(record: StatusRecord, result: PassResult, scope: PassScope, at: number): StatusRecord {
  if (result.result === 'invalid') return result.manifestErrors.length > 0 ? foldManifests(record, result.revision ?? scope.revision, result.manifestErrors, at) : record;
  const revision = result.revision ?? scope.revision;
  const fold: Fold = { result, at, projects: new Map(), fleet: [], errors: [], described: new Map() };
  for (const observation of result.projects) projectFold(fold, observation.name);
  foldStatuses(fold);
  foldEntries(fold, record);
  foldFailures(fold);
  // A project released from management (its manifest gone, left in place) is no longer one of the fleet's.
  const released = result.plan.entries.filter((entry) => entry.released && entry.kind === 'Project').map((entry) => entry.name);
  for (const name of released) fold.projects.delete(name);

  const facts = kindFacts(result);
  // A pass limited to some projects, or one that failed (it may have stopped before seeing all), keeps the others.
  const projects: Record<string, ProjectRecord> = scope.projects || result.result === 'failed' ? { ...record.projects } : {};
  const covered = scope.projects ? new Set(scope.projects) : new Set(fold.projects.keys());
  for (const name of [...covered].sort()) projects[name] = projectRecord(fold, name, record.projects[name], revision, facts.get(name));
  for (const name of released) delete projects[name];
  const fleetResources = fold.fleet.length > 0 || !scope.projects ? fold.fleet.sort(byKindThenName) : record.fleet;
  return {
    version: STATUS_RECORD_VERSION,
    updatedAt: at,
    ...(revision !== undefined ? { revision } : record.revision !== undefined ? { revision: record.revision } : {}),
    projects,
    fleet: fleetResources,
    errors: [...fold.errors.reverse(), ...record.errors].slice(0, MAX_RECENT_ERRORS),
    // Every pass of a set with a Rollout carries its whole state; a set without one has none.
    ...(result.rollout ? { rollouts: [rolloutView(result.rollout)] } : {}),
    ...(record.broken && !scope.newestCheckout ? { broken: record.broken } : {}),
  };
}

/**
 * The reading of a revision of the checkout: with errors, the record says the revision is
 * broken (naming each error's file and line) and keeps everything else, the last good
 * revision included; without, a broken revision is cleared.
 */
export function foldManifests(record: StatusRecord, revision: string | undefined, errors: readonly ManifestError[], at: number): StatusRecord {
  const failing = errors.filter((error) => error.severity !== 'warning');
  if (failing.length === 0) {
    if (!record.broken) return record;
    const { broken: _cleared, ...rest } = record;
    return { ...rest, updatedAt: at };
  }
  const same = record.broken && record.broken.revision === revision;
  return {
    ...record,
    updatedAt: at,
    broken: {
      ...(revision !== undefined ? { revision } : {}),
      since: same ? record.broken!.since : at,
      errorCount: failing.length,
      errors: failing.slice(0, MAX_BROKEN_ERRORS).map((error) => ({
        file: error.file,
        line: error.line,
        ...(error.column ? { column: error.column } : {}),
        ...(error.path ? { field: error.path } : {}),
        message: scrubMessage(`${error.message}${error.hint ? ` (${error.hint})` : ''}`),
      })),
    },
  };
}

/** A rollout's waves as the status view shows them: state, projects, and in words why or until when. */
export function rolloutView(rollout: RolloutSummary): RolloutView {
  const current = rollout.waves.find((wave) => wave.state !== 'done');
  return {
    name: rollout.name,
    waves: rollout.waves.map((wave) => {
      let detail: string | undefined;
      if (wave.state === 'soaking' && wave.soakUntil !== undefined) detail = `soaking until ${new Date(wave.soakUntil).toISOString()}`;
      else if (wave.state === 'halted') detail = scrubMessage(rollout.halted?.reason ?? wave.reason ?? 'halted');
      else if (wave.state === 'waiting' && current) detail = rollout.halted ? `the rollout is halted at wave ${rollout.halted.wave}` : `waits for wave ${current.name}`;
      else if (wave.state === 'done' && wave.reason) detail = scrubMessage(wave.reason);
      return { name: wave.name, state: wave.state, projects: [...wave.members], ...(detail ? { detail } : {}) };
    }),
  };
}

/** A pass that failed before it had a result: the error is kept (scrubbed) with nothing else changed. */
export function foldFailure(record: StatusRecord, message: string, at: number): StatusRecord {
  return { ...record, updatedAt: at, errors: [{ at, message: scrubMessage(message) }, ...record.errors].slice(0, MAX_RECENT_ERRORS) };
}

/** Keeps only these projects (the rest left the manifests). */
export function retainProjects(record: StatusRecord, names: Iterable<string>): StatusRecord {
  const keep = new Set(names);
  const projects = Object.fromEntries(Object.entries(record.projects).filter(([name]) => keep.has(name)));
  return Object.keys(projects).length === Object.keys(record.projects).length ? record : { ...record, projects };
}

function byKindThenName(a: ResourceRecord, b: ResourceRecord): number {
  return a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1;
}

/** Checks a parsed record's shape (a file from another version, or damaged, is not used). */
export function isStatusRecord(value: unknown): value is StatusRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<StatusRecord>;
  return (
    record.version === STATUS_RECORD_VERSION &&
    typeof record.updatedAt === 'number' &&
    typeof record.projects === 'object' &&
    record.projects !== null &&
    Array.isArray(record.fleet) &&
    Array.isArray(record.errors)
  );
}
