import { isWriteOutcome } from '../reconcile/summary.js';
import { driftedEntries } from './metrics.js';
import type { Logger, PassResult } from '../reconcile/types.js';

interface PassLogContext {
  priority: 'write' | 'drift';
  /** What started the pass (the `trigger` label of the drift counters). */
  trigger?: 'revision' | 'resync' | 'manual';
  projects?: string[];
  revision?: string;
}

/**
 * The daemon's lines for a pass: the engine logs each change it applies as it applies it; this
 * adds a line per change it did not apply (drift seen in a dry run or under the observe policy,
 * a blocked change) and one summary per pass. Field paths only, never values: a value may be a
 * secret.
 */
export function logPass(log: Logger, result: PassResult, context: PassLogContext): void {
  const applied = new Set(result.outcomes.map((outcome) => outcome.entryId));
  for (const entry of result.plan.entries) {
    if (entry.action === 'noop' || applied.has(entry.id)) continue;
    // Not applied: a dry run, the observe policy, or a blocked change.
    log.info(
      {
        id: entry.id,
        kind: entry.kind,
        project: entry.project,
        action: entry.action,
        fields: entry.changes.map((change) => change.path),
        observeOnly: entry.observeOnly || undefined,
        reason: entry.reason,
      },
      entry.action === 'blocked' ? 'change blocked' : 'drift detected',
    );
  }
  const failed = result.outcomes.filter((outcome) => outcome.result === 'failed').length;
  const drifted = driftedEntries(result);
  const repairedIds = new Set(result.outcomes.filter((outcome) => outcome.result === 'success' && isWriteOutcome(outcome)).map((outcome) => outcome.entryId));
  const summary = {
    revision: result.revision ?? context.revision,
    priority: context.priority,
    trigger: context.trigger,
    projects: context.projects ?? 'all',
    dryRun: result.dryRun,
    result: result.result,
    plan: result.plan.summary,
    applied: result.outcomes.filter((outcome) => outcome.result === 'success' && isWriteOutcome(outcome)).length,
    failed,
    ...(result.interrupted ? { interrupted: result.outcomes.filter((outcome) => outcome.result === 'interrupted').length } : {}),
    // What the pass found drifted when it observed (as reconciler_drift_detected_total counts
    // it), whether or not it then repaired it; `repaired`: of those, the ones it applied.
    drifted: drifted.length,
    repaired: drifted.filter((entry) => repairedIds.has(entry.id)).length,
    requests: result.requests,
    durationMs: result.finishedAt - result.startedAt,
  };
  // Stopped by the process's stop: not a failure; the next process plans what it did not finish.
  if (result.interrupted) log.info(summary, 'pass interrupted');
  else if (result.result === 'success') log.info(summary, 'pass finished');
  else log.error(summary, 'pass finished with errors');
}
