// Shared helpers for field-level diffs. Every kind module diffs through these so that
// "fields the manifests do not mention are not managed" holds the same way everywhere:
// only keys present (and not undefined) in `desired` are compared, never the rest of the
// live object.
import type { FieldChange, PlanAction, PlanEntry, ResourceKind } from './types.js';

interface DiffOptions {
  /** Prepended to every path: `auth` gives `auth.site_url`. */
  prefix?: string;
  /**
   * True when the field's value is secret: a change is reported without before/after.
   * For masked fields the caller passes comparable digests as desired/observed values.
   */
  sensitive?: (field: string) => boolean;
  /** Field-specific equality (for example order-insensitive lists); falls back to `deepEqual`. */
  equals?: (field: string, desired: unknown, observed: unknown) => boolean | undefined;
  /** Fields to leave out of the comparison even when the manifest sets them (write-only flags). */
  ignore?: readonly string[];
}

/** Structural equality of JSON values (key order does not matter; array order does). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((value, i) => deepEqual(value, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const key of keys) {
    // An absent key and an undefined value mean the same in JSON.
    if (!deepEqual(ao[key], bo[key])) return false;
  }
  return true;
}

/** Equality of two lists as sets of JSON values (CIDR lists, domains). */
export function sameMembers(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  const key = (v: unknown) => JSON.stringify(v);
  const counts = new Map<string, number>();
  for (const v of left) counts.set(key(v), (counts.get(key(v)) ?? 0) + 1);
  for (const v of right) {
    const n = counts.get(key(v));
    if (!n) return false;
    counts.set(key(v), n - 1);
  }
  return true;
}

/**
 * Field changes between the desired (manifest) and observed (live) objects, for the
 * fields `desired` mentions only. A field absent from the live object compares as
 * `undefined` (the change shows `before` absent). Ordered by field name for stable output.
 */
export function diffFields(
  desired: Record<string, unknown> | undefined,
  observed: Record<string, unknown> | undefined | null,
  options: DiffOptions = {},
): FieldChange[] {
  if (!desired) return [];
  const live = observed ?? {};
  const changes: FieldChange[] = [];
  const ignore = options.ignore === undefined || options.ignore.length === 0 ? undefined : new Set(options.ignore);
  // Only the changed fields are put in order (most calls find none): the same order as every field sorted first.
  for (const field of Object.keys(desired)) {
    const want = desired[field];
    if (want === undefined || ignore?.has(field)) continue;
    const have = live[field];
    const custom = options.equals?.(field, want, have);
    const equal = custom ?? deepEqual(want, have);
    if (equal) continue;
    const path = options.prefix ? `${options.prefix}.${field}` : field;
    if (options.sensitive?.(field)) {
      changes.push({ path, sensitive: true });
    } else {
      const change: FieldChange = { path, after: want };
      if (have !== undefined) change.before = have;
      changes.push(change);
    }
  }
  // Every path is the field behind one prefix: ordered by path is ordered by field.
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The subset of `desired` whose fields changed: what a PATCH should send. */
export function changedSubset<T extends Record<string, unknown>>(desired: T, changes: readonly FieldChange[], prefix?: string): Partial<T> {
  const out: Partial<T> = {};
  const strip = prefix ? `${prefix}.` : '';
  for (const change of changes) {
    const field = change.path.startsWith(strip) ? change.path.slice(strip.length) : change.path;
    if (field in desired) (out as Record<string, unknown>)[field] = desired[field];
  }
  return out;
}

/** Stable entry id: `<kind>/<project>/<name>`, or `<kind>/<name>` for organizations and projects. */
export function entryId(kind: ResourceKind, name: string, project?: string): string {
  return project === undefined ? `${kind}/${name}` : `${kind}/${project}/${name}`;
}

interface EntryInput {
  kind: ResourceKind;
  name: string;
  project?: string;
  changes: FieldChange[];
  /** Action when `changes` is non-empty (default `update`). */
  action?: PlanAction;
  reason?: string;
  observeOnly?: boolean;
  dependsOn?: string[];
  source?: { file: string; line: number; set?: { name: string; key: string } };
  target?: Record<string, unknown>;
}

/** A PlanEntry: `noop` when there are no changes, else the given action. */
export function makeEntry(input: EntryInput): PlanEntry {
  const entry: PlanEntry = {
    id: entryId(input.kind, input.name, input.project),
    kind: input.kind,
    name: input.name,
    action: input.changes.length === 0 && (input.action ?? 'update') === 'update' ? 'noop' : (input.action ?? 'update'),
    changes: input.changes,
  };
  if (input.project !== undefined) entry.project = input.project;
  if (input.reason !== undefined) entry.reason = input.reason;
  if (input.observeOnly) entry.observeOnly = true;
  if (input.dependsOn?.length) entry.dependsOn = input.dependsOn;
  if (input.source) entry.source = input.source;
  if (input.target) entry.target = input.target;
  return entry;
}
