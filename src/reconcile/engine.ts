// One reconciliation pass, in a fixed order: manifests (given) -> secret references ->
// observe -> plan -> (dry run: render and stop) -> apply in dependency order -> verify ->
// record. The plan is a value; the dry run differs from the apply in exactly one place.
import type { ApiClient } from '../api/client.js';
import type { ManagementApi } from '../api/endpoints.js';
import type { ManifestError, ManifestSet, OrganizationDocument, ProjectDocument } from '../manifests/types.js';
import { systemClock, type Clock } from '../util/clock.js';
import { applyProject, type WaitSettings } from './apply-project.js';
import { applyProgress } from './apply-progress.js';
import { describeError, redactingLogger, Redactor, withRedactor } from './describe-error.js';
import { IntentLog } from './intents.js';
import { loadInventory, saveInventory } from './inventory.js';
import { observeFleet, type FleetInput, type FleetObservation } from './observe.js';
import { effectivePolicy } from './policy.js';
import { documentsByProject, newWork, pendingEntries, planModules, type ProjectWork } from './project-work.js';
import { isPausedStatus, isRunning, refOf } from './kinds/project.js';
import { FLEET_MODULES, KIND_MODULES } from './registry.js';
import { callerOf, scopedApi, type RequestTally } from './scoped-api.js';
import { secretResolver } from './secret-check.js';
import { findSecretReferences } from '../manifests/check-refs.js';
import { openStateStore } from './state.js';
import { openRolloutGate } from './rollout/gate.js';
import { servicesNeeded } from './project-readiness.js';
import { StateLockLostError } from '../util/state-fence.js';
import { isChange, summarizePlan, statusesFor } from './summary.js';
import type { ApplyOutcome, FleetApplyContext, KindContext, KindModule, Logger, PassResult, PlanEntry, ProjectObservation } from './types.js';
import type { Refusal } from './plan-file.js';

export interface PassOptions {
  /** Already loaded (the daemon keeps the last good set). */
  manifests: ManifestSet;
  client: ApiClient;
  stateDir: string;
  dryRun: boolean;
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock?: Clock;
  sandbox?: boolean;
  allowEmpty?: boolean;
  signal?: AbortSignal;
  /** `drift`: a scheduled background re-check (its reads yield to everything else). */
  priority?: 'write' | 'drift';
  /** Limit the pass to these project manifest names. */
  projects?: string[];
  /** Registered kinds (default: the registry); tests pass their own. */
  kinds?: readonly KindModule[];
  /** Waiting for a new project: first poll delay, cap and give-up time (clock ms). */
  wait?: WaitSettings;
  /**
   * In a sharded fleet, how long (clock ms) an apply waits for a missing organization that
   * another shard creates; default 60 s. A dry run never waits.
   */
  organizationWaitMs?: number;
  /**
   * A saved plan's apply: called with the freshly computed entries before anything is
   * written; any refusal stops the pass whole (nothing written, each refused resource an
   * outcome). When it passes, the apply runs exactly these entries: a project that becomes
   * ready is not planned a second time.
   */
  savedPlan?: { check(entries: readonly PlanEntry[]): Refusal[] };
  /**
   * The clock a Rollout's soaks and maintenance windows are timed on (default `clock`): the
   * sandbox runs them at its lifecycle speed.
   */
  rolloutClock?: Clock;
}

/** How long a shard's apply waits for an organization another shard creates, and how often it looks. */
export const DEFAULT_ORGANIZATION_WAIT_MS = 60_000;
const ORGANIZATION_POLL_MS = 2_000;

/** The key of the last pass's statuses in the state directory (read by `reconcile status`). */
const LAST_PASS_KEY = 'last-pass';

class PassAbortedError extends Error {
  constructor() {
    super('the pass was stopped before this change');
    this.name = 'PassAbortedError';
  }
}

/** A saved plan that no longer matches the live state or the manifests: refused whole. */
export class StalePlanError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'StalePlanError';
  }
}

/** The log messages of an outcome, by what it ran. */
const STEP_WORDS = {
  wait: { success: 'project ready', failed: 'readiness wait failed', skipped: 'readiness wait skipped', interrupted: 'readiness wait interrupted' },
  verify: { success: 'writes verified', failed: 'verification failed', skipped: 'verification skipped', interrupted: 'verification interrupted' },
  change: { success: 'change applied', failed: 'change failed', skipped: 'change skipped', interrupted: 'change interrupted' },
} as const;

class BlockedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'Blocked';
  }
}

/** The result of a pass over manifests that did not load (or whose references do not resolve): nothing planned. */
export function invalidPassResult(manifests: ManifestSet, errors: ManifestError[], dryRun: boolean, now: number): PassResult {
  return {
    startedAt: now,
    finishedAt: now,
    dryRun,
    ...(manifests.revision !== undefined ? { revision: manifests.revision } : {}),
    manifestErrors: errors,
    plan: summarizePlan([]),
    outcomes: [],
    resources: [],
    projects: [],
    result: 'invalid',
    requests: 0,
  };
}

/**
 * The result of a saved plan refused before any request (its manifests, secrets or age no
 * longer match): the saved plan, and each refused resource as an outcome; nothing applied.
 */
export function refusedPassResult(manifests: ManifestSet, plan: PassResult['plan'] | undefined, refusals: readonly Refusal[], now: number): PassResult {
  return {
    ...invalidPassResult(manifests, [], false, now),
    plan: plan ?? summarizePlan([]),
    outcomes: refusals.map(refusalOutcome(new Map((plan?.entries ?? []).map((e) => [e.id, e.kind])))),
    result: 'failed',
  };
}

function refusalOutcome(kinds: ReadonlyMap<string, PlanEntry['kind']>): (refusal: Refusal) => ApplyOutcome {
  return (refusal) => ({
    entryId: refusal.resource,
    kind: kinds.get(refusal.resource) ?? 'Project',
    action: 'noop',
    result: 'skipped',
    error: describeError(new StalePlanError(refusal.reason)),
  });
}

/** What an apply wrote and the read-back shows still differing: the pass did not do its work. */
class StillDiffersError extends Error {
  constructor(fields: string[]) {
    super(`still differs after the apply${fields.length ? ` (${fields.join(', ')})` : ''}`);
    this.name = 'StillDiffersError';
  }
}

export function runPass(options: PassOptions): Promise<PassResult> {
  // Every value the pass resolves is scrubbed from what it describes and logs (describe-error.ts).
  const redactor = new Redactor();
  return withRedactor(redactor, () => reconcile({ ...options, log: redactingLogger(options.log, redactor) }, redactor));
}

async function reconcile(options: PassOptions, redactor: Redactor): Promise<PassResult> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const log = options.log;
  const base = (): Omit<PassResult, 'result' | 'finishedAt'> => ({
    startedAt,
    dryRun: options.dryRun,
    ...(options.manifests.revision !== undefined ? { revision: options.manifests.revision } : {}),
    manifestErrors: options.manifests.errors,
    plan: summarizePlan([]),
    outcomes: [],
    resources: [],
    projects: [],
    requests: 0,
  });

  // 1. Manifests: any error and nothing is planned, applied or deleted.
  if (options.manifests.errors.length > 0) {
    log.error({ errors: options.manifests.errors.length }, 'manifests have errors: nothing is planned or applied');
    return invalidPassResult(options.manifests, options.manifests.errors, options.dryRun, clock.now());
  }

  // 2. Secret references, all of them, before anything is read.
  const documents = options.manifests.documents;
  const placeholders: string[] = [];
  const secrets = secretResolver({ env: options.env, sandbox: options.sandbox ?? false, onPlaceholder: (reference) => placeholders.push(reference) });
  const referenceErrors = await secrets.check(documents);
  if (placeholders.length > 0) {
    log.warn({ references: placeholders }, 'secret references do not resolve: generated placeholders are used (sandbox only)');
  }
  if (referenceErrors.length > 0) {
    for (const error of referenceErrors) log.error({ file: error.file, line: error.line, path: error.path }, error.message);
    return invalidPassResult(options.manifests, referenceErrors, options.dryRun, clock.now());
  }
  // Known before the first request: a service message quoting any of them is scrubbed.
  for (const { document, ref } of findSecretReferences(documents)) redactor.add(await secrets.resolve(ref, document));

  const state = openStateStore(options.stateDir);
  const inventory = await loadInventory(state);
  const intents = await IntentLog.open(state);
  const tally: RequestTally = { total: 0, byMethod: {} };
  /** The result of a pass that could not observe what it needs: nothing planned or applied. */
  const observationFailed = (error: unknown): PassResult => ({
    ...base(),
    outcomes: [{ entryId: 'Project/*', kind: 'Project', action: 'noop', result: options.signal?.aborted ? 'interrupted' : 'failed', error: describeError(error) }],
    requests: tally.total,
    result: 'failed',
    ...(options.signal?.aborted ? { interrupted: true } : {}),
    finishedAt: clock.now(),
  });
  const caller = callerOf(options.client.api);
  const readPriority = options.priority === 'drift' ? 'drift' : 'verify';
  const apiFor = (project?: string): ManagementApi =>
    scopedApi(caller, { readPriority, ...(project ? { project } : {}), ...(options.signal ? { signal: options.signal } : {}) }, tally);
  const passApi = apiFor();
  const kinds = options.kinds ?? KIND_MODULES;
  const selection = options.projects ? new Set(options.projects) : undefined;
  const projectRefs = new Map<string, string>();

  const organizationDocuments = documents.filter((d): d is OrganizationDocument => d.kind === 'Organization');
  const allProjectDocuments = documents.filter((d): d is ProjectDocument => d.kind === 'Project');
  const activeProjects = allProjectDocuments.filter(
    (d) => !effectivePolicy(d.spec.policy).suspend && (!selection || selection.has(d.metadata.name)),
  );
  const neededOrganizations = new Set(activeProjects.map((d) => d.spec.organization));
  const activeOrganizations = organizationDocuments.filter(
    (d) => !effectivePolicy(d.spec?.policy).suspend && (!selection || neededOrganizations.has(d.metadata.name)),
  );

  // 3. Observe the fleet once; its modules (Organization, then Project) plan from what it found.
  let fleet: FleetObservation;
  let fleetEntries: PlanEntry[];
  try {
    const fleetInput: FleetInput = {
      api: passApi,
      organizationDocuments: activeOrganizations,
      projectDocuments: activeProjects,
      declaredDocuments: allProjectDocuments,
      // Defence in depth: a pass over a set with errors never gets here, and never deletes.
      checkoutClean: options.manifests.errors.length === 0,
      ...(selection ? { selection } : {}),
      inventory,
      intents,
      // For a shard, the whole checkout: a shard whose projects all moved to other shards hands them over.
      manifestsEmpty: documents.length === 0 && (options.manifests.shard?.elsewhere.length ?? 0) === 0,
      allowEmpty: options.allowEmpty ?? false,
      readPriority,
      ...(options.manifests.shard ? { shard: options.manifests.shard } : {}),
      ...(options.manifests.shard && !options.dryRun
        ? { organizationWait: { ms: options.organizationWaitMs ?? DEFAULT_ORGANIZATION_WAIT_MS, intervalMs: ORGANIZATION_POLL_MS, clock } }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      log,
    };
    const observed = await observeFleet(fleetInput);
    fleet = observed;
    fleetEntries = FLEET_MODULES.flatMap((module) => module.plan(observed, fleetInput));
  } catch (error) {
    if (options.signal?.aborted) log.info({}, 'the pass was interrupted while observing the fleet: nothing is planned or applied');
    else log.error({ error: describeError(error).message }, 'observing the fleet failed: nothing is planned or applied');
    return observationFailed(error);
  }
  for (const unit of fleet.projects) if (unit.live) projectRefs.set(unit.name, refOf(unit.live));

  const contextFor = (name: string): KindContext => ({
    api: apiFor(name),
    clock,
    state,
    documents,
    resolveSecret: (ref, document) => secrets.resolve(ref, document),
    projectRefs,
    ...(options.signal ? { signal: options.signal } : {}),
    log,
  });

  // 4. Plan: the project's kinds, for every project that exists or will be created.
  let works: ProjectWork[];
  const byProject = documentsByProject(documents);
  try {
    works = await Promise.all(
      fleet.projects.map(async (unit) => {
        const work = newWork(unit, byProject.get(unit.name) ?? [], clock.now());
        if (unit.entry?.action === 'blocked' && !unit.live) return work;
        const status = unit.live?.status;
        if (unit.live && isPausedStatus(status) && unit.document.spec.paused !== false) {
          work.modulesSkipped = `paused (status ${status}): configuration is not checked while paused`;
          return work;
        }
        if (!unit.live) {
          // A project this pass creates: its kinds are planned from the manifests alone (the
          // live side is the service's default), applied as planned once it is ready.
          work.deferred = true;
        } else if (!isRunning(status)) {
          // A project that exists but is not running (restored by this pass, coming up,
          // upgrading) cannot be read: each managed kind is pending until it runs, and an apply
          // plans them once the project is ready (its first plan of them). Never planned blind:
          // a blind plan would set up replicas or providers it already has, or replace a root
          // key without its confirmation.
          work.deferred = true;
          work.planWhenReady = true;
          delete work.scope.ref;
          work.entries = pendingEntries(work, kinds, contextFor(unit.name), `the project is ${status ?? 'not running'}: its configuration is planned once it runs`);
          return work;
        }
        Object.assign(work, await planModules(work, kinds, contextFor(unit.name), log));
        return work;
      }),
    );
  } catch (error) {
    // Only an authentication failure gets here (other observation errors stay with their kind).
    if (options.signal?.aborted) log.info({}, 'the pass was interrupted while observing the projects: nothing is applied');
    else log.error({ error: describeError(error).message }, 'observing the projects failed: nothing is applied');
    return observationFailed(error);
  }

  const assemble = (): PlanEntry[] => [
    ...fleetEntries,
    ...works.flatMap((work) => [
      ...work.entries,
      ...work.failures,
      ...(work.unit.lifecycle ? [work.unit.lifecycle] : []),
    ]),
  ];

  // A saved plan is applied only when this plan is the same plan, entry for entry.
  if (!options.dryRun && options.savedPlan) {
    const entries = assemble();
    const refusals = options.savedPlan.check(entries);
    if (refusals.length > 0) {
      for (const refusal of refusals) log.error({ resource: refusal.resource }, `the saved plan is refused: ${refusal.reason}`);
      return {
        ...base(),
        plan: summarizePlan(entries),
        outcomes: refusals.map(refusalOutcome(new Map(entries.map((e) => [e.id, e.kind])))),
        requests: tally.total,
        result: 'failed',
        finishedAt: clock.now(),
      };
    }
  }

  // The rollout gate (a Rollout document): which writes wait (a later wave, a window, an
  // approval). Held entries are planned and shown, never applied in this pass.
  const gate = await openRolloutGate({
    documents,
    state,
    revision: options.manifests.revision,
    clock: options.rolloutClock ?? clock,
    log,
    dryRun: options.dryRun,
    health: async (name) => {
      const ref = projectRefs.get(name);
      const unit = fleet.projects.find((candidate) => candidate.name === name);
      if (!ref || !unit) return ['the project does not exist'];
      try {
        const services = servicesNeeded(unit.document, byProject.get(name) ?? []);
        const items = await apiFor(name).getServicesHealth(ref, { priority: 'verify', project: name, query: { services }, ...(options.signal ? { signal: options.signal } : {}) });
        const healthy = new Set(items.filter((item) => item.healthy === true || item.status === 'ACTIVE_HEALTHY').map((item) => item.name));
        return services.filter((service) => !healthy.has(service)).map((service) => `${service} unhealthy`);
      } catch (error) {
        return [`its health could not be read: ${describeError(error).message}`];
      }
    },
  });
  await gate?.hold(assemble(), selection);

  // What the fleet-level modules apply and record with.
  const fleetContext: FleetApplyContext = {
    fleet,
    api: passApi,
    apiFor,
    inventory,
    intents,
    state,
    secrets,
    clock,
    log,
    projectRefs,
    ...(options.manifests.shard ? { shard: options.manifests.shard.name } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };

  const outcomes: ApplyOutcome[] = [];
  // 5. Apply (the one place where a dry run differs).
  if (!options.dryRun) {
    const failed = new Set<string>();
    const progress = applyProgress(clock, assemble().filter((e) => !e.observeOnly && e.action !== 'noop' && !e.held).length, log);
    const record = (step: Pick<ApplyOutcome, 'entryId' | 'kind' | 'action'>, result: ApplyOutcome['result'], started: number, error?: unknown) => {
      const outcome: ApplyOutcome = { ...step, result, durationMs: clock.now() - started };
      if (error !== undefined) outcome.error = describeError(error);
      if (result !== 'success') failed.add(step.entryId);
      outcomes.push(outcome);
      const fields = { entry: step.entryId, action: step.action, result, ...(outcome.error ? { error: outcome.error.message } : {}) };
      // A wait or a read-back is a step, not a change: its lines say so.
      const words = STEP_WORDS[step.action as keyof typeof STEP_WORDS] ?? STEP_WORDS.change;
      if (result === 'failed') log.error(fields, words.failed);
      else if (result === 'interrupted') log.info(fields, words.interrupted);
      // Changes the stopping process never started: planned again by the next pass, as the interrupted one.
      else if (result === 'skipped' && error instanceof PassAbortedError) log.info(fields, words.skipped);
      else if (result === 'skipped') log.warn(fields, words.skipped);
      else log.info(fields, words.success);
      if (step.action !== 'wait' && step.action !== 'verify') progress(result);
    };
    const runEntry = async (entry: PlanEntry, apply: (() => Promise<void>) | undefined) => {
      if (entry.observeOnly || entry.action === 'noop' || entry.held) return;
      const started = clock.now();
      const step = { entryId: entry.id, kind: entry.kind, action: entry.action };
      if (entry.action === 'blocked') return record(step, 'skipped', started, new BlockedError(entry.reason ?? 'blocked'));
      const waitingOn = (entry.dependsOn ?? []).filter((id) => failed.has(id));
      if (waitingOn.length > 0) return record(step, 'skipped', started, new Error(`depends on ${waitingOn.join(', ')}, which did not succeed`));
      if (options.signal?.aborted) return record(step, 'skipped', started, new PassAbortedError());
      if (!apply) return record(step, 'skipped', started, new Error('nothing can apply this change'));
      try {
        await apply();
        record(step, 'success', started);
      } catch (error) {
        // Stopped by the process's own stop (a signal, a lost lock): not a failure of the change.
        record(step, options.signal?.aborted ? 'interrupted' : 'failed', started, error);
      }
    };
    // The wait until a project is ready and the read-back after its writes: outcomes of their
    // own (actions `wait` and `verify`), never a change and never a second plan.
    const runStep = async (id: string, action: 'wait' | 'verify', run: () => Promise<void>) => {
      const started = clock.now();
      const step = { entryId: id, kind: 'Project' as const, action };
      if (options.signal?.aborted) return record(step, 'skipped', started, new PassAbortedError());
      try {
        await run();
        record(step, 'success', started);
      } catch (error) {
        record(step, options.signal?.aborted ? 'interrupted' : 'failed', started, error);
      }
    };

    // The fleet-level module that planned an entry applies it.
    const applyFleetEntry = (entry: PlanEntry): Promise<void> => {
      const module = FLEET_MODULES.find((candidate) => (candidate.produces as readonly string[]).includes(entry.kind));
      if (!module) throw new Error(`no fleet-level module applies ${entry.kind} entries`);
      return module.apply(entry, fleetContext);
    };

    // Fleet-level entries that come before any project's own changes: organizations' creations, then renames.
    for (const module of FLEET_MODULES) {
      for (const entry of module.leading(fleet)) await runEntry(entry, () => module.apply(entry, fleetContext));
    }

    // Then every project on its own: one failing never stops the others.
    await Promise.all(
      works.filter((work) => !gate?.holdsProject(work.unit.name)).map((work) =>
        applyProject(work, {
          applyFleetEntry,
          runEntry,
          runStep,
          appliesSavedPlan: options.savedPlan !== undefined,
          failed,
          context: contextFor(work.unit.name),
          kinds,
          clock,
          log,
          projectRefs,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.wait ? { wait: options.wait } : {}),
        }).catch((error: unknown) => {
          if (options.signal?.aborted) log.info({ project: work.unit.name }, 'applying the project was interrupted');
          else log.error({ project: work.unit.name, error: describeError(error).message }, 'applying the project stopped');
        }),
      ),
    );

    // Honest results: a write the read-back still shows as a difference did not do its work.
    for (const work of works) {
      const differing: string[] = [];
      for (const after of work.verified ?? []) {
        if (!isChange(after) || after.pending) continue;
        const outcome = outcomes.find((o) => o.entryId === after.id && o.result === 'success');
        if (!outcome) continue;
        outcome.result = 'failed';
        outcome.error = describeError(new StillDiffersError(after.changes.map((c) => c.path)));
        failed.add(after.id);
        differing.push(after.id);
        log.error({ entry: after.id, fields: after.changes.map((c) => c.path) }, 'change failed: it still differs after the apply');
      }
      const verify = differing.length > 0 ? outcomes.find((o) => o.entryId === `Project/${work.unit.name}#verify` && o.result === 'success') : undefined;
      if (verify) {
        verify.result = 'failed';
        verify.error = describeError(new StillDiffersError(differing));
      }
    }

    // Fleet-level entries that come after every project's changes: deletions.
    for (const module of FLEET_MODULES) {
      for (const entry of module.trailing(fleet)) await runEntry(entry, () => module.apply(entry, fleetContext));
    }
  }

  // 6. Record: the inventory (apply only; each fleet-level module records its kind) and the statuses of this pass.
  const entries = assemble();
  const plan = summarizePlan(entries);
  const now = clock.now();
  const resources = statusesFor(entries, outcomes, options.dryRun, now, works.flatMap((w) => w.verified ?? []));
  // A holder that lost the state lock records nothing: its successor's records stand.
  let lockLost: StateLockLostError | undefined;
  const recordFenced = async (write: () => Promise<void>): Promise<void> => {
    if (lockLost) return;
    try {
      await write();
    } catch (error) {
      if (!(error instanceof StateLockLostError)) throw error;
      lockLost = error;
      log.error({ error: error.message }, 'the state lock was lost: this pass records nothing in the state directory');
    }
  };
  if (!options.dryRun) {
    await recordFenced(async () => {
      for (const module of FLEET_MODULES) await module.record(fleetContext, now);
      inventory.resources = entries.filter((e) => e.action !== 'delete' && !e.observeOnly).map((e) => e.id);
      await saveInventory(state, inventory, now);
      // An interrupted pass moves no rollout on: the next pass plans what it did not do.
      if (!options.signal?.aborted) await gate?.record(entries, outcomes);
    });
  }
  const rollout = gate?.summary();

  const projects: ProjectObservation[] = works.map((work) => {
    const observation: ProjectObservation = { name: work.unit.name, observedAt: work.observedAt };
    const ref = projectRefs.get(work.unit.name);
    if (ref) observation.ref = ref;
    const status = work.scope.status ?? work.unit.live?.status;
    if (status) observation.status = status;
    if (work.health) observation.health = work.health;
    return observation;
  });

  const anyFailed =
    outcomes.some((o) => o.result !== 'success') ||
    entries.some((e) => e.action === 'blocked') ||
    works.some((w) => w.failures.length > 0);
  const result: PassResult = {
    startedAt,
    finishedAt: clock.now(),
    dryRun: options.dryRun,
    ...(options.manifests.revision !== undefined ? { revision: options.manifests.revision } : {}),
    manifestErrors: [],
    plan,
    outcomes,
    resources,
    projects,
    result: anyFailed || lockLost ? 'failed' : 'success',
    requests: tally.total,
    ...(rollout ? { rollout } : {}),
    ...(options.signal?.aborted ? { interrupted: true } : {}),
  };
  await recordFenced(() =>
    state.set(LAST_PASS_KEY, {
      finishedAt: result.finishedAt,
      dryRun: result.dryRun,
      result: result.result,
      ...(result.interrupted ? { interrupted: true } : {}),
      revision: result.revision,
      resources,
      projects,
      ...(rollout ? { rollout: { ...rollout, events: [] } } : {}),
    }),
  );
  if (lockLost) result.result = 'failed';
  return result;
}
