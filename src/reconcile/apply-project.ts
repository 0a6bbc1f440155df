// Applying one project's part of the plan, as planned, in named steps: its creation (exactly
// once) or its gate (a blocked or unavailable project, or a new one the rollout holds, runs
// nothing below it), a restore, the wait until it and its services are healthy, its kinds'
// entries in registry order (an entry the rollout holds is not run), the read-back that
// verifies what was written (and the judgement of what still differs), the entries that must
// come after the read-back, and a pause last. The wait and the read-back are
// steps of the apply (outcomes `wait` and `verify`), never a second plan; the one plan made
// after a wait is the first of a project that could not be read before it.
import type { Clock } from '../util/clock.js';
import { describeError } from './describe-error.js';
import type { PassOutcomes } from './pass-outcomes.js';
import { servicesNeeded, waitUntilReady, type WaitOptions } from './project-readiness.js';
import { lifecycleTarget, planModules, type ModulePlan, type ProjectWork } from './project-work.js';
import { isChange } from './summary.js';
import type { KindContext, KindModule, Logger, PlanEntry, ProjectScope } from './types.js';

export interface WaitSettings {
  initialDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
}

export interface ProjectApplyContext {
  outcomes: PassOutcomes;
  /** Applies an entry of the fleet-level modules (the project's creation, its pause or restore). */
  applyFleetEntry: (entry: PlanEntry) => Promise<void>;
  context: KindContext;
  kinds: readonly KindModule[];
  /** The modules whose `services` a new or restored project must report healthy (the registry's and the pass's kinds). */
  services: readonly KindModule[];
  clock: Clock;
  log: Logger;
  projectRefs: ReadonlyMap<string, string>;
  /** A saved plan's apply: a project that was not readable at plan time is not planned now. */
  appliesSavedPlan: boolean;
  signal?: AbortSignal;
  wait?: WaitSettings;
}

/** What applying a project found out, beyond its outcomes: the engine's final plan and statuses read it. */
export interface ProjectApplied {
  /** The project's kinds, planned once it was ready (it could not be read at plan time): they replace its placeholders. */
  replanned?: ModulePlan;
  /** The read-back after the apply. */
  verified?: PlanEntry[];
  /** Service health seen by the readiness wait. */
  health?: Record<string, boolean>;
  /** The project's status as the apply last saw it (its creation's answer, the readiness wait). */
  status?: string;
  /** When the project's kinds were last read (a plan after the wait, the read-back). */
  observedAt?: number;
}

export async function applyProject(work: ProjectWork, a: ProjectApplyContext): Promise<ProjectApplied> {
  const result: ProjectApplied = {};
  let scope = work.scope;
  let entries = work.entries;
  const gate = await createOrGate(work, a);
  if (gate === 'stop') return result;
  if (gate) {
    scope = { ...scope, ...gate };
    result.status = gate.status!;
  }

  const ref = a.projectRefs.get(work.unit.name);
  if (!ref) return result;
  const lifecycle = work.unit.lifecycle;
  // A restore the rollout holds (a window, an approval): the project stays paused, so nothing of
  // it can be applied, and no wait for it to run could end.
  if (lifecycle?.held && lifecycle.target?.paused === false) return result;
  const restoring = lifecycle !== undefined && lifecycleTarget(lifecycle) === 'restore';
  const pausesLast = lifecycle !== undefined && lifecycleTarget(lifecycle) === 'pause';
  if (restoring && !(await a.outcomes.run(lifecycle, () => a.applyFleetEntry(lifecycle)))) {
    await a.outcomes.skipAll(entries, lifecycle.id);
    return result;
  }
  if (work.modulesSkipped && !restoring) return result;

  // A saved plan's placeholders for a project that was not readable write nothing: no wait.
  const nothingAfterWait = work.planWhenReady === true && a.appliesSavedPlan && !restoring && !pausesLast && !entries.some(isChange);
  if ((work.deferred || restoring) && !nothingAfterWait) {
    const readyId = `${restoring ? lifecycle!.id : work.unit.entry!.id}#ready`;
    const wait = await waitStep(readyId, ref, scope, work, a);
    if (wait.ready) {
      Object.assign(result, { health: wait.ready.health, status: wait.ready.scope.status });
      scope = wait.ready.scope;
    }
    if (!wait.succeeded) {
      a.log.error({ project: work.unit.name }, 'the project did not become ready: its configuration is not applied in this pass');
      await a.outcomes.skipAll(entries, readyId);
      if (lifecycle && !restoring) await a.outcomes.skipAll([lifecycle], readyId);
      return result;
    }
    if (wait.replanned) {
      result.replanned = wait.replanned;
      result.observedAt = wait.replanned.observedAt;
      entries = wait.replanned.entries;
    }
  }

  const applied = await applyKinds(entries.filter((entry) => !appliesLast(entry, a.kinds)), scope, a);
  if (applied.size > 0) {
    const readBack = await verifyStep(work.unit.name, applied, scope, a);
    if (readBack.observedAt !== undefined) result.observedAt = readBack.observedAt;
    if (readBack.verified) result.verified = readBack.verified;
  }
  await applyKinds(entries.filter((entry) => appliesLast(entry, a.kinds)), scope, a);

  // Pause last: the configuration above is written while the project runs.
  if (lifecycle && pausesLast) await a.outcomes.run(lifecycle, () => a.applyFleetEntry(lifecycle));
  return result;
}

/**
 * The project's own entry first. A creation runs (exactly once) and yields the new project's
 * ref and status; a creation that fails, a blocked project and a missing one under the observe
 * policy stop here, with everything below them skipped or not run.
 */
async function createOrGate(work: ProjectWork, a: ProjectApplyContext): Promise<Partial<ProjectScope> | 'stop' | undefined> {
  const unit = work.unit;
  const entry = unit.entry!;
  // Held by the rollout (a later wave, a window, an approval): a new project is not created yet.
  if (entry.held) return 'stop';
  if (entry.action === 'create' && entry.observeOnly) return 'stop'; // a missing project is reported, nothing below it can be applied
  if (entry.action === 'create') {
    if (await a.outcomes.run(entry, () => a.applyFleetEntry(entry))) return { ref: unit.created!.ref, status: unit.created!.status };
    // Its dependants are skipped through dependsOn; entries without it still cannot run.
    await a.outcomes.skipAll(work.entries, entry.id);
    if (unit.lifecycle) await a.outcomes.run(unit.lifecycle, undefined);
    return 'stop';
  }
  if (entry.action === 'blocked') {
    // A project whose identity is in question (another region, an ambiguous name) is not touched.
    await a.outcomes.run(entry, undefined);
    await a.outcomes.skipAll([...work.entries, ...(unit.lifecycle ? [unit.lifecycle] : [])], entry.id);
    return 'stop';
  }
  return undefined;
}

/**
 * The wait until the project and the services its configuration needs are healthy: a step of
 * its own in the outcomes (action `wait`, nothing written). A project that could not be read at
 * plan time gets its kinds' first plan here, once it is ready (not for a saved plan's apply).
 */
async function waitStep(
  id: string,
  ref: string,
  scope: ProjectScope,
  work: ProjectWork,
  a: ProjectApplyContext,
): Promise<{ succeeded: boolean; ready?: { scope: ProjectScope; health: Record<string, boolean> }; replanned?: ModulePlan }> {
  const options: WaitOptions = {
    api: a.context.api,
    clock: a.clock,
    log: a.log,
    ...(a.signal ? { signal: a.signal } : {}),
    ...a.wait,
  };
  let ready: { scope: ProjectScope; health: Record<string, boolean> } | undefined;
  let replanned: ModulePlan | undefined;
  const succeeded = await a.outcomes.step(id, 'wait', async () => {
    const readiness = await waitUntilReady(work.unit.name, ref, servicesNeeded(work.unit.document, scope.documents, a.services), options);
    ready = { scope: { ...scope, ref, status: readiness.status }, health: readiness.health };
    if (work.planWhenReady === true && !a.appliesSavedPlan) replanned = await planModules(work.unit.name, ready.scope, a.kinds, a.context, a.log);
  });
  return { succeeded, ...(ready ? { ready } : {}), ...(replanned ? { replanned } : {}) };
}

/** The entries of the project's kinds, in registry order, each by the module that planned it; one failing does not stop the next. */
async function applyKinds(entries: readonly PlanEntry[], scope: ProjectScope, a: ProjectApplyContext): Promise<Set<string>> {
  const applied = new Set<string>();
  for (const entry of entries) {
    const module = a.kinds.find((kind) => kind.kind === entry.kind);
    if (await a.outcomes.run(entry, module ? () => module.apply(entry, scope, a.context) : undefined)) applied.add(entry.kind);
  }
  return applied;
}

/** The module declares that its writes make the project unreadable for a while: they come after the read-back. */
function appliesLast(entry: PlanEntry, kinds: readonly KindModule[]): boolean {
  return kinds.find((kind) => kind.kind === entry.kind)?.appliesAfterReadBack === true;
}

/**
 * Reads back what was written (the kinds that applied a write): a step of its own (action
 * `verify`), which fails when a kind cannot be read. Then the judgement: a write the read-back
 * still shows as a difference did not do its work, and fails. The statuses come from this second look.
 */
async function verifyStep(project: string, applied: ReadonlySet<string>, scope: ProjectScope, a: ProjectApplyContext): Promise<{ verified?: PlanEntry[]; observedAt?: number }> {
  const id = `Project/${project}#verify`;
  const only = new Set(a.kinds.filter((kind) => applied.has(kind.kind)));
  let verified: PlanEntry[] | undefined;
  let observedAt: number | undefined;
  await a.outcomes.step(id, 'verify', async () => {
    try {
      const readBack = await planModules(project, scope, a.kinds, a.context, a.log, only);
      verified = [...readBack.entries, ...readBack.failures];
      observedAt = readBack.observedAt;
    } catch (error) {
      throw new VerificationError(describeError(error).message);
    }
    const unread = verified.filter((entry) => entry.reason?.startsWith('could not observe'));
    if (unread.length > 0) throw new VerificationError(unread.map((entry) => `${entry.kind}: ${entry.reason}`).join('; '));
  });
  if (verified) a.outcomes.stillDiffering(verified, id);
  return { ...(verified ? { verified } : {}), ...(observedAt !== undefined ? { observedAt } : {}) };
}

/** The read-back after an apply could not be done: what was written is not confirmed. */
class VerificationError extends Error {
  constructor(detail: string) {
    super(`the read-back after the apply failed, so what was written is not confirmed: ${detail}`);
    this.name = 'VerificationError';
  }
}
