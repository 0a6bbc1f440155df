// Expands ProjectSet documents into ordinary documents while the checkout loads: one Project
// (and its Secrets, Function and SsoProvider documents) per element of the set's generators.
// Everything after loading (references, shard partitioning, Rollout and Migrations selectors,
// approval rules, the plan) sees ordinary Projects; each carries in its `source.set` the set
// and the element key it was made for. Substitution is `${name}` and nothing else: no
// expressions, no functions, no code. Every error names what a person wrote: the template's
// file and line, and the element (its values file, or its index in a list).
import { statSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { DEFAULT_MAX_PROJECTS, ELEMENT_KEY, VARIABLE_NAME } from './project-set-schema.js';
import { didYouMean } from './suggest.js';
import type { ProjectSetGenerator, ProjectSetList, ProjectSetSpec, ProjectSetValues } from './schema-types.js';
import type { AnyDocument, GeneratedFrom, ManifestError, ProjectSetSummary } from './types.js';
import { toPointer, pointerSegments, type Position, type SourceDocument } from './yaml-source.js';

export { DEFAULT_MAX_PROJECTS } from './project-set-schema.js';

type Locate = (pointer: string, options?: { key?: boolean }) => Position;
type Scalar = string | number | boolean;

/** A ProjectSet document that passed its own schema. */
export interface ProjectSetInput {
  file: string;
  /** Absolute directory of its file. */
  dir: string;
  name: string;
  spec: ProjectSetSpec;
  locate: Locate;
}

/** What a checked generated document gives back (load.ts's check of any document). */
export interface CheckOutcome<E> {
  entry?: E;
  document?: AnyDocument;
  errors: ManifestError[];
}

interface ExpandContext<E> {
  /** The manifests root (resolved). */
  root: string;
  /** Every YAML file of the checkout, as the discovery found them (relative, sorted). */
  files: readonly string[];
  /** Files whose documents have neither apiVersion nor kind: values files, if a set claims them. */
  held: ReadonlyMap<string, readonly SourceDocument[]>;
  /** Checks one generated document as every document is checked (schema, then the entry cross-checks see). */
  check(file: string, dir: string, source: SourceDocument, from?: GeneratedFrom): CheckOutcome<E>;
}

interface Expanded<E> {
  entries: E[];
  documents: AnyDocument[];
  errors: ManifestError[];
  sets: ProjectSetSummary[];
  /** Held files read as values files. */
  claimed: Set<string>;
}

/** Where a part of an element was written: a file and the pointer of the element in it. */
interface Written {
  file: string;
  pointer: string;
  locate: Locate;
}

interface Element {
  key: string;
  values: Map<string, Scalar>;
  /** The merge patches, in the order they apply. */
  overrides: Array<{ patch: Record<string, unknown>; at: Written }>;
  /** How messages name the element: `tenants/acme.yaml:1`, `element 3 of spec.generators[0].list (set.yaml:14)`. */
  label: string;
  at: Written;
  /** Values files it was read from. */
  files: string[];
}

class SetError extends Error {
  constructor(readonly file: string, readonly position: Position, readonly path: string, message: string, readonly hint?: string) {
    super(message);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isScalar = (value: unknown): value is Scalar => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const RESERVED = new Set(['key', 'overrides']);
const BUILT_IN = ['key', 'set'];
const VARIABLE = new RegExp(VARIABLE_NAME);
const KEY = new RegExp(ELEMENT_KEY);

export function expandProjectSets<E>(sets: readonly ProjectSetInput[], context: ExpandContext<E>): Expanded<E> {
  const out: Expanded<E> = { entries: [], documents: [], errors: [], sets: [], claimed: new Set() };
  for (const set of sets) {
    try {
      expandOne(set, context, out);
    } catch (error) {
      if (!(error instanceof SetError)) throw error;
      out.errors.push({ file: error.file, ...error.position, path: error.path, message: error.message, ...(error.hint ? { hint: error.hint } : {}) });
    }
  }
  return out;
}

function expandOne<E>(set: ProjectSetInput, context: ExpandContext<E>, out: Expanded<E>): void {
  const fail = (pointer: string, message: string, hint?: string): never => {
    throw new SetError(set.file, set.locate(pointer), pointer, message, hint);
  };
  const generators = set.spec.generators.map((generator, index) => elementsOf(generator, index, set, context, out));
  const elements = generators.flat().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const seen = new Map<string, Element>();
  for (const element of elements) {
    const first = seen.get(element.key);
    if (first) fail(element.at.pointer.startsWith('/spec/') && element.at.file === set.file ? element.at.pointer : '/spec/generators', `two elements have the key \`${element.key}\`: ${first.label} and ${element.label}`, 'every element needs a key of its own: it is the identity its project is pinned to');
    seen.set(element.key, element);
  }
  refuseAboveLimit(set, elements.length);
  const summary: ProjectSetSummary = { name: set.name, file: set.file, line: set.locate('').line, projects: [] };
  const byName = new Map<string, Element>();
  // The template is read once for the whole set; each element then only fills in its values.
  const template = compileTemplate(set.spec.template);
  const starts = new Map<string, Position>();
  const startOf = (prefix: string): Position => {
    let start = starts.get(prefix);
    if (!start) starts.set(prefix, (start = set.locate(`/spec/template${prefix}`)));
    return start;
  };
  // A field of a generated document that no override sets was written in the template: the
  // documents of every element without overrides share one locator per template part. A field
  // an override sets is located in its values file, and named with it (errors found after
  // loading, such as an unresolved secret reference, otherwise name the document's file).
  const templateLocators = new Map<string, Locate>();
  const locatorOf = (element: Element, prefix: string): Locate => {
    if (element.overrides.length > 0) return overrideLocator(set, element, prefix);
    let locate = templateLocators.get(prefix);
    if (!locate) templateLocators.set(prefix, (locate = templateLocator(set.locate, prefix)));
    return locate;
  };
  for (const element of elements) {
    const made = instantiate(set, element, template);
    const projectName = made.project.metadata && isObject(made.project.metadata) ? made.project.metadata.name : undefined;
    if (typeof projectName === 'string') {
      const other = byName.get(projectName);
      if (other) {
        fail('/spec/template/metadata/name', `two elements make the project \`${projectName}\`: ${other.label} and ${element.label}`, 'the name template must give every element a name of its own (use a variable that differs, such as `${key}`)');
      }
      byName.set(projectName, element);
    }
    const from: GeneratedFrom = { set: set.name, key: element.key, element: element.label, ...(element.files.length > 0 ? { files: element.files } : {}) };
    for (const generated of made.documents) {
      const source: SourceDocument = { index: 0, value: generated.value, start: startOf(generated.prefix), locate: locatorOf(element, generated.prefix) };
      const outcome = context.check(set.file, set.dir, source, from);
      for (const error of outcome.errors) {
        const at = locateGenerated(set, element, generated.prefix, error.path);
        out.errors.push({ ...error, file: at.file, ...at.position, message: `${error.message} (ProjectSet \`${set.name}\`, element \`${element.key}\`: ${element.label})` });
      }
      if (outcome.entry) out.entries.push(outcome.entry);
      if (outcome.document) out.documents.push(outcome.document);
    }
    if (typeof projectName === 'string') summary.projects.push({ name: projectName, key: element.key, element: element.label });
  }
  out.sets.push(summary);
}

// The locators below outlive the expansion (each generated document keeps its own, for the
// messages of later checks), so they are made here, outside expandOne: a closure made inside it
// would keep every variable its inner functions share alive with it (the whole expansion's
// output, the values files as parsed), for as long as the documents live.

/** Where a field of a generated document was written when no override of its element sets anything: the template. */
function templateLocator(locate: Locate, prefix: string): Locate {
  return (pointer) => locate(`/spec/template${prefix}${pointer}`);
}

/** Where a field of a generated document was written when its element has overrides: the override that sets it, else the template. */
function overrideLocator(set: ProjectSetInput, element: Element, prefix: string): Locate {
  return (pointer) => {
    const at = locateGenerated(set, element, prefix, pointer);
    return at.file === set.file ? at.position : { ...at.position, file: at.file };
  };
}

/** A set whose generators make more projects than its limit is refused whole. */
function refuseAboveLimit(set: ProjectSetInput, count: number): void {
  const limit = set.spec.maxProjects ?? DEFAULT_MAX_PROJECTS;
  if (count <= limit) return;
  const pointer = set.spec.maxProjects === undefined ? '/spec/generators' : '/spec/maxProjects';
  throw new SetError(set.file, set.locate(pointer), pointer, `the generators make ${count} projects, more than this set's limit of ${limit} (maxProjects${set.spec.maxProjects === undefined ? `, default ${DEFAULT_MAX_PROJECTS}` : ''}): refused, nothing of the set is loaded`, 'raise spec.maxProjects if the set is meant to be this large');
}

// ---- generators

function elementsOf<E>(generator: ProjectSetGenerator, index: number, set: ProjectSetInput, context: ExpandContext<E>, out: Expanded<E>): Element[] {
  const base = `/spec/generators/${index}`;
  let elements: Element[];
  if (generator.list) elements = listElements(generator.list, `${base}/list`, `spec.generators[${index}].list`, set);
  else if (generator.values) elements = valuesElements(generator.values, `${base}/values`, set, context, out);
  else {
    const [first, second] = generator.matrix!.generators;
    const a = sourceElements(first!, `${base}/matrix/generators/0`, `spec.generators[${index}].matrix.generators[0]`, set, context, out);
    const b = sourceElements(second!, `${base}/matrix/generators/1`, `spec.generators[${index}].matrix.generators[1]`, set, context, out);
    // Counted before it is built: two long lists would otherwise make their whole product first.
    refuseAboveLimit(set, a.length * b.length);
    elements = a.flatMap((x) => b.map((y) => combine(x, y, set, `${base}/matrix`)));
  }
  if (elements.length === 0) {
    throw new SetError(set.file, set.locate(base), base, `generator ${index} makes no element: refused, so that an emptied list or directory never removes every project of the set`, 'to remove every project of the set, remove the ProjectSet document (each project then goes by its deletion policy)');
  }
  return elements;
}

function sourceElements<E>(source: { list?: ProjectSetList; values?: ProjectSetValues }, pointer: string, label: string, set: ProjectSetInput, context: ExpandContext<E>, out: Expanded<E>): Element[] {
  return source.list ? listElements(source.list, `${pointer}/list`, `${label}.list`, set) : valuesElements(source.values!, `${pointer}/values`, set, context, out);
}

function listElements(list: ProjectSetList, pointer: string, label: string, set: ProjectSetInput): Element[] {
  return list.elements.map((raw, index) => {
    const at: Written = { file: set.file, pointer: `${pointer}/elements/${index}`, locate: set.locate };
    const where = `element ${index} of ${label} (${set.file}:${set.locate(at.pointer).line})`;
    return element(raw as Record<string, unknown>, at, where, list.keyField, undefined, `${pointer}/keyField`);
  });
}

function valuesElements<E>(values: ProjectSetValues, pointer: string, set: ProjectSetInput, context: ExpandContext<E>, out: Expanded<E>): Element[] {
  const fail = (message: string, hint?: string): never => {
    throw new SetError(set.file, set.locate(`${pointer}/path`), `${pointer}/path`, message, hint);
  };
  const absolute = resolve(set.dir, values.path);
  const rel = relative(context.root, absolute).split('\\').join('/');
  if (rel.startsWith('..') || isAbsolute(rel)) fail(`the values directory \`${values.path}\` is outside the manifests directory`);
  let isDirectory = false;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    fail(`the values directory \`${values.path}\` does not exist`, 'a missing directory would remove every tenant: create it, or correct the path');
  }
  if (!isDirectory) fail(`\`${values.path}\` is not a directory`);
  const prefix = rel === '' ? '' : `${rel}/`;
  const files = context.files.filter((file) => file.startsWith(prefix) && file !== set.file);
  const elements: Element[] = [];
  for (const file of files) {
    const documents = context.held.get(file);
    if (!documents) {
      throw new SetError(file, { line: 1, column: 1 }, '', `a manifest document in the values directory \`${values.path}\` of ProjectSet \`${set.name}\`: every YAML file there is a values file (a mapping with neither \`apiVersion\` nor \`kind\`)`, 'move the manifest out of the values directory');
    }
    out.claimed.add(file);
    if (documents.length !== 1 || !isObject(documents[0]!.value)) {
      throw new SetError(file, documents[0]?.start ?? { line: 1, column: 1 }, '', `a values file of ProjectSet \`${set.name}\` holds exactly one YAML mapping`);
    }
    const source = documents[0]!;
    const fileKey = basename(file).replace(/\.ya?ml$/i, '');
    elements.push(element(source.value as Record<string, unknown>, { file, pointer: '', locate: source.locate }, `${file}:${source.start.line}`, values.keyField, fileKey, `${pointer}/keyField`));
  }
  return elements;
}

/** An element from its written mapping: its key, its values (scalars) and its overrides. */
function element(raw: Record<string, unknown>, at: Written, label: string, keyField: string | undefined, fileKey: string | undefined, keyFieldPointer: string): Element {
  const fail = (pointer: string, message: string, hint?: string): never => {
    throw new SetError(at.file, at.locate(at.pointer + pointer, { key: true }), at.pointer + pointer, `${message} (${label})`, hint);
  };
  const values = new Map<string, Scalar>();
  for (const [name, value] of Object.entries(raw)) {
    if (RESERVED.has(name)) continue;
    if (!VARIABLE.test(name)) fail(toPointer([name]), `\`${name}\` is not a variable name (letters, digits and \`_\`, not starting with a digit)`);
    if (name === 'set') fail(toPointer([name]), '`set` is a built-in variable (the set\'s name): name the value otherwise');
    if (!isScalar(value)) fail(toPointer([name]), `the value \`${name}\` must be a string, a number or a boolean: values are substituted into strings`, 'to change a structure for this element, use its `overrides`');
    values.set(name, value as Scalar);
  }
  let key: unknown = raw.key;
  let keyPointer = '/key';
  if (key === undefined && keyField !== undefined) {
    key = raw[keyField];
    keyPointer = toPointer([keyField]);
    if (key === undefined) fail('', `no value \`${keyField}\` (the keyField) and no \`key\``, `keyField is set at ${keyFieldPointer}`);
  }
  if (key === undefined) key = fileKey;
  if (key === undefined) fail('', 'the element has no key: give it `key:`, or name one of its values as the list\'s `keyField`', 'a key is the identity its project is pinned to; a position in a list is never one');
  const text = String(key);
  if (!KEY.test(text)) fail(key === fileKey && raw.key === undefined ? '' : keyPointer, `the key \`${text}\` is not a valid key (letters, digits, \`.\`, \`_\` and \`-\`, at most 128, starting and ending with a letter or digit)`);
  const overrides = raw.overrides;
  if (overrides !== undefined && !isObject(overrides)) fail('/overrides', '`overrides` must be a mapping (a JSON merge patch of the template)');
  const patches = isObject(overrides) ? [{ patch: overrides, at: { ...at, pointer: `${at.pointer}/overrides` } }] : [];
  return { key: text, values, overrides: patches, label, at, files: fileKey !== undefined ? [at.file] : [] };
}

function combine(a: Element, b: Element, set: ProjectSetInput, pointer: string): Element {
  const values = new Map(a.values);
  for (const [name, value] of b.values) {
    if (values.has(name) && values.get(name) !== value) {
      throw new SetError(set.file, set.locate(pointer), pointer, `the matrix combines ${a.label} and ${b.label}, which set \`${name}\` differently (\`${String(values.get(name))}\` and \`${String(value)}\`)`, 'name the value differently in one of the two generators');
    }
    values.set(name, value);
  }
  return { key: `${a.key}.${b.key}`, values, overrides: [...a.overrides, ...b.overrides], label: `${a.label} x ${b.label}`, at: a.at, files: [...a.files, ...b.files] };
}

/**
 * The values directories a ProjectSet document names (relative to the root, `/`-ended), read
 * from its spec as written, valid or not: their files are its values files even when the set
 * has an error, so they are not reported again as documents without a kind.
 */
export function valuesDirectories(spec: unknown, dir: string, root: string): string[] {
  const generators = isObject(spec) && Array.isArray(spec.generators) ? spec.generators : [];
  const sources = generators.flatMap((generator) => {
    const matrix = isObject(generator) && isObject(generator.matrix) && Array.isArray(generator.matrix.generators) ? generator.matrix.generators : [];
    return [generator, ...matrix];
  });
  return sources.flatMap((source) => {
    const path = isObject(source) && isObject(source.values) ? source.values.path : undefined;
    if (typeof path !== 'string' || path === '') return [];
    const rel = relative(root, resolve(dir, path)).split('\\').join('/');
    return rel.startsWith('..') || isAbsolute(rel) ? [] : [rel === '' ? '' : `${rel}/`];
  });
}

// ---- substitution

/**
 * A template string with the element's values substituted: `${name}`, `$${` for a literal `${`.
 * The pieces are joined once, so the result is one flat string, as a string read from a file
 * is: a string grown by `+=` is a chain of pieces, copied into one the first time it is
 * matched, compared or hashed (the schema check's patterns already do).
 */
export function substitute(text: string, variables: ReadonlyMap<string, Scalar>, envName = false): { value: unknown } | { error: string; hint?: string } {
  const whole = /^\$\{([^}]*)\}$/.exec(text);
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0) {
      out.push(text.slice(i));
      break;
    }
    out.push(text.slice(i, dollar));
    i = dollar;
    if (text.startsWith('$${', i)) {
      out.push('${');
      i += 2;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out.push('$');
      continue;
    }
    const end = text.indexOf('}', i + 2);
    if (end < 0) return { error: `\`\${\` without a closing \`}\` in \`${text}\``, hint: 'write `$${` for a literal `${`' };
    const name = text.slice(i + 2, end);
    if (!VARIABLE.test(name)) return { error: `\`\${${name}}\` is not a variable (only \`\${name}\`: no expressions, no functions)`, hint: 'write `$${` for a literal `${`' };
    const value = variables.get(name);
    if (value === undefined) return { error: `unknown variable \`${name}\``, hint: didYouMean(name, variables.keys()) ?? `the element's variables: ${[...variables.keys()].sort().join(', ')}` };
    if (whole && !envName) return { value };
    out.push(envName ? String(value).toUpperCase().replace(/[^A-Z0-9_]/g, '_') : String(value));
    i = end;
  }
  return { value: out.join('') };
}

interface Instantiated {
  project: Record<string, unknown>;
  /** The generated documents with the template part each came from (`''` the Project, `/secrets`, `/functions/0`). */
  documents: Array<{ value: Record<string, unknown>; prefix: string }>;
}

/**
 * A template compiled once per set: a string that names no variable, and any other scalar, is
 * taken as it is; a string with `${` is substituted for each element (its pointer made once,
 * for the message should it fail); mappings and sequences are copied for each element.
 */
type TemplateNode =
  | { kind: 'scalar'; value: unknown }
  | { kind: 'text'; text: string; envName: boolean; pointer: string }
  | { kind: 'mapping'; entries: Array<[TemplateNode, TemplateNode]> }
  | { kind: 'sequence'; items: TemplateNode[] };

function compileTemplate(value: unknown, path: Array<string | number> = [], envName = false): TemplateNode {
  if (typeof value === 'string') return value.includes('${') ? { kind: 'text', text: value, envName, pointer: `/spec/template${toPointer(path)}` } : { kind: 'scalar', value };
  if (Array.isArray(value)) return { kind: 'sequence', items: value.map((item, index) => compileTemplate(item, [...path, index], false)) };
  if (isObject(value)) {
    const entries = Object.entries(value).map(([key, item]): [TemplateNode, TemplateNode] => [
      compileTemplate(key, [...path, key], false),
      compileTemplate(item, [...path, key], envName || (key === 'env' && path[path.length - 1] === 'valueFrom')),
    ]);
    return { kind: 'mapping', entries };
  }
  return { kind: 'scalar', value };
}

function instantiate(set: ProjectSetInput, element: Element, template: TemplateNode): Instantiated {
  const variables = new Map<string, Scalar>(element.values).set('key', element.key).set('set', set.name);
  const build = (node: TemplateNode): unknown => {
    switch (node.kind) {
      case 'scalar':
        return node.value;
      case 'text': {
        const result = substitute(node.text, variables, node.envName);
        if ('error' in result) {
          throw new SetError(set.file, set.locate(node.pointer), node.pointer, `${result.error} (ProjectSet \`${set.name}\`, element \`${element.key}\`: ${element.label})`, result.hint);
        }
        return result.value;
      }
      case 'sequence':
        return node.items.map(build);
      case 'mapping': {
        const copy: Record<string, unknown> = {};
        const entries = node.entries;
        for (let index = 0; index < entries.length; index++) {
          const entry = entries[index]!;
          copy[String(build(entry[0]))] = build(entry[1]);
        }
        return copy;
      }
    }
  };
  let made = build(template) as Record<string, unknown>;
  for (const { patch } of element.overrides) made = mergePatch(made, patch) as Record<string, unknown>;
  const metadata = isObject(made.metadata) ? made.metadata : {};
  const projectName = typeof metadata.name === 'string' ? metadata.name : undefined;
  const project = { apiVersion: 'reconciler/v1', kind: 'Project', metadata: made.metadata, spec: made.spec };
  const documents: Instantiated['documents'] = [{ value: project, prefix: '' }];
  const withProject = (part: unknown, kind: string, defaultName: boolean): Record<string, unknown> => {
    const doc = isObject(part) ? part : {};
    const meta = isObject(doc.metadata) ? doc.metadata : {};
    const spec = doc.spec;
    return {
      apiVersion: 'reconciler/v1',
      kind,
      metadata: defaultName && meta.name === undefined && projectName !== undefined ? { ...meta, name: projectName } : meta,
      spec: isObject(spec) && spec.project === undefined && projectName !== undefined ? { project: projectName, ...spec } : spec,
    };
  };
  if (made.secrets !== undefined && made.secrets !== null) documents.push({ value: withProject(made.secrets, 'Secrets', true), prefix: '/secrets' });
  for (const [field, kind] of [['functions', 'Function'], ['ssoProviders', 'SsoProvider']] as const) {
    const list = made[field];
    if (Array.isArray(list)) list.forEach((part, index) => documents.push({ value: withProject(part, kind, false), prefix: `/${field}/${index}` }));
  }
  return { project, documents };
}

/** RFC 7386: a JSON merge patch applied to a copy of `target`. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // A key `__proto__` is a field like any other (the schema refuses it as unknown), never the
    // object's prototype: an assignment would drop it unseen and change what `result` inherits.
    else Object.defineProperty(result, key, { value: mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

// ---- locations

/** Whether a merge patch sets the field at `segments` (or an ancestor of it to a non-object). */
function patchHolds(patch: unknown, segments: readonly string[]): boolean {
  let node = patch;
  for (const segment of segments) {
    if (!isObject(node) || !(segment in node)) return false;
    node = node[segment];
    if (!isObject(node)) return true;
  }
  return true;
}

/** Where a field of a generated document was written: the element's override that sets it, else the template. */
function locateGenerated(set: ProjectSetInput, element: Element, prefix: string, pointer: string): { file: string; position: Position } {
  const templatePath = `${prefix}${pointer}`;
  const segments = pointerSegments(templatePath);
  for (const { patch, at } of [...element.overrides].reverse()) {
    if (segments.length > 0 && patchHolds(patch, segments)) return { file: at.file, position: at.locate(`${at.pointer}${templatePath}`) };
  }
  return { file: set.file, position: set.locate(`/spec/template${templatePath}`) };
}

/** The suffix messages about a generated document carry: the set and the element it was made for. */
export function generatedBy(document: { source: { set?: GeneratedFrom } }): string {
  const from = document.source.set;
  return from ? ` (ProjectSet \`${from.set}\`, element \`${from.key}\`: ${from.element})` : '';
}
