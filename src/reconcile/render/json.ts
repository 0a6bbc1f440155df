// The machine-readable result: a stable document (its `version` changes only when a field's
// meaning does; fields are only ever added). Documented in docs/concepts.md.
import type { PassResult } from '../types.js';

const JSON_FORMAT_VERSION = 1;

function toJsonDocument(result: PassResult): Record<string, unknown> {
  return {
    version: JSON_FORMAT_VERSION,
    result: result.result,
    dryRun: result.dryRun,
    revision: result.revision ?? null,
    startedAt: new Date(result.startedAt).toISOString(),
    finishedAt: new Date(result.finishedAt).toISOString(),
    summary: {
      create: result.plan.summary.create,
      update: result.plan.summary.update,
      delete: result.plan.summary.delete,
      blocked: result.plan.summary.blocked,
      noop: result.plan.summary.noop,
      drift: result.plan.drift ?? 0,
      hasChanges: result.plan.hasChanges,
    },
    entries: result.plan.entries.map((e) => ({
      id: e.id,
      kind: e.kind,
      project: e.project ?? null,
      name: e.name,
      action: e.action,
      observeOnly: e.observeOnly ?? false,
      pending: e.pending ?? false,
      reason: e.reason ?? null,
      dependsOn: e.dependsOn ?? [],
      source: e.source ?? null,
      ...(e.wave !== undefined ? { wave: e.wave } : {}),
      ...(e.held ? { held: e.held } : {}),
      changes: e.changes.map((c) =>
        c.sensitive ? { path: c.path, sensitive: true } : { path: c.path, sensitive: false, ...('before' in c ? { before: c.before } : {}), ...('after' in c ? { after: c.after } : {}) },
      ),
    })),
    outcomes: result.outcomes.map((o) => ({
      entryId: o.entryId,
      kind: o.kind,
      action: o.action,
      result: o.result,
      error: o.error ?? null,
      durationMs: o.durationMs ?? null,
    })),
    resources: result.resources,
    projects: result.projects,
    manifestErrors: result.manifestErrors,
    requests: result.requests,
    ...(result.rollout ? { rollout: { ...result.rollout, events: undefined } } : {}),
  };
}

export function renderJson(result: PassResult, _options: { color?: boolean } = {}): string {
  return `${JSON.stringify(toJsonDocument(result), null, 2)}\n`;
}
