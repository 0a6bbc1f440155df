// Loads a manifests directory: finds the files, parses every document, validates each against
// its kind's schema and all of them against each other, then reads the files the documents name
// at load time. What is particular to a document kind (its checks, the files it reads) comes in
// as its facets (load-facets.ts): callers load through src/reconcile/load-manifests.ts, which
// hands over the registry's. Bad input never throws: every problem becomes a located error in
// the set, and only valid documents are handed on.
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CheckoutFiles } from './checkout-files.js';
import { findSecretReferences } from './check-refs.js';
import { crossCheck, type CheckedEntry } from './cross-checks.js';
import type { LoadFacets } from './load-facets.js';
import { discoverManifestFiles } from './discover.js';
import { DEFAULT_MAX_FILE_BYTES } from './limits.js';
import { locateField, registerLocator } from './locations.js';
import { revisionOf } from './revision.js';
import { validateAgainstSchema } from './schema-validator.js';
import { didYouMean, nearest } from './suggest.js';
import { API_VERSION, MANIFEST_KINDS, type AnyDocument, type GeneratedFrom, type ManifestError, type ManifestKind, type ManifestSet } from './types.js';
import { printable } from './printable.js';
import { referencePolicy, registerReferencePolicy, type ReferencePolicyOptions } from './reference-policy.js';
import { parseYamlFile, type SourceDocument } from './yaml-source.js';
import type { ParseCache } from './parse-cache.js';
import { expandProjectSets, valuesDirectories, type ProjectSetInput } from './project-set.js';
import type { ProjectSetSpec } from './types.js';

export interface LoadOptions {
  /** Largest file read, in bytes (default 1 MiB). Larger files are rejected from their size alone. */
  maxFileBytes?: number;
  /** What secret references of these documents may name besides the manifests directory, and what never (reference-policy.ts). */
  references?: ReferencePolicyOptions;
  /**
   * Document kinds besides the committed schemas' (`schemas/*.schema.json`), each with its
   * document schema (as `buildSchemas` makes it): a kind module registered in memory, before
   * `npm run generate:schemas` has written its schema.
   */
  kinds?: Readonly<Record<string, object>>;
  /**
   * The parses of earlier loads, kept by a long-running process (the daemon): a file whose path
   * and content are unchanged is not parsed again (parse-cache.ts).
   */
  parseCache?: ParseCache;
}

type FileRead = { text: string } | { problem: string };

/** A manifest file's text unless it is not a regular file, too large, binary or not UTF-8. */
function readManifestFile(checkout: CheckoutFiles, path: string, maxBytes: number): FileRead {
  const read = checkout.read(path, maxBytes);
  if ('problem' in read) {
    if (read.problem === 'too-large') return { problem: `${read.detail} for a manifest file` };
    if (read.problem === 'missing') return { problem: 'vanished while the tree was read' };
    return { problem: read.detail };
  }
  const bytes = read.bytes;
  if (bytes.includes(0)) return { problem: 'is a binary file (it contains NUL bytes), not YAML' };
  try {
    return { text: UTF8.decode(bytes).replace(/^\uFEFF/, '') };
  } catch {
    return { problem: 'is not valid UTF-8 text' };
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Longest stretch of synchronous loading work before the event loop gets a turn. */
const YIELD_AFTER_MS = 20;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A document that may be a values file: a mapping with neither apiVersion nor kind. */
function isValuesMapping(source: SourceDocument): boolean {
  return isPlainObject(source.value) && !('apiVersion' in source.value) && !('kind' in source.value);
}

interface DocumentOutcome {
  entry?: CheckedEntry;
  document?: AnyDocument;
  errors: ManifestError[];
}

function checkDocument(file: string, dir: string, source: SourceDocument, extraKinds: Readonly<Record<string, object>> = {}, from?: GeneratedFrom): DocumentOutcome {
  const errors: ManifestError[] = [];
  const fail = (path: string, message: string, hint?: string, key = false) =>
    errors.push({ file, ...source.locate(path, { key }), path, message, ...(hint ? { hint } : {}) });
  const value = source.value;
  const kinds: readonly string[] = [...MANIFEST_KINDS, ...Object.keys(extraKinds).filter((kind) => !(MANIFEST_KINDS as readonly string[]).includes(kind))];
  if (!isPlainObject(value)) {
    fail('', 'a manifest document must be a mapping with apiVersion, kind, metadata and spec');
    return { errors };
  }
  const kind = value.kind;
  if (typeof kind !== 'string') {
    if (kind === undefined) {
      const typo = Object.keys(value).find((key) => nearest(key, ['kind']) !== undefined);
      fail('', `missing required field \`kind\` (one of ${kinds.join(', ')})`, typo ? `is \`${typo}\` meant to be \`kind\`?` : undefined);
    } else fail('/kind', `expected a string, one of ${kinds.join(', ')}`);
    return { errors };
  }
  if (!kinds.includes(kind)) {
    fail('/kind', `unknown kind \`${kind}\`: expected one of ${kinds.join(', ')}`, didYouMean(kind, kinds));
    return { errors };
  }
  const manifestKind = kind as ManifestKind;
  for (const problem of validateAgainstSchema(manifestKind, value, extraKinds[kind])) fail(problem.path, problem.message, problem.hint, problem.atKey ?? false);
  const metadata = isPlainObject(value.metadata) ? value.metadata : {};
  const name = typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : undefined;
  const spec = isPlainObject(value.spec) ? value.spec : {};
  const valid = errors.length === 0;
  const entry: CheckedEntry = { file, dir, kind: manifestKind, name, spec, valid, locate: source.locate };
  if (!valid) return { entry, errors };
  const document = {
    apiVersion: API_VERSION,
    kind: manifestKind,
    metadata: value.metadata,
    // A kind whose spec is all optional may leave it out: the same as `spec: {}`.
    spec: value.spec ?? {},
    // A generated document's set is in its source from the start (one shape per kind of source, no property added later).
    source: from === undefined ? { file, line: source.start.line, column: source.start.column, dir } : { file, line: source.start.line, column: source.start.column, dir, set: from },
  } as AnyDocument;
  registerLocator(document, source.locate);
  return { entry, document, errors };
}

/** A document as written that was not kept (it failed its kind or its schema): the files it names as secrets are sealed all the same. */
interface Unkept {
  file: string;
  dir: string;
  value: unknown;
}

/** The paths every `valueFrom: { file }` below `value` names, however malformed the rest of the reference. */
function secretFilePaths(value: unknown): string[] {
  const paths: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const from = (node as { valueFrom?: unknown }).valueFrom;
    if (!Array.isArray(node) && typeof from === 'object' && from !== null && typeof (from as { file?: unknown }).file === 'string') paths.push((from as { file: string }).file);
    stack.push(...Object.values(node));
  }
  return paths;
}

/**
 * Seals every secret file a document names (valueFrom.file), kept or not: a file of the checkout
 * linked to one is refused, never read and quoted in an error. The kept documents' secret files
 * are also what their policy refuses as other files (a function's source file).
 */
function sealSecretFiles(checkout: CheckoutFiles, policy: ReturnType<typeof referencePolicy>, documents: readonly AnyDocument[], unkept: readonly Unkept[], manifests: readonly string[]): void {
  policy.secretFiles = [];
  for (const { document, ref } of findSecretReferences(documents)) {
    if (!('file' in ref.valueFrom)) continue;
    const secretFile = { path: resolve(document.source.dir, ref.valueFrom.file), by: document.source.file };
    checkout.sealSecretFile(secretFile.path, secretFile.by);
    policy.secretFiles.push(secretFile);
  }
  const manifestPaths = new Set(manifests.map((file) => join(checkout.root, file)));
  for (const { file, dir, value } of unkept) {
    // A set that failed names no file of its own: the files its elements would have named are sealed.
    for (const path of secretFilePaths(value)) {
      if (path.includes('${')) checkout.sealSecretTemplate(resolve(dir, path), file, manifestPaths);
      else checkout.sealSecretFile(resolve(dir, path), file);
    }
  }
}

function compareErrors(a: ManifestError, b: ManifestError): number {
  return a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column || a.path.localeCompare(b.path);
}

/**
 * Each valid document whose kind reads files at load time (its `read` facet) reads them now,
 * through the checkout's walker: their problems are located errors.
 */
async function readDocumentFiles(documents: readonly AnyDocument[], facets: LoadFacets, checkout: CheckoutFiles): Promise<ManifestError[]> {
  const errors: ManifestError[] = [];
  for (const document of documents) {
    const read = facets.get(document.kind)?.read;
    if (!read) continue;
    const at = (pointer: string) => ({ file: document.source.file, ...locateField(document, pointer), path: pointer });
    try {
      errors.push(...(await read(document, { checkout, at })));
    } catch (thrown) {
      errors.push({ ...at(''), message: `the files of ${document.kind} \`${document.metadata.name}\` could not be read: ${(thrown as Error).message}` });
    }
  }
  return errors;
}

/**
 * Loads the checkout at `dir` with the checks and readers of each document kind (`facets`, the
 * registry's: src/reconcile/load-manifests.ts gives them).
 */
export async function loadCheckout(dir: string, facets: LoadFacets, options: LoadOptions = {}): Promise<ManifestSet> {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1) {
    throw new TypeError(`Expected \`maxFileBytes\` to be a positive integer, got \`${String(maxFileBytes)}\` (${typeof maxFileBytes})`);
  }
  const requested = resolve(dir);
  const errors: ManifestError[] = [];
  const rootError = (message: string): ManifestSet => ({ root: requested, documents: [], errors: [{ file: dir, line: 1, column: 1, path: '', message }], files: [] });

  // Resolve the git-sync symlink once: everything below is read from this one tree, even if
  // the link is swapped to a newer commit while we read.
  let root: string;
  try {
    root = await realpath(requested);
    if (!(await stat(root)).isDirectory()) return rootError('the manifests path is not a directory');
  } catch {
    return rootError('the manifests directory does not exist');
  }
  const [revision, discovered] = await Promise.all([revisionOf(root), discoverManifestFiles(root)]);
  for (const problem of discovered.problems) errors.push({ file: problem.file, line: 1, column: 1, path: '', message: problem.message });
  const policy = referencePolicy(root, options.references);
  // Every file below is read through the checkout's walker, which records it for the revision.
  const checkout = CheckoutFiles.resolved(root);
  // The reconciler's own credential files are never read as checkout files either (a migration
  // file linked to the token file would be parsed, and its syntax error quote the token).
  for (const file of policy.credentialFiles) checkout.sealCredentialFile(file);

  const entries: CheckedEntry[] = [];
  const documents: AnyDocument[] = [];
  // Files of mappings with neither apiVersion nor kind: a ProjectSet's values files, or errors.
  const held = new Map<string, SourceDocument[]>();
  const projectSets: ProjectSetInput[] = [];
  const unkept: Unkept[] = [];
  let turn = performance.now();
  for (const file of discovered.files) {
    // Reading and checking are synchronous: give the event loop a turn now and then, so a
    // daemon's health and metrics endpoints keep answering while a large tree loads.
    if (performance.now() - turn > YIELD_AFTER_MS) {
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
      turn = performance.now();
    }
    const path = join(root, file);
    const read = readManifestFile(checkout, path, maxFileBytes);
    if ('problem' in read) {
      errors.push({ file, line: 1, column: 1, path: '', message: `the file ${read.problem}` });
      continue;
    }
    const parsed = options.parseCache ? options.parseCache.parse(path, read.text) : parseYamlFile(read.text);
    for (const problem of parsed.problems) errors.push({ file, line: problem.line, column: problem.column, path: problem.path ?? '', message: problem.message });
    if (parsed.documents.length > 0 && parsed.documents.every(isValuesMapping)) held.set(file, parsed.documents);
    else {
      for (const source of parsed.documents) {
        const outcome = checkDocument(file, dirname(path), source, options.kinds);
        errors.push(...outcome.errors);
        if (!outcome.document) unkept.push({ file, dir: dirname(path), value: source.value });
        if (outcome.entry) entries.push(outcome.entry);
        if (outcome.document?.kind === ('ProjectSet' as string)) {
          projectSets.push({ file, dir: dirname(path), name: outcome.document.metadata.name, spec: outcome.document.spec as unknown as ProjectSetSpec, locate: source.locate });
        } else if (outcome.document) {
          registerReferencePolicy(outcome.document, policy);
          documents.push(outcome.document);
        }
      }
    }
    parsed.release();
  }
  // ProjectSets become ordinary documents here, before anything checks documents against each other.
  const check = (file: string, dir: string, source: SourceDocument, from?: GeneratedFrom) => checkDocument(file, dir, source, options.kinds, from);
  const expanded = expandProjectSets(projectSets, { root, files: discovered.files, held, check });
  errors.push(...expanded.errors);
  entries.push(...expanded.entries);
  for (const document of expanded.documents) {
    registerReferencePolicy(document, policy);
    documents.push(document);
  }
  // A mapping without apiVersion and kind that no set reads as values: the usual errors.
  const valueDirs = entries.filter((entry) => entry.kind === ('ProjectSet' as string)).flatMap((entry) => valuesDirectories(entry.spec, entry.dir, root));
  for (const [file, sources] of held) {
    if (expanded.claimed.has(file) || valueDirs.some((prefix) => file.startsWith(prefix))) continue;
    for (const source of sources) errors.push(...check(file, dirname(join(root, file)), source).errors);
  }
  errors.push(...crossCheck(entries, root, facets));
  // A secret file is read as a secret reference only, never as a migration file linked to it,
  // nor (through the documents' policy) as a function's source file; the secret files of the
  // documents that were not kept are sealed too.
  for (const entry of expanded.entries) if (!entry.valid) unkept.push({ file: entry.file, dir: entry.dir, value: entry.spec });
  for (const set of projectSets) {
    if (!expanded.sets.some((made) => made.name === set.name && made.file === set.file)) unkept.push({ file: set.file, dir: set.dir, value: set.spec.template });
  }
  sealSecretFiles(checkout, policy, documents, unkept, discovered.files);
  // A manifest or values file read above that links to one of those secret files: nothing made
  // of it is kept (its documents, and every error, which could quote it), only the refusal.
  const unsealed = checkout.readBeforeSealed();
  if (unsealed.length > 0) {
    const refusals = unsealed.map(({ file, detail }) => ({ file: printable(file), line: 1, column: 1, path: '', message: `the file ${detail}; fix this first: other errors of the checkout are shown once it is gone` }));
    return { root, ...(revision ? { revision } : {}), documents: [], errors: refusals.sort(compareErrors), files: discovered.files, inputs: checkout.inputs() };
  }
  // The files the documents read at load time (a Migrations document's SQL files), now that the secret files are sealed.
  errors.push(...(await readDocumentFiles(documents, facets, checkout)));
  const located = errors.map((error) => ({
    ...error,
    file: printable(error.file),
    path: printable(error.path),
    message: printable(error.message),
    ...(error.hint !== undefined ? { hint: printable(error.hint) } : {}),
  }));
  located.sort(compareErrors);
  return { root, ...(revision ? { revision } : {}), documents, errors: located, files: discovered.files, inputs: checkout.inputs(), ...(expanded.sets.length > 0 ? { sets: expanded.sets } : {}) };
}
