// A saved plan: the dry run's PassResult as data, with what it was computed from (the
// manifests' revision and content digest, salted digests of every resolved secret reference,
// a digest of every entry), so `reconcile apply FILE` can apply exactly it or refuse it whole.
// Secret values never enter the file: sensitive changes carry no values, references only
// their salted HMAC.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { findSecretReferences } from '../manifests/check-refs.js';
import { referenceName } from '../manifests/refs.js';
import type { AnyDocument, ManifestSet } from '../manifests/types.js';
import { writeStateFile } from '../util/state-fence.js';
import type { FieldChange, PassResult, PlanEntry } from './types.js';

const PLAN_FORMAT = 'fleet-reconciler/plan';
/** Changes only when a field's meaning does; a reader refuses any other version. */
const PLAN_FORMAT_VERSION = 1;

interface SecretDigest {
  file: string;
  line: number;
  /** JSON pointer of the reference inside the document. */
  path: string;
  /** `env:NAME` or `file:PATH`: the reference, never its value. */
  reference: string;
  /** Lowercase hex HMAC-SHA256 of the value, keyed with the plan's salt. */
  digest: string;
}

interface SavedPlan {
  format: typeof PLAN_FORMAT;
  version: typeof PLAN_FORMAT_VERSION;
  createdAt: string;
  manifests: { dir: string; revision: string | null; digest: string };
  secrets: { algorithm: 'HMAC-SHA256'; salt: string; references: SecretDigest[] };
  entries: Array<{ id: string; digest: string }>;
  result: PassResult;
  /** The first line of the markdown plan: the manifests directory and the environment, as the dry run named them. */
  heading?: { dir: string; environment: string };
}

/** A plan file that cannot be read as a plan: names the file and the field. */
export class PlanFileError extends Error {
  constructor(readonly file: string, readonly field: string, problem: string) {
    super(`${file}: ${field ? `${field}: ` : ''}${problem}`);
    this.name = 'PlanFileError';
  }
}

/** One reason a saved plan is refused; `resource` is an entry id, a manifest file, or `plan`. */
export interface Refusal {
  resource: string;
  reason: string;
}

/** Object keys sorted at every depth, so equal values hash equally. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A sensitive change keeps its path and flag only, whatever the entry held. */
function safeChange(change: FieldChange): FieldChange {
  return change.sensitive ? { path: change.path, sensitive: true } : change;
}

function safeEntry(entry: PlanEntry): PlanEntry {
  return { ...entry, changes: entry.changes.map(safeChange) };
}

/**
 * What an entry was computed from and would do: its action, field changes (the `before`
 * values are the observed live state of every planned field) and target (the live ids and
 * values its apply works from). The reason is left out: it is prose for people, and may name
 * times.
 */
function entryDigest(entry: PlanEntry): string {
  return sha256(
    canonicalJson({
      id: entry.id,
      kind: entry.kind,
      action: entry.action,
      changes: entry.changes.map(safeChange),
      observeOnly: entry.observeOnly ?? false,
      pending: entry.pending ?? false,
      dependsOn: [...(entry.dependsOn ?? [])].sort(),
      ...(entry.target !== undefined ? { target: entry.target } : {}),
    }),
  );
}

/** The content of the loaded manifest set: every document's file, kind, metadata and spec (references, not values). */
function manifestDigest(set: Pick<ManifestSet, 'documents'>): string {
  const documents = set.documents
    .map((d) => ({ file: d.source.file, line: d.source.line, apiVersion: d.apiVersion, kind: d.kind, metadata: d.metadata, spec: d.spec }))
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return `sha256:${sha256(canonicalJson(documents))}`;
}

/** Every secret reference of the documents, resolved and digested with the salt. */
export async function secretDigests(
  documents: readonly AnyDocument[],
  resolve: (ref: unknown, document: AnyDocument) => Promise<string>,
  salt: Buffer,
): Promise<SecretDigest[]> {
  const out: SecretDigest[] = [];
  for (const { document, path, ref } of findSecretReferences(documents)) {
    const value = await resolve(ref, document);
    out.push({
      file: document.source.file,
      line: document.source.line,
      path,
      reference: referenceName(ref),
      digest: createHmac('sha256', salt).update(value, 'utf8').digest('hex'),
    });
  }
  return out;
}

export function newSalt(): Buffer {
  return randomBytes(32);
}

interface PlanInputs {
  manifests: ManifestSet;
  result: PassResult;
  salt: Buffer;
  secrets: SecretDigest[];
  now: number;
  heading?: { dir: string; environment: string };
}

export function buildSavedPlan(inputs: PlanInputs): SavedPlan {
  const entries = inputs.result.plan.entries.map(safeEntry);
  return {
    format: PLAN_FORMAT,
    version: PLAN_FORMAT_VERSION,
    createdAt: new Date(inputs.now).toISOString(),
    manifests: { dir: inputs.manifests.root, revision: inputs.manifests.revision ?? null, digest: manifestDigest(inputs.manifests) },
    secrets: { algorithm: 'HMAC-SHA256', salt: inputs.salt.toString('hex'), references: inputs.secrets },
    entries: entries.map((entry) => ({ id: entry.id, digest: entryDigest(entry) })),
    result: { ...inputs.result, plan: { ...inputs.result.plan, entries } },
    ...(inputs.heading ? { heading: inputs.heading } : {}),
  };
}

export async function writeSavedPlan(path: string, plan: SavedPlan): Promise<void> {
  await writeStateFile(path, `${JSON.stringify(plan, null, 2)}\n`, 0o600, { userOutput: true });
}

let validator: ReturnType<Ajv2020['compile']> | undefined;

function schemaErrors(value: unknown): ErrorObject[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(new URL('../../schemas/plan.schema.json', import.meta.url), 'utf8')) as object;
    validator = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }).compile(schema);
  }
  return validator(value) ? [] : (validator.errors ?? []);
}

function fieldOf(error: ErrorObject): { field: string; problem: string } {
  const pointer = error.instancePath || '/';
  if (error.keyword === 'required') return { field: pointer, problem: `missing field \`${(error.params as { missingProperty: string }).missingProperty}\`` };
  if (error.keyword === 'additionalProperties') return { field: pointer, problem: `unknown field \`${(error.params as { additionalProperty: string }).additionalProperty}\`` };
  return { field: pointer, problem: error.message ?? 'invalid' };
}

/** Reads and checks a plan file; a file that is not a plan of this version is a PlanFileError. */
export async function readSavedPlan(path: string, shownAs = path): Promise<SavedPlan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PlanFileError(shownAs, '', `cannot read the plan file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PlanFileError(shownAs, '', `not JSON: ${(error as Error).message}`);
  }
  const head = value as { format?: unknown; version?: unknown } | null;
  if (head === null || typeof head !== 'object' || head.format !== PLAN_FORMAT) {
    throw new PlanFileError(shownAs, '/format', `not a saved plan (expected \`${PLAN_FORMAT}\`; write one with \`reconcile DIR --dry-run --out FILE\`)`);
  }
  if (head.version !== PLAN_FORMAT_VERSION) {
    throw new PlanFileError(shownAs, '/version', `plan format version ${String(head.version)} is not supported (this reconciler reads version ${PLAN_FORMAT_VERSION})`);
  }
  const errors = schemaErrors(value);
  if (errors.length > 0) {
    const { field, problem } = fieldOf(errors.reduce((a, b) => (b.instancePath.length > a.instancePath.length ? b : a)));
    throw new PlanFileError(shownAs, field, problem);
  }
  const plan = value as SavedPlan;
  if (Number.isNaN(Date.parse(plan.createdAt))) throw new PlanFileError(shownAs, '/createdAt', `not a date: \`${plan.createdAt}\``);
  return plan;
}

/** The plan is older than allowed. */
export function ageRefusal(plan: SavedPlan, now: number, maxAgeMs: number, maxAgeText: string): Refusal | undefined {
  const age = now - Date.parse(plan.createdAt);
  if (age <= maxAgeMs) return undefined;
  return { resource: 'plan', reason: `the plan was made at ${plan.createdAt}, ${formatAge(age)} ago: older than --max-plan-age ${maxAgeText}` };
}

function formatAge(ms: number): string {
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)}h`;
  if (ms >= 60_000) return `${(ms / 60_000).toFixed(1)}m`;
  return `${(ms / 1000).toFixed(1)}s`;
}

/** The manifests now differ from those the plan was computed from: revision, content, or a secret's value. */
export function manifestRefusals(plan: SavedPlan, manifests: ManifestSet, secrets: readonly SecretDigest[]): Refusal[] {
  const refusals: Refusal[] = [];
  const revision = manifests.revision ?? null;
  if (revision !== plan.manifests.revision) {
    refusals.push({ resource: 'manifests', reason: `the manifests are at revision ${revision ?? '(none)'}, the plan was made at ${plan.manifests.revision ?? '(none)'}` });
  }
  if (manifestDigest(manifests) !== plan.manifests.digest) {
    refusals.push({ resource: 'manifests', reason: `the content of the manifests in ${manifests.root} differs from the content the plan was made from` });
  }
  // The documents a ProjectSet makes share their template's file and paths: the n-th reference
  // at one file and path is matched with the n-th (documents come in a stable order).
  const keyed = (list: readonly SecretDigest[]) => {
    const seen = new Map<string, number>();
    return new Map(list.map((s) => {
      const base = `${s.file}#${s.path}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return [`${base}#${n}`, s] as const;
    }));
  };
  const saved = keyed(plan.secrets.references);
  const now = keyed(secrets);
  for (const [k, current] of now) {
    const before = saved.get(k);
    const where = `${current.file}:${current.line} ${current.path}`;
    if (!before) refusals.push({ resource: where, reason: `secret reference ${current.reference} was not in the plan` });
    else if (before.reference !== current.reference) refusals.push({ resource: where, reason: `the secret reference is now ${current.reference}, the plan used ${before.reference}` });
    else if (before.digest !== current.digest) refusals.push({ resource: where, reason: `secret reference ${current.reference} now resolves to a different value than when the plan was made` });
  }
  for (const [k, before] of saved) {
    if (!now.has(k)) refusals.push({ resource: `${before.file}:${before.line} ${before.path}`, reason: `secret reference ${before.reference} of the plan is gone from the manifests` });
  }
  return refusals;
}

/** Field paths whose change differs between two entries of one id. */
function differingPaths(saved: PlanEntry | undefined, fresh: PlanEntry): string[] {
  const byPath = (entry: PlanEntry | undefined) => new Map((entry?.changes ?? []).map((c) => [c.path, canonicalJson(safeChange(c))]));
  const a = byPath(saved);
  const b = byPath(fresh);
  const paths = new Set([...a.keys(), ...b.keys()]);
  return [...paths].filter((p) => a.get(p) !== b.get(p)).sort();
}

/**
 * The fresh plan against the saved one: every entry whose digest differs, and every entry in
 * one and not the other. Empty when the plan can be applied as saved.
 */
export function entryRefusals(plan: SavedPlan, fresh: readonly PlanEntry[]): Refusal[] {
  const savedDigests = new Map(plan.entries.map((e) => [e.id, e.digest]));
  const savedEntries = new Map(plan.result.plan.entries.map((e) => [e.id, e]));
  const freshIds = new Set(fresh.map((e) => e.id));
  const refusals: Refusal[] = [];
  for (const entry of fresh) {
    const digest = savedDigests.get(entry.id);
    if (digest === undefined) {
      refusals.push({ resource: entry.id, reason: `not in the plan: the live state or the manifests now call for \`${entry.action}\`` });
      continue;
    }
    if (digest === entryDigest(entry)) continue;
    const saved = savedEntries.get(entry.id);
    const paths = differingPaths(saved, entry);
    const action = saved && saved.action !== entry.action ? ` (planned \`${saved.action}\`, now \`${entry.action}\`)` : '';
    refusals.push({ resource: entry.id, reason: `the live state differs from what the plan was computed from${action}${paths.length ? `: ${paths.join(', ')}` : ''}` });
  }
  for (const { id } of plan.entries) {
    if (!freshIds.has(id)) refusals.push({ resource: id, reason: 'in the plan, but no longer planned' });
  }
  return refusals;
}
