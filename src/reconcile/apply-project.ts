// Applying one project's part of the plan, as planned: its creation (exactly once) or
// restore, the wait until it and its services are healthy, its kinds' entries in registry
// order, the read-back that verifies what was written, and a pause last. The wait and the
// read-back are steps of the apply (outcomes `wait` and `verify`), never a second plan; the
// one plan made after a wait is the first of a project that could not be read before it.
import type { Clock } from '../util/clock.js';
import { describeError } from './describe-error.js';
import { servicesNeeded, waitUntilReady } from './project-readiness.js';
import { planModules, type ProjectWork } from './project-work.js';
import { isChange } from './summary.js';
import type { KindContext, KindModule, Logger, PlanEntry } from './types.js';

export interface WaitSettings {
  initialDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
}

interface ApplyContext {
  /** Applies an entry of the fleet-level modules (the project's creation, its pause or restore). */
  applyFleetEntry: (entry: PlanEntry) => Promise<void>;
  runEntry: (entry: PlanEntry, apply: (() => Promise<void>) | undefined) => Promise<void>;
  /** Runs a step of the apply that writes nothing: the readiness wait (`wait`) or the read-back (`verify`). */
  runStep: (id: string, action: 'wait' | 'verify', step: () => Promise<void>) => Promise<void>;
  failed: Set<string>;
  context: KindContext;
  kinds: readonly KindModule[];
  clock: Clock;
  log: Logger;
  projectRefs: Map<string, string>;
  /** A saved plan's apply: a project that was not readable at plan time is not planned now. */
  appliesSavedPlan: boolean;
  signal?: AbortSignal;
  wait?: WaitSettings;
}

export async function applyProject(work: ProjectWork, a: ApplyContext): Promise<void> {
  const unit = work.unit;
  const entry = unit.entry!;
  const waitOptions = {
    api: a.context.api,
    clock: a.clock,
    log: a.log,
    ...(a.signal ? { signal: a.signal } : {}),
    ...(a.wait?.initialDelayMs !== undefined ? { initialDelayMs: a.wait.initialDelayMs } : {}),
    ...(a.wait?.maxDelayMs !== undefined ? { maxDelayMs: a.wait.maxDelayMs } : {}),
    ...(a.wait?.timeoutMs !== undefined ? { timeoutMs: a.wait.timeoutMs } : {}),
  };
  const services = servicesNeeded(unit.document, work.scope.documents);
  let ready = !work.deferred;

  if (entry.held) {
    // Held by the rollout (a later wave, a window, an approval): the project is not created yet.
    return;
  }
  if (entry.action === 'create' && !entry.observeOnly) {
    await a.runEntry(entry, async () => {
      await a.applyFleetEntry(entry);
      work.scope.ref = unit.created!.ref;
      work.scope.status = unit.created!.status;
    });
    if (a.failed.has(entry.id)) {
      // Its dependants are skipped through dependsOn; entries without it still cannot run.
      for (const planned of work.entries) await a.runEntry(withDependency(planned, entry.id), undefined);
      if (unit.lifecycle) await a.runEntry(unit.lifecycle, undefined);
      return;
    }
  } else if (entry.action === 'create') {
    return; // observe only: a missing project is reported, nothing below it can be applied
  } else if (entry.action === 'blocked') {
    // A project whose identity is in question (another region, an ambiguous name) is not touched.
    await a.runEntry(entry, undefined);
    for (const planned of work.entries) await a.runEntry(withDependency(planned, entry.id), undefined);
    if (unit.lifecycle) await a.runEntry(withDependency(unit.lifecycle, entry.id), undefined);
    return;
  }

  const ref = a.projectRefs.get(unit.name);
  if (!ref) return;
  const lifecycle = unit.lifecycle;
  const restoring = lifecycle && lifecycle.action === 'update' && !lifecycle.observeOnly && !lifecycle.held && lifecycle.changes[0]?.after === false;
  if (restoring) {
    await a.runEntry(lifecycle, () => a.applyFleetEntry(lifecycle));
    if (a.failed.has(lifecycle.id)) {
      for (const planned of work.entries) await a.runEntry(withDependency(planned, lifecycle.id), undefined);
      return;
    }
    ready = false;
  }
  if (work.modulesSkipped && !restoring) {
    return;
  }

  const pausesLast = lifecycle !== undefined && !restoring && lifecycle.action === 'update' && !lifecycle.observeOnly && !lifecycle.held && lifecycle.changes[0]?.after === true;
  const planAfterWait = work.planWhenReady === true && !a.appliesSavedPlan;
  // A saved plan's placeholders for a project that was not readable write nothing: no wait.
  const nothingAfterWait = work.planWhenReady === true && a.appliesSavedPlan && !restoring && !pausesLast && !work.entries.some(isChange);
  if (!ready && !nothingAfterWait) {
    // Waiting is a step of its own in the outcomes (action `wait`: nothing is written): when it
    // fails, the configuration waits for the next pass.
    const readyId = `${restoring ? lifecycle!.id : entry.id}#ready`;
    await a.runStep(readyId, 'wait', async () => {
      const ready = await waitUntilReady(unit.name, ref, services, waitOptions);
      work.health = ready.health;
      work.scope = { ...work.scope, ref, status: ready.status };
      // Not readable at plan time (its entries were pending placeholders): this is its kinds' plan.
      if (planAfterWait) Object.assign(work, await planModules(work, a.kinds, a.context, a.log));
    });
    if (a.failed.has(readyId)) {
      a.log.error({ project: unit.name }, 'the project did not become ready: its configuration is not applied in this pass');
      for (const planned of work.entries) await a.runEntry(withDependency(planned, readyId), undefined);
      if (lifecycle && !restoring) await a.runEntry(withDependency(lifecycle, readyId), undefined);
      return;
    }
  }

  // The project's kinds, in registry order; one failing does not stop the next. A Postgres
  // upgrade waits until the rest is written and verified: once it starts, the project is
  // UPGRADING and its configuration cannot be read back.
  const startsUpgrade = (planned: PlanEntry) => planned.kind === 'ProjectPostgresVersion';
  // The module that planned an entry applies it, from the entry itself and the scope as it is now.
  const applyOf = (planned: PlanEntry): (() => Promise<void>) | undefined => {
    const module = a.kinds.find((kind) => kind.kind === planned.kind);
    return module ? () => module.apply(planned, work.scope, a.context) : undefined;
  };
  const applied = new Set<string>();
  for (const planned of work.entries.filter((e) => !startsUpgrade(e))) {
    const before = a.failed.size;
    const isWrite = !planned.observeOnly && (planned.action === 'create' || planned.action === 'update' || planned.action === 'delete');
    await a.runEntry(planned, applyOf(planned));
    if (isWrite && a.failed.size === before) applied.add(planned.kind);
  }

  // Verify: read back what was written, a step of its own (action `verify`). The statuses come
  // from this second look, and a write that still differs fails the pass (engine.ts).
  if (applied.size > 0) {
    const only = new Set(a.kinds.filter((k) => applied.has(k.kind)));
    await a.runStep(`Project/${unit.name}#verify`, 'verify', async () => {
      try {
        const verified = await planModules(work, a.kinds, a.context, a.log, only);
        work.verified = [...verified.entries, ...verified.failures];
      } catch (error) {
        throw new VerificationError(describeError(error).message);
      }
      const unread = work.verified.filter((e) => e.reason?.startsWith('could not observe'));
      if (unread.length > 0) throw new VerificationError(unread.map((e) => `${e.kind}: ${e.reason}`).join('; '));
    });
  }

  for (const planned of work.entries.filter(startsUpgrade)) {
    await a.runEntry(planned, applyOf(planned));
  }

  // Pause last: the configuration above is written while the project runs.
  if (lifecycle && pausesLast) {
    await a.runEntry(lifecycle, () => a.applyFleetEntry(lifecycle));
  }
}

function withDependency(entry: PlanEntry, id: string): PlanEntry {
  return { ...entry, dependsOn: [...new Set([...(entry.dependsOn ?? []), id])] };
}

/** The read-back after an apply could not be done: what was written is not confirmed. */
class VerificationError extends Error {
  constructor(detail: string) {
    super(`the read-back after the apply failed, so what was written is not confirmed: ${detail}`);
    this.name = 'VerificationError';
  }
}
