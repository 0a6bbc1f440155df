import type { CallOptions } from '../../../api/request.js';
import { deepEqual, makeEntry } from '../../diff.js';
import type { FieldChange, KindContext, PlanAction, PlanEntry, ProjectScope, ResourceKind } from '../../types.js';
import { isObserveOnly } from '../common.js';

/** What every configuration section module knows of itself. */
export interface Section {
  kind: ResourceKind;
  /** Key of the section in the Project spec: the entry name and the prefix of its field paths. */
  key: string;
}

/**
 * A section is managed when the Project manifest has it and the project is not suspended
 * (the engine skips suspended projects too, but a section must never read on its own).
 */
export function sectionManaged(scope: ProjectScope, key: string): boolean {
  const value = (scope.document.spec as unknown as Record<string, unknown>)[key];
  return value !== undefined && value !== null && scope.document.spec.policy?.suspend !== true;
}

/** The Project spec's section, typed by the caller. */
export function sectionSpec<T>(scope: ProjectScope, key: string): T {
  return (scope.document.spec as unknown as Record<string, unknown>)[key] as T;
}

/**
 * Reads name no priority on purpose: a read defaults to `verify`, and the engine's per-pass
 * API turns it into `drift` for a scheduled background re-check.
 */
export function readOptions(scope: ProjectScope, ctx: KindContext): CallOptions {
  return { project: scope.name, ...(ctx.signal ? { signal: ctx.signal } : {}) };
}

export function writeOptions(scope: ProjectScope, ctx: KindContext): CallOptions {
  return { priority: 'write', project: scope.name, ...(ctx.signal ? { signal: ctx.signal } : {}) };
}

/** `null` and absent both mean "unset" in the service's answers; the manifest may spell either. */
export function unsetEquals(_field: string, desired: unknown, observed: unknown): boolean | undefined {
  if ((desired === null || desired === undefined) && (observed === null || observed === undefined)) return true;
  return deepEqual(desired, observed);
}

export interface EntryFields {
  action: PlanAction;
  changes?: FieldChange[];
  reason?: string;
  /** Converging on the service's side (verification, an upgrade in progress): pending, not drift, never a failure. */
  pending?: boolean;
}

/**
 * Builds the entry and enforces the observe policy in one place: under `observe` a change
 * is reported (observeOnly), and the engine never hands such an entry to `apply`.
 */
export function sectionEntry(scope: ProjectScope, section: Section, fields: EntryFields, target?: Record<string, unknown>): PlanEntry {
  const writes = fields.action === 'create' || fields.action === 'update' || fields.action === 'delete';
  const observeOnly = writes && isObserveOnly(scope.document);
  const entry = makeEntry({
    kind: section.kind,
    name: section.key,
    project: scope.name,
    changes: fields.changes ?? [],
    action: fields.action,
    ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
    ...(observeOnly ? { observeOnly } : {}),
    // A section of a project created in this pass waits for that creation (and its health).
    ...(scope.ref === undefined ? { dependsOn: [`Project/${scope.name}`] } : {}),
    source: { file: scope.document.source.file, line: scope.document.source.line },
    ...(target ? { target } : {}),
  });
  if (fields.pending) entry.pending = true;
  return entry;
}
