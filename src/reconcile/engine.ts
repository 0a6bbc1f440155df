// One reconciliation pass, as named steps that return values, in a fixed order:
//   load (the manifests are given: any error and nothing is planned) -> check references (every
//   secret reference resolves, before any request) -> observe (the fleet, once) -> plan (a
//   PassPlan value: the fleet-level modules' entries, then each project's kinds) -> gate (a
//   Rollout document's waves, windows and approvals mark the writes this pass holds) -> apply
//   (outcomes, owned by one PassOutcomes: leading fleet entries, each project with its creation,
//   wait, kinds, verify (the read-back and the judgement of what still differs) and pause, then
//   trailing fleet entries) -> record (the inventory, through each fleet-level module, the
//   rollout's records, and the statuses of the pass).
// A dry run differs from an apply in exactly one place, `reconcile()`: it does not apply, so it
// has no outcomes and records no inventory; it plans and records its statuses the same way.
import type { ApiClient } from '../api/client.js';
import type { ManagementApi } from '../api/endpoints.js';
import { findSecretReferences } from '../manifests/check-refs.js';
import type { AnyDocument, ManifestError, ManifestSet, OrganizationDocument, ProjectDocument } from '../manifests/types.js';
import { systemClock, type Clock } from '../util/clock.js';
import { applyProject, type ProjectApplied, type WaitSettings } from './apply-project.js';
import { describeError, redactingLogger, Redactor, withRedactor } from './describe-error.js';
import type { FleetApplyContext, FleetInput, FleetObservation } from './fleet.js';
import { IntentLog } from './intents.js';
import { loadInventory, saveInventory, type Inventory } from './inventory.js';
import { isRunning, refOf } from './kinds/project.js';
import { observeFleet } from './observe.js';
import { PassOutcomes } from './pass-outcomes.js';
import { PassState } from './pass-state.js';
import { servicesNeeded } from './project-readiness.js';
import type { Refusal } from './plan-file.js';
import { effectivePolicy } from './policy.js';
import { documentsByProject, newWork, planProject, type ProjectWork } from './project-work.js';
import { FLEET_MODULES, KIND_MODULES } from './registry.js';
import { rateText, readsForecast, sendingMs } from './forecast.js';
import { openRolloutGate, projectOfEntry, withRenamedRecords, type RolloutGate } from './rollout/gate.js';
import { readAppliedRules } from './rollout/records.js';
import { revisionOfSet } from './document-files.js';
import { callerOf, scopedApi, type RequestTally } from './scoped-api.js';
import { secretResolver, type SecretResolver } from './secret-check.js';
import { openStateStore, type FileStateStore } from './state.js';
import { statusesFor, summarizePlan } from './summary.js';
import { StateLockLostError } from '../util/state-fence.js';
import type { ApplyOutcome, KindContext, KindModule, Logger, PassResult, PlanEntry, ProjectObservation } from './types.js';

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
  /**
   * Said with the forecast of the plan's reads when they take a minute or more (for example how
   * a run of its own may have a larger budget).
   */
  budgetNote?: string;
}

/** How long a shard's apply waits for an organization another shard creates, and how often it looks. */
export const DEFAULT_ORGANIZATION_WAIT_MS = 60_000;
const ORGANIZATION_POLL_MS = 2_000;

/** A saved plan that no longer matches the live state or the manifests: refused whole. */
export class StalePlanError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'StalePlanError';
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

export function runPass(options: PassOptions): Promise<PassResult> {
  // Every value the pass resolves is scrubbed from what it describes and logs (describe-error.ts).
  const redactor = new Redactor();
  return withRedactor(redactor, () => reconcile({ ...options, log: redactingLogger(options.log, redactor) }, redactor));
}

/** The steps of a pass; each returns its value, or the pass's result when the pass ends there. */
async function reconcile(options: PassOptions, redactor: Redactor): Promise<PassResult> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const invalid = load(options, clock);
  if (invalid) return invalid;
  const checked = await checkReferences(options, redactor, clock);
  if ('invalid' in checked) return checked.invalid;
  const pass = await openPass(options, checked.secrets, clock, startedAt);
  const observed = await observe(pass);
  if ('failed' in observed) return observed.failed;
  const planned = await plan(pass, observed);
  if ('failed' in planned) return planned.failed;
  const rollout = await gate(pass, planned);
  // The one place where a dry run differs from an apply: it stops at the plan (after the gate).
  const applied = options.dryRun ? undefined : await apply(pass, planned, rollout);
  if (applied && 'refused' in applied) return applied.refused;
  return record(pass, planned, applied, rollout);
}

/** 1. Load: the manifests are given; any error in them and nothing is planned, applied or deleted. */
function load(options: PassOptions, clock: Clock): PassResult | undefined {
  if (options.manifests.errors.length === 0) return undefined;
  options.log.error({ errors: options.manifests.errors.length }, 'manifests have errors: nothing is planned or applied');
  return invalidPassResult(options.manifests, options.manifests.errors, options.dryRun, clock.now());
}

/** 2. Check references: every secret reference resolves, before anything is read; each value is scrubbed from then on. */
async function checkReferences(options: PassOptions, redactor: Redactor, clock: Clock): Promise<{ secrets: SecretResolver } | { invalid: PassResult }> {
  const documents = options.manifests.documents;
  const placeholders: string[] = [];
  const secrets = secretResolver({ env: options.env, sandbox: options.sandbox ?? false, onPlaceholder: (reference) => placeholders.push(reference) });
  const errors = await secrets.check(documents);
  if (placeholders.length > 0) {
    options.log.warn({ references: placeholders }, 'secret references do not resolve: generated placeholders are used (sandbox only)');
  }
  if (errors.length > 0) {
    for (const error of errors) options.log.error({ file: error.file, line: error.line, path: error.path }, error.message);
    return { invalid: invalidPassResult(options.manifests, errors, options.dryRun, clock.now()) };
  }
  // Known before the first request: a service message quoting any of them is scrubbed.
  for (const { document, ref } of findSecretReferences(documents)) redactor.add(await secrets.resolve(ref, document));
  return { secrets };
}

/** What every step after the checks works with: the pass's state directory, its API views, its memory. */
interface Pass {
  options: PassOptions;
  clock: Clock;
  startedAt: number;
  log: Logger;
  documents: AnyDocument[];
  secrets: SecretResolver;
  state: FileStateStore;
  inventory: Inventory;
  intents: IntentLog;
  tally: RequestTally;
  kinds: readonly KindModule[];
  /** Pass-scoped state the kinds share (refs, creations, bulk requests sent): one per pass. */
  memory: PassState;
  /** The API as the pass (no project) or the kinds of one project use it: requests counted and tagged. */
  apiFor(project?: string): ManagementApi;
  /** What the kinds of one project plan and apply with. */
  contextFor(project: string): KindContext;
  /** The result of a pass that ends before its apply with a failure (nothing applied). */
  failed(outcomes: ApplyOutcome[], plan?: PassResult['plan']): PassResult;
}

async function openPass(options: PassOptions, secrets: SecretResolver, clock: Clock, startedAt: number): Promise<Pass> {
  const state = openStateStore(options.stateDir);
  const tally: RequestTally = { total: 0, byMethod: {} };
  const caller = callerOf(options.client.api);
  const readPriority = options.priority === 'drift' ? 'drift' : 'verify';
  const signal = options.signal ? { signal: options.signal } : {};
  const apiFor = (project?: string): ManagementApi => scopedApi(caller, { readPriority, ...(project ? { project } : {}), ...signal }, tally);
  const memory = new PassState({ scheduled: options.priority === 'drift' });
  const documents = options.manifests.documents;
  return {
    options,
    clock,
    startedAt,
    log: options.log,
    documents,
    secrets,
    state,
    inventory: await loadInventory(state),
    intents: await IntentLog.open(state),
    tally,
    kinds: options.kinds ?? KIND_MODULES,
    memory,
    apiFor,
    contextFor: (project) => ({
      api: apiFor(project),
      clock,
      state,
      documents,
      resolveSecret: (ref, document) => secrets.resolve(ref, document),
      projectRefs: memory.projectRefs,
      pass: memory,
      ...signal,
      log: options.log,
    }),
    failed: (outcomes, plan) => ({
      startedAt,
      dryRun: options.dryRun,
      ...(options.manifests.revision !== undefined ? { revision: options.manifests.revision } : {}),
      manifestErrors: options.manifests.errors,
      plan: plan ?? summarizePlan([]),
      outcomes,
      resources: [],
      projects: [],
      requests: tally.total,
      result: 'failed',
      finishedAt: clock.now(),
    }),
  };
}

/** The result of a pass that could not observe what it needs (or was stopped while it observed): nothing planned or applied. */
function observationFailed(pass: Pass, error: unknown): { failed: PassResult } {
  const interrupted = pass.options.signal?.aborted === true;
  const failed = pass.failed([{ entryId: 'Project/*', kind: 'Project', action: 'noop', result: interrupted ? 'interrupted' : 'failed', error: describeError(error) }]);
  return { failed: { ...failed, ...(interrupted ? { interrupted: true } : {}) } };
}

/** What the observe step found: the fleet, and the fleet-level modules' entries planned from it. */
interface Observed {
  fleet: FleetObservation;
  fleetEntries: PlanEntry[];
}

/** 3. Observe the fleet once (the active documents, within the pass's selection); its modules (Organization, then Project) plan from what it found. */
async function observe(pass: Pass): Promise<Observed | { failed: PassResult }> {
  const { options, documents } = pass;
  const selection = options.projects ? new Set(options.projects) : undefined;
  const allProjectDocuments = documents.filter((d): d is ProjectDocument => d.kind === 'Project');
  const activeProjects = allProjectDocuments.filter((d) => !effectivePolicy(d.spec.policy).suspend && (!selection || selection.has(d.metadata.name)));
  const neededOrganizations = new Set(activeProjects.map((d) => d.spec.organization));
  const activeOrganizations = documents
    .filter((d): d is OrganizationDocument => d.kind === 'Organization')
    .filter((d) => !effectivePolicy(d.spec?.policy).suspend && (!selection || neededOrganizations.has(d.metadata.name)));
  const input: FleetInput = {
    api: pass.apiFor(),
    organizationDocuments: activeOrganizations,
    projectDocuments: activeProjects,
    declaredDocuments: allProjectDocuments,
    // Defence in depth: a pass over a set with errors never gets here, and never deletes.
    checkoutClean: options.manifests.errors.length === 0,
    ...(selection ? { selection } : {}),
    inventory: pass.inventory,
    intents: pass.intents,
    // For a shard, the whole checkout: a shard whose projects all moved to other shards hands them over.
    manifestsEmpty: documents.length === 0 && (options.manifests.shard?.elsewhere.length ?? 0) === 0,
    allowEmpty: options.allowEmpty ?? false,
    readPriority: options.priority === 'drift' ? 'drift' : 'verify',
    ...(options.manifests.shard ? { shard: options.manifests.shard } : {}),
    ...(options.manifests.shard && !options.dryRun
      ? { organizationWait: { ms: options.organizationWaitMs ?? DEFAULT_ORGANIZATION_WAIT_MS, intervalMs: ORGANIZATION_POLL_MS, clock: pass.clock } }
      : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    log: pass.log,
  };
  try {
    const fleet = await observeFleet(input);
    const fleetEntries = FLEET_MODULES.flatMap((module) => module.plan(fleet, input));
    for (const unit of fleet.projects) if (unit.live) pass.memory.projectRefs.set(unit.name, refOf(unit.live));
    pass.memory.willCreate(fleet.projects.filter((unit) => !unit.live && unit.entry?.action === 'create').map((unit) => unit.name));
    return { fleet, fleetEntries };
  } catch (error) {
    if (pass.options.signal?.aborted) pass.log.info({}, 'the pass was interrupted while observing the fleet: nothing is planned or applied');
    else pass.log.error({ error: describeError(error).message }, 'observing the fleet failed: nothing is planned or applied');
    return observationFailed(pass, error);
  }
}

/** The plan of a pass, a value: the fleet-level modules' entries, then each project's part. */
interface PassPlan extends Observed {
  works: ProjectWork[];
  /** The ProjectSet and element key of each project a set made, by project name: its entries carry them. */
  pins: Map<string, { file: string; line: number; set: { name: string; key: string } }>;
}

/** Every entry of the plan, in order: the fleet's, then each project's kinds, their failures and its lifecycle. */
function entriesOf(plan: PassPlan, applied?: AppliedPlan): PlanEntry[] {
  const entries = [
    ...plan.fleetEntries,
    ...plan.works.flatMap((work) => {
      const replanned = applied?.projects.get(work.unit.name)?.replanned;
      return [...(replanned ?? work).entries, ...(replanned ?? work).failures, ...(work.unit.lifecycle ? [work.unit.lifecycle] : [])];
    }),
  ];
  // Plans speak in templates: every entry of a generated project names its set and element.
  for (const entry of entries) {
    const pin = plan.pins.get(entry.project ?? (entry.kind === 'Project' ? entry.name : ''));
    if (pin && !entry.source?.set) entry.source = { ...(entry.source ?? { file: pin.file, line: pin.line }), set: pin.set };
  }
  return entries;
}

function pinsOf(documents: readonly AnyDocument[]): PassPlan['pins'] {
  const pins: PassPlan['pins'] = new Map();
  for (const document of documents) if (document.kind === 'Project' && document.source.set) {
    pins.set(document.metadata.name, { file: document.source.file, line: document.source.line, set: { name: document.source.set.set, key: document.source.set.key } });
  }
  return pins;
}

/**
 * How many projects are observed at once. Each project is planned as soon as its own answers
 * are in, and its raw answers are dropped then: only its entries and the few facts the status
 * needs are kept. Without a bound, a pass over a large fleet would send every read at once and
 * hold every answer until the slowest project's last one arrived (about 10 KB an answer, ten
 * answers a project), which is what the process's peak memory was made of. The requests sent
 * are the same; a rate-limited budget, not this bound, is what paces them on a real API.
 */
export const PROJECTS_OBSERVED_AT_ONCE = 32;

/** Runs `task` for every item, at most `limit` at once; the results keep the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index]!);
      } catch (error) {
        // The first failure ends the step: no further project is started.
        stopped = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** 4. Plan: the project's kinds, for every project that exists or will be created. */
async function plan(pass: Pass, observed: Observed): Promise<PassPlan | { failed: PassResult }> {
  const byProject = documentsByProject(pass.documents);
  try {
    const fresh = observed.fleet.projects.map((unit) => newWork(unit, byProject.get(unit.name) ?? [], pass.clock.now()));
    forecastReads(pass, fresh);
    const works = await mapBounded(fresh, PROJECTS_OBSERVED_AT_ONCE, (work) => planProject(work, pass.kinds, pass.contextFor(work.unit.name), pass.log));
    return { ...observed, works, pins: pinsOf(pass.documents) };
  } catch (error) {
    // Only an authentication failure gets here (other observation errors stay with their kind).
    if (pass.options.signal?.aborted) pass.log.info({}, 'the pass was interrupted while observing the projects: nothing is applied');
    else pass.log.error({ error: describeError(error).message }, 'observing the projects failed: nothing is applied');
    return observationFailed(pass, error);
  }
}

/**
 * Before the projects are read: how many reads remain (one or more per kind each running project
 * manages; a project being created or not running reads nothing yet) and how long they take at
 * the client's budget, so a long wait is announced before it starts.
 */
function forecastReads(pass: Pass, works: readonly ProjectWork[]): void {
  let reads = 0;
  for (const work of works) {
    const status = work.unit.live?.status;
    if (!work.unit.live || !isRunning(status)) continue;
    const ctx = pass.contextFor(work.unit.name);
    reads += pass.kinds.filter((kind) => kind.manages(work.scope, ctx)).length;
  }
  if (reads === 0) return;
  const { limit, windowMs } = pass.options.client.budget();
  const rate = { limit, windowMs };
  const long = sendingMs(reads, rate) >= 60_000;
  pass.log.info(
    { reads, projects: works.length, rateLimit: rateText(rate), forecastS: Math.round(sendingMs(reads, rate) / 1000) },
    `planning the projects: ${readsForecast(reads, rate)}${long && pass.options.budgetNote ? `; ${pass.options.budgetNote}` : ''}`,
  );
}

/**
 * 5. Gate: with a Rollout document, the rollout moves on where its gates allow (a soak ended, a
 * wave healthy), then marks on the plan each write this pass holds (`held`: a later wave, a
 * change outside its maintenance window, one waiting for an approval) and each entry's wave.
 * Held entries are planned and shown, never applied. A dry run goes through the gate too, so its
 * plan shows what would wait; it records nothing and tells nothing.
 */
async function gate(pass: Pass, plan: PassPlan): Promise<RolloutGate | undefined> {
  const { options } = pass;
  // Without git, the revision is the documents and every file they read (document-files.ts).
  // A revision that removed the Rollout is still judged under its rules as last applied.
  const ordered = pass.documents.some((document) => document.kind === 'Rollout') || (await readAppliedRules(pass.state))?.rollout !== undefined;
  const rollout = await openRolloutGate({
    documents: pass.documents,
    state: pass.state,
    revision: options.manifests.revision ?? (ordered ? await revisionOfSet(options.manifests) : undefined),
    clock: options.rolloutClock ?? pass.clock,
    log: pass.log,
    dryRun: options.dryRun,
    health: (name) => projectHealth(pass, plan, name),
    inventory: withRenamedRecords(pass.inventory, plan.fleet.projects),
    ...(options.manifests.shard ? { shard: options.manifests.shard } : {}),
  });
  await rollout?.hold(entriesOf(plan), options.projects ? new Set(options.projects) : undefined);
  return rollout;
}

/** The problems of a project's health (the services its documents need), for the rollout's gate; empty when healthy. A read only. */
async function projectHealth(pass: Pass, plan: PassPlan, name: string): Promise<string[]> {
  const ref = pass.memory.projectRefs.get(name);
  const work = plan.works.find((candidate) => candidate.unit.name === name);
  if (!ref || !work) return ['the project does not exist'];
  try {
    const services = servicesNeeded(work.unit.document, work.scope.documents, [...new Set([...KIND_MODULES, ...pass.kinds])]);
    const signal = pass.options.signal ? { signal: pass.options.signal } : {};
    const items = await pass.apiFor(name).getServicesHealth(ref, { priority: 'verify', project: name, query: { services }, ...signal });
    const healthy = new Set(items.filter((item) => item.healthy === true || item.status === 'ACTIVE_HEALTHY').map((item) => item.name));
    return services.filter((service) => !healthy.has(service)).map((service) => `${service} unhealthy`);
  } catch (error) {
    return [`its health could not be read: ${describeError(error).message}`];
  }
}

/** What the apply did: its outcomes, and what each project's apply found out. */
interface AppliedPlan {
  outcomes: PassOutcomes;
  projects: Map<string, ProjectApplied>;
  fleetContext: FleetApplyContext;
}

/**
 * 6. Apply, in dependency order: the fleet-level modules' leading entries (organizations'
 * creations, then renames), every project on its own (one failing never stops the others; a
 * project whose wave the rollout holds is not applied), then their trailing entries
 * (deletions). An entry the rollout holds is not written. A saved plan is applied only when this
 * plan is the same plan, entry for entry; otherwise the pass is refused whole before anything is
 * written.
 */
async function apply(pass: Pass, plan: PassPlan, rollout: RolloutGate | undefined): Promise<AppliedPlan | { refused: PassResult }> {
  const entries = entriesOf(plan);
  const refusals = pass.options.savedPlan?.check(entries) ?? [];
  if (refusals.length > 0) {
    for (const refusal of refusals) pass.log.error({ resource: refusal.resource }, `the saved plan is refused: ${refusal.reason}`);
    return { refused: pass.failed(refusals.map(refusalOutcome(new Map(entries.map((e) => [e.id, e.kind])))), summarizePlan(entries)) };
  }
  const { options, clock, log } = pass;
  const outcomes = new PassOutcomes({ clock, log, changes: entries.filter((e) => !e.observeOnly && e.action !== 'noop' && !e.held).length, ...(options.signal ? { signal: options.signal } : {}) });
  const fleetContext: FleetApplyContext = {
    fleet: plan.fleet,
    api: pass.apiFor(),
    apiFor: pass.apiFor,
    inventory: pass.inventory,
    intents: pass.intents,
    state: pass.state,
    secrets: pass.secrets,
    clock,
    log,
    projectRefs: pass.memory.projectRefs,
    ...(options.manifests.shard ? { shard: options.manifests.shard.name } : {}),
    held: new Set(entries.filter((e) => e.held).map(projectOfEntry).filter((p): p is string => p !== undefined)),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  // The fleet-level module that planned an entry applies it.
  const applyFleetEntry = (entry: PlanEntry): Promise<void> => {
    const module = FLEET_MODULES.find((candidate) => (candidate.produces as readonly string[]).includes(entry.kind));
    if (!module) throw new Error(`no fleet-level module applies ${entry.kind} entries`);
    return module.apply(entry, fleetContext);
  };
  for (const module of FLEET_MODULES) for (const entry of module.leading(plan.fleet)) await outcomes.run(entry, () => module.apply(entry, fleetContext));
  const projects = new Map<string, ProjectApplied>();
  await Promise.all(
    plan.works.filter((work) => !rollout?.holdsProject(work.unit.name)).map(async (work) => {
      try {
        projects.set(work.unit.name, await applyProject(work, {
          outcomes,
          applyFleetEntry,
          context: pass.contextFor(work.unit.name),
          kinds: pass.kinds,
          services: [...new Set([...KIND_MODULES, ...pass.kinds])],
          clock,
          log,
          projectRefs: pass.memory.projectRefs,
          appliesSavedPlan: options.savedPlan !== undefined,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.wait ? { wait: options.wait } : {}),
        }));
      } catch (error) {
        if (options.signal?.aborted) log.info({ project: work.unit.name }, 'applying the project was interrupted');
        else log.error({ project: work.unit.name, error: describeError(error).message }, 'applying the project stopped');
      }
    }),
  );
  for (const module of FLEET_MODULES) for (const entry of module.trailing(plan.fleet)) await outcomes.run(entry, () => module.apply(entry, fleetContext));
  return { outcomes, projects, fleetContext };
}

/**
 * 7. Record: after an apply, the inventory (each fleet-level module records its kind, in
 * registry order, then it is saved) and the rollout's records (applied revisions, soaks, halts;
 * not after an interrupted pass, which moves no rollout on); after any pass, the statuses of its
 * resources and projects, and the rollout as the pass leaves it (read by `reconcile status` and
 * the metrics).
 */
async function record(pass: Pass, plan: PassPlan, applied: AppliedPlan | undefined, gate: RolloutGate | undefined): Promise<PassResult> {
  const { options, clock } = pass;
  const entries = entriesOf(plan, applied);
  const outcomes = applied?.outcomes.list ?? [];
  const now = clock.now();
  const verified = plan.works.flatMap((work) => applied?.projects.get(work.unit.name)?.verified ?? []);
  const resources = statusesFor(entries, outcomes, applied === undefined, now, verified);
  // A holder that lost the state lock records nothing: its successor's records stand.
  let lockLost: StateLockLostError | undefined;
  const recordFenced = async (write: () => Promise<void>): Promise<void> => {
    if (lockLost) return;
    try {
      await write();
    } catch (error) {
      if (!(error instanceof StateLockLostError)) throw error;
      lockLost = error;
      pass.log.error({ error: error.message }, 'the state lock was lost: this pass records nothing in the state directory');
    }
  };
  if (applied) {
    await recordFenced(async () => {
      for (const module of FLEET_MODULES) await module.record(applied.fleetContext, now);
      await saveInventory(pass.state, pass.inventory, now);
      // An interrupted pass moves no rollout on: the next pass plans what it did not do.
      if (!options.signal?.aborted) await gate?.record(entries, outcomes);
    });
  }
  const rollout = gate?.summary();
  const projects = plan.works.map((work) => projectObservation(pass, work, applied?.projects.get(work.unit.name)));
  const anyFailed = outcomes.some((o) => o.result !== 'success') || entries.some((e) => e.action === 'blocked') || plan.works.some((w) => w.failures.length > 0);
  const result: PassResult = {
    startedAt: pass.startedAt,
    finishedAt: clock.now(),
    dryRun: options.dryRun,
    ...(options.manifests.revision !== undefined ? { revision: options.manifests.revision } : {}),
    manifestErrors: [],
    plan: summarizePlan(entries),
    outcomes,
    resources,
    projects,
    result: anyFailed || lockLost ? 'failed' : 'success',
    requests: pass.tally.total,
    ...(rollout ? { rollout } : {}),
    ...(options.signal?.aborted ? { interrupted: true } : {}),
  };
  // The pass returns what it found and did; its callers fold it into the status record (src/status).
  return result;
}

/** What the pass saw of one project: its ref, its status and health as last seen, and when its kinds were read. */
function projectObservation(pass: Pass, work: ProjectWork, applied: ProjectApplied | undefined): ProjectObservation {
  const observation: ProjectObservation = { name: work.unit.name, observedAt: applied?.observedAt ?? work.observedAt };
  const ref = pass.memory.projectRefs.get(work.unit.name);
  if (ref) observation.ref = ref;
  const status = applied?.status ?? work.scope.status ?? work.unit.live?.status;
  if (status) observation.status = status;
  if (applied?.health) observation.health = applied.health;
  return observation;
}
