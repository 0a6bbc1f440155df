import type { Logger, PassResult } from '../reconcile/types.js';

export interface PassLogContext {
  priority: 'write' | 'drift';
  projects?: string[];
  revision?: string;
}

/**
 * One line per change (applied, failed, or drift seen in a dry run or under the observe policy)
 * and one summary per pass. Field paths only, never values: a value may be a secret.
 */
export function logPass(log: Logger, result: PassResult, context: PassLogContext): void {
  const entries = new Map(result.plan.entries.map((entry) => [entry.id, entry]));
  for (const outcome of result.outcomes) {
    if (outcome.action === 'noop') continue;
    const entry = entries.get(outcome.entryId);
    const line = {
      id: outcome.entryId,
      kind: outcome.kind,
      project: entry?.project,
      action: outcome.action,
      result: outcome.result,
      fields: entry?.changes.map((change) => change.path),
      durationMs: outcome.durationMs,
      error: outcome.error,
    };
    if (outcome.result === 'failed') log.error(line, 'change failed');
    else if (outcome.result === 'skipped') log.warn(line, 'change skipped');
    else log.info(line, 'change applied');
  }
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
  const summary = {
    revision: result.revision ?? context.revision,
    priority: context.priority,
    projects: context.projects ?? 'all',
    dryRun: result.dryRun,
    result: result.result,
    plan: result.plan.summary,
    applied: result.outcomes.filter((outcome) => outcome.result === 'success' && outcome.action !== 'noop').length,
    failed,
    drifted: result.resources.filter((resource) => resource.state === 'drifted').length,
    requests: result.requests,
    durationMs: result.finishedAt - result.startedAt,
  };
  if (result.result === 'success') log.info(summary, 'pass finished');
  else log.error(summary, 'pass finished with errors');
}
