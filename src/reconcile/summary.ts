// The plan's summary and the per-resource statuses of a pass: computed once, at the end of the
// pass, from the entries and outcomes whatever happened (the renderers, `reconcile status` and
// the metrics read these).
import type { ApplyOutcome, OutcomeAction, Plan, PlanAction, PlanEntry, ResourceState, ResourceStatus } from './types.js';

/** Actions that write when applied. */
const CHANGES: ReadonlySet<OutcomeAction> = new Set(['create', 'update', 'delete']);

/**
 * An outcome that wrote (or tried to write) to the API. Readiness waits, blocked entries and
 * the failed observation of a pass are outcomes too, but not writes: the apply counts, the
 * `reconciler_apply_total` metric and the daemon's `applied` figure count writes alone.
 */
export function isWriteOutcome(outcome: ApplyOutcome): boolean {
  return CHANGES.has(outcome.action);
}

export function isChange(entry: PlanEntry): boolean {
  return CHANGES.has(entry.action) && !entry.observeOnly;
}

/** Drift reported under the observe policy (never written). */
export function isObservedDrift(entry: PlanEntry): boolean {
  return CHANGES.has(entry.action) && entry.observeOnly === true;
}

/**
 * The state of a resource known only by its plan entry (no status of the pass names it): the one
 * rule the status record (src/status) and `reconcile status --live` share with `statusesFor`.
 */
export function stateOfPlanEntry(entry: PlanEntry): ResourceState {
  if (entry.pending) return 'pending';
  if (entry.action === 'noop') return 'in_sync';
  if (entry.action === 'blocked') return 'failed';
  if (entry.held && !entry.observeOnly) return 'held';
  return entry.action === 'create' ? 'pending' : 'drifted';
}

export function summarizePlan(entries: PlanEntry[]): Plan {
  const summary: Record<PlanAction, number> = { create: 0, update: 0, delete: 0, noop: 0, blocked: 0 };
  let drift = 0;
  for (const entry of entries) {
    if (isObservedDrift(entry)) {
      // Entries under observe count as drift, not as changes.
      summary.noop += 1;
      drift += 1;
    } else {
      summary[entry.action] += 1;
    }
  }
  return { entries, summary, hasChanges: entries.some(isChange), drift };
}

export function statusesFor(
  entries: PlanEntry[],
  outcomes: ApplyOutcome[],
  dryRun: boolean,
  now: number,
  /** Entries of the read-back after an apply. */
  verified: PlanEntry[] = [],
): ResourceStatus[] {
  const byEntry = new Map(outcomes.map((o) => [o.entryId, o]));
  const check = new Map(verified.map((e) => [e.id, e]));
  return entries.map((entry) => {
    const status: ResourceStatus = { id: entry.id, kind: entry.kind, name: entry.name, state: 'in_sync', observedAt: now };
    if (entry.project !== undefined) status.project = entry.project;
    const fields = entry.changes.map((c) => c.path);
    const outcome = byEntry.get(entry.id);
    if (entry.action === 'blocked') {
      status.state = 'failed';
      status.message = entry.reason ?? 'blocked';
      if (fields.length) status.fields = fields;
    } else if (entry.reason?.startsWith('could not observe')) {
      status.state = 'failed';
      status.message = entry.reason;
    } else if (outcome && outcome.result === 'failed') {
      status.state = 'failed';
      status.message = outcome.error?.message ?? 'failed';
      if (fields.length) status.fields = fields;
    } else if (outcome && (outcome.result === 'skipped' || outcome.result === 'interrupted')) {
      status.state = 'pending';
      status.message = outcome.error?.message ?? 'skipped';
      if (fields.length) status.fields = fields;
    } else if (entry.pending) {
      status.state = 'pending';
      if (entry.reason) status.message = entry.reason;
    } else if (outcome && outcome.result === 'success') {
      const after = check.get(entry.id);
      // A write whose read-back still differs is a failed outcome (engine.ts), never here.
      if (after?.pending) {
        status.state = 'pending';
        if (after.reason) status.message = after.reason;
      }
    } else if (entry.held && CHANGES.has(entry.action) && !entry.observeOnly) {
      // Held by the rollout (its wave has not started, outside its window, waiting for an
      // approval): not drift, which is a difference nothing holds back.
      status.state = 'held';
      status.fields = fields;
      status.message = entry.held.message;
    } else if (CHANGES.has(entry.action)) {
      // Not applied: a dry run, or drift under the observe policy.
      status.state = 'drifted';
      status.fields = fields;
      if (entry.observeOnly) status.message = 'observe policy: reported, not written';
      else if (!dryRun) status.message = 'not applied';
    }
    return status;
  });
}
