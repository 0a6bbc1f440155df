import { isWriteOutcome } from '../reconcile/summary.js';
import { scrubMessage } from '../util/scrub.js';
import type { ManifestError } from '../manifests/types.js';
import type { PassResult } from '../reconcile/types.js';

/** What started a pass: a new revision, the drift schedule, or a request (`POST /reconcile`, a push webhook). */
export type PassTrigger = 'revision' | 'resync' | 'manual';

/** How the daemon describes a finished pass to the receivers of its events. */
export interface PassReport {
  priority: 'write' | 'drift';
  trigger: PassTrigger;
  projects?: string[];
  revision?: string;
}

const EVENT_TYPES = [
  'revision_applied', 'drift_detected', 'drift_repaired', 'change_blocked', 'resource_failed', 'deletion_done',
  // A rollout's (src/reconcile/rollout/gate.ts).
  'rollout_wave_started', 'rollout_halted', 'rollout_done', 'approval_needed', 'change_waiting',
  // The daemon's reading of the checkout.
  'revision_broken',
] as const;
export type NotificationEventType = (typeof EVENT_TYPES)[number];

interface EventCounts {
  created: number;
  updated: number;
  deleted: number;
  failed: number;
  blocked: number;
  drifted: number;
}

/**
 * One notification. It carries identifiers, actions, counts, reasons and the revision only:
 * never a field value (any value may be a secret) and never an unscrubbed error message.
 */
export interface NotificationEvent {
  type: NotificationEventType;
  /** ms since epoch, on the daemon's clock. */
  at: number;
  /** The commit of the manifests the pass worked from, when known. */
  revision?: string;
  trigger: PassTrigger;
  dryRun: boolean;
  /** revision_applied: how the pass ended. */
  result?: 'success' | 'failed';
  counts?: EventCounts;
  /** Projects the pass was limited to; absent: all. */
  projects?: string[];
  /** Resource events: the plan entry id (`<kind>/<project>/<name>`). */
  resource?: string;
  kind?: string;
  project?: string;
  action?: string;
  /** Why: an error class and its scrubbed message, or the reason a change was blocked. */
  reason?: string;
  /** Changed field paths (never values). */
  fields?: string[];
  /** Rollout events: the Rollout document's name, and the wave. */
  rollout?: string;
  wave?: string;
  /** approval_needed, change_waiting: the waiting plan entries, each `id action (field paths)`: the plan's summary, never a value. revision_broken: the first errors, each `file:line field: message`. */
  entries?: string[];
  /** revision_broken: the last good revision, which stays applied. */
  lastGoodRevision?: string;
}

export { scrubMessage } from '../util/scrub.js';

function countsOf(result: PassResult): EventCounts {
  const writes = result.outcomes.filter((outcome) => isWriteOutcome(outcome));
  const succeeded = (action: string) => writes.filter((outcome) => outcome.action === action && outcome.result === 'success').length;
  return {
    created: succeeded('create'),
    updated: succeeded('update'),
    deleted: succeeded('delete'),
    failed: result.outcomes.filter((outcome) => outcome.result === 'failed').length,
    blocked: result.plan.summary.blocked,
    drifted: result.resources.filter((resource) => resource.state === 'drifted').length,
  };
}

/**
 * The events a finished pass gives: one `revision_applied` per write pass (not for a drift
 * re-check, which applies no new revision), and one event per resource that failed, was
 * deleted, was blocked, or drifted (repaired by a re-check, or only detected in a dry run or
 * under the observe policy).
 */
export function eventsFromPass(result: PassResult, context: PassReport, at: number): NotificationEvent[] {
  if (result.result === 'invalid') return [];
  const base = {
    at,
    trigger: context.trigger,
    dryRun: result.dryRun,
    ...((result.revision ?? context.revision) ? { revision: result.revision ?? context.revision } : {}),
  };
  const events: NotificationEvent[] = [];
  const entries = new Map(result.plan.entries.map((entry) => [entry.id, entry]));
  const applied = new Set(result.outcomes.map((outcome) => outcome.entryId));
  for (const outcome of result.outcomes) {
    const entry = entries.get(outcome.entryId);
    const where = { resource: outcome.entryId, kind: outcome.kind, action: outcome.action, ...(entry?.project ? { project: entry.project } : {}) };
    if (outcome.result === 'failed') {
      const reason = outcome.error ? scrubMessage(`${outcome.error.type}: ${outcome.error.message}`) : 'failed';
      events.push({ ...base, type: 'resource_failed', ...where, reason });
    } else if (outcome.result === 'success' && outcome.action === 'delete') {
      events.push({ ...base, type: 'deletion_done', ...where });
    } else if (outcome.result === 'success' && isWriteOutcome(outcome) && context.priority === 'drift') {
      events.push({ ...base, type: 'drift_repaired', ...where, fields: entry?.changes.map((change) => change.path) ?? [] });
    }
  }
  for (const entry of result.plan.entries) {
    // A blocked change is reported whether or not the apply recorded it (as a skipped outcome).
    if (entry.action === 'noop' || (applied.has(entry.id) && entry.action !== 'blocked')) continue;
    const where = { resource: entry.id, kind: entry.kind, action: entry.action, ...(entry.project ? { project: entry.project } : {}) };
    if (entry.action === 'blocked') {
      events.push({ ...base, type: 'change_blocked', ...where, reason: scrubMessage(entry.reason ?? 'blocked') });
    } else if (context.priority === 'drift' && !entry.pending && !entry.held) {
      events.push({ ...base, type: 'drift_detected', ...where, fields: entry.changes.map((change) => change.path) });
    }
  }
  for (const event of result.rollout?.events ?? []) {
    events.push({
      ...base,
      type: event.type,
      rollout: event.rollout,
      revision: event.revision,
      ...(event.wave !== undefined ? { wave: event.wave } : {}),
      ...(event.reason !== undefined ? { reason: scrubMessage(event.reason) } : {}),
      ...(event.entries ? { entries: event.entries.slice(0, 50) } : {}),
      ...(event.projects ? { projects: event.projects } : {}),
    });
  }
  // An interrupted pass (the process is stopping) sends no `revision_applied`: it did not finish,
  // and the next process's pass of the same revision reports it. Its interrupted changes send nothing.
  if (context.priority === 'write' && !result.interrupted) {
    events.unshift({
      ...base,
      type: 'revision_applied',
      result: result.result === 'success' ? 'success' : 'failed',
      counts: countsOf(result),
      ...(context.projects ? { projects: context.projects } : {}),
    });
  }
  return events;
}

/** How many manifest errors a `revision_broken` event names. */
const BROKEN_ERRORS_NAMED = 5;

/**
 * The event of a revision of the checkout that does not load: each of its first errors as
 * `file:line field: message` (scrubbed), and the last good revision, which stays applied. Told
 * once per revision (its key is the revision).
 */
export function eventFromBrokenRevision(check: { revision?: string; errors: readonly ManifestError[]; lastGood?: string }, dryRun: boolean, at: number): NotificationEvent | undefined {
  const errors = check.errors.filter((error) => error.severity !== 'warning');
  if (errors.length === 0) return undefined;
  return {
    type: 'revision_broken',
    at,
    trigger: 'revision',
    dryRun,
    ...(check.revision !== undefined ? { revision: check.revision } : {}),
    reason: scrubMessage(`${errors.length} manifest error${errors.length === 1 ? '' : 's'}${check.lastGood ? `; revision ${check.lastGood.slice(0, 12)} stays applied` : ''}`),
    entries: errors.slice(0, BROKEN_ERRORS_NAMED).map((error) => scrubMessage(`${error.file}:${error.line}${error.path ? ` ${error.path}` : ''}: ${error.message}`)),
    ...(check.lastGood ? { lastGoodRevision: check.lastGood } : {}),
  };
}

/**
 * Events with the same key within the deduplication window are sent once: the resource (or
 * the pass scope), the reason (for a failure, its error class: messages vary between
 * attempts) and the revision. A revision that first fails and then succeeds gives two.
 */
export function dedupKey(event: NotificationEvent): string {
  const reason = event.type === 'resource_failed' ? (event.reason ?? '').split(':')[0] : event.type === 'revision_applied' ? event.result : (event.reason ?? '');
  const subject = event.resource ?? (event.projects ? [...event.projects].sort().join(',') : '*');
  return [event.type, subject, reason, event.revision ?? '', event.dryRun ? 'dry' : ''].join('\u0000');
}
