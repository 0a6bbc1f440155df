// Manifests for live projects, so a team can adopt an existing fleet: an Organization and a
// Project per live project (adopted by `spec.ref`) with every configuration section read from
// the API, a Secrets document naming its secrets, its functions (documents plus their source
// files), SSO providers and non-default branches. Values that are secret are never exported:
// each becomes a `valueFrom: {env: ...}` reference to fill in. Only fields the manifest schema
// knows are written, so the output validates.
//
// Each registry module builds its own documents (a fleet-level module's `exportDocuments`, a
// section's `export`, a sub-resource's `exportDocuments`); this file walks the registry and
// owns what they share: which projects are exported and under which names, the files the
// documents go in, reads the service does not answer, and pruning to the schema.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { NotFoundError, isApiError } from '../api/errors.js';
import type { ManagementApi } from '../api/endpoints.js';
import type { OrganizationResponseV1, V1ProjectWithDatabaseResponse } from '../api/types.js';
import { SCHEMAS_DIR } from '../manifests/schema-validator.js';
import type { SecretRef } from '../manifests/types.js';
import type { ConfigSection, SectionExportContext } from './kinds/config/section.js';
import { CONFIG_SECTIONS, FLEET_MODULES, KIND_MODULES } from './registry.js';
import type { FleetExportContext } from './fleet.js';
import type { KindExportContext, Logger } from './types.js';
import type { ExportedFile } from './export-functions.js';
import { listUnknown } from '../manifests/suggest.js';

export { FunctionExportError, type ExportedFile } from './export-functions.js';

type Json = Record<string, unknown>;

export interface ExportedDocument {
  /** Suggested file (without directory) the document belongs in. */
  file: string;
  document: Json;
}

export interface ExportOptions {
  api: ManagementApi;
  /** Project refs or names to export; undefined: every live project. */
  projects?: string[];
  /**
   * Whether to read function sources and export Function documents (default true). Without
   * an output directory the sources have nowhere to go: the functions are only listed, and
   * named in `functionsLeftOut`.
   */
  functions?: boolean;
  /** The configuration sections to export (default: the registry's). */
  sections?: readonly ConfigSection[];
  log: Logger;
}

export interface FleetExport {
  documents: ExportedDocument[];
  /** Function sources, relative to the output directory (the documents' `source` points at them). */
  files: ExportedFile[];
  /** `project/slug` of live functions not exported because `functions` was false. */
  functionsLeftOut: string[];
  /**
   * Projects whose configuration the service does not serve in their current status (neither
   * healthy nor paused): exported as a bare Project adopted by ref, for the caller to report.
   */
  unreadable: UnreadableProject[];
}

export interface UnreadableProject {
  /** The project's manifest name. */
  name: string;
  ref: string;
  status: string;
}

export class ExportSelectionError extends Error {
  constructor(readonly missing: string[], known: string[]) {
    super(`no live project has the ref or name ${listUnknown(missing, known)}`);
    this.name = 'ExportSelectionError';
  }
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  $ref?: string;
  items?: SchemaNode;
}

let projectSchema: { $defs: Record<string, SchemaNode>; properties: Record<string, SchemaNode> } | undefined;
function schema() {
  projectSchema ??= JSON.parse(readFileSync(new URL('project.schema.json', SCHEMAS_DIR), 'utf8'));
  return projectSchema!;
}

function resolveNode(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node?.$ref) return node;
  const name = node.$ref.replace(/^#\/\$defs\//, '');
  return schema().$defs[name];
}

/** Keeps only the keys the schema knows (recursively), dropping nulls: the output must validate. */
function pruneToSchema(value: unknown, node: SchemaNode | undefined): unknown {
  const resolved = resolveNode(node);
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return value.map((item) => pruneToSchema(item, resolved?.items)).filter((v) => v !== undefined);
  if (typeof value !== 'object') return value;
  if (!resolved?.properties) return value;
  const out: Json = {};
  for (const [key, item] of Object.entries(value as Json)) {
    if (!(key in resolved.properties)) continue;
    const pruned = pruneToSchema(item, resolved.properties[key]);
    if (pruned !== undefined) out[key] = pruned;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function sectionSchema(name: string): SchemaNode | undefined {
  return schema().$defs[name];
}

/** An environment variable name for a secret of a project: `SHOP_SMTP_PASS`. */
export function envName(...parts: string[]): string {
  return parts
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .replace(/^(\d)/, '_$1');
}

function reference(env: string): SecretRef {
  return { valueFrom: { env } };
}

/** Two secret fields of the export would share one environment variable: nothing is written. */
export class ExportVariableCollisionError extends Error {
  constructor(readonly variable: string, first: string, second: string) {
    super(`the secret variable ${variable} would name two different values (${first} and ${second}): export these projects separately (--project) or rename a secret`);
    this.name = 'ExportVariableCollisionError';
  }
}

/**
 * The variable prefix of each project: its manifest name upper-cased, punctuation as `_`
 * (`shop-eu` -> `SHOP_EU`). Names that differ only in punctuation or case (`shop-eu`,
 * `shop_eu`) would share variables, so every project of such a group gets a suffix of its
 * own, the first eight hex digits of the SHA-256 of its manifest name (`shop-eu` -> `SHOP_EU_8C4E0485`):
 * deterministic, whatever the order or the other projects of the export.
 */
export function variablePrefixes(names: Iterable<string>): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const name of new Set(names)) {
    const base = envName(name);
    groups.set(base, [...(groups.get(base) ?? []), name]);
  }
  const prefixes = new Map<string, string>();
  for (const [base, members] of groups) {
    for (const name of members) prefixes.set(name, members.length > 1 ? envName(base, createHash('sha256').update(name).digest('hex').slice(0, 8)) : base);
  }
  return prefixes;
}

/** Hands out the variables of an export, refusing one that would name two different values. */
class ExportVariables {
  readonly #owners = new Map<string, string>();
  constructor(readonly prefixes: Map<string, string>) {}

  /** `where`: the field it stands for, for the message (`shop-eu: auth.smtp_pass`). */
  ref(project: string, field: string, where: string): SecretRef {
    const variable = envName(this.prefixes.get(project) ?? envName(project), field);
    const owner = `${project}: ${where}`;
    const first = this.#owners.get(variable);
    if (first !== undefined && first !== owner) throw new ExportVariableCollisionError(variable, first, owner);
    this.#owners.set(variable, owner);
    return reference(variable);
  }
}

/** Reads a section; a section the service does not offer for this project is left out. */
async function optional<T>(read: () => Promise<T>, log: Logger, project: string, section: string): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof NotFoundError || (isApiError(error) && error.status !== undefined && error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 429)) {
      log.warn({ project, section, error: error.message }, 'section not exported: the API did not return it');
      return undefined;
    }
    throw error;
  }
}

/** Unique, valid manifest names for the projects (API names may repeat across organizations). */
function manifestNames(projects: V1ProjectWithDatabaseResponse[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const p of projects) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const p of projects) names.set(p.ref, (counts.get(p.name) ?? 0) > 1 ? `${p.name}-${p.ref}` : p.name);
  return names;
}

function baseName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'project';
}

/** The file of the fleet-level documents that are not of one project (the organizations). */
const FLEET_FILE = 'organizations.yaml';

function fileName(name: string): string {
  return `${baseName(name)}.yaml`;
}

export async function exportFleet(options: ExportOptions): Promise<FleetExport> {
  const { api, log } = options;
  const live = await api.listAllProjects();
  let selected = live;
  if (options.projects) {
    const wanted = options.projects;
    const missing = wanted.filter((w) => !live.some((p) => p.ref === w || p.id === w || p.name === w));
    if (missing.length > 0) throw new ExportSelectionError(missing, live.flatMap((p) => [p.name, p.ref]));
    selected = live.filter((p) => wanted.some((w) => p.ref === w || p.id === w || p.name === w));
  }
  const organizations: OrganizationResponseV1[] = await api.listAllOrganizations();
  const documents: ExportedDocument[] = [];
  const files: ExportedFile[] = [];
  const functionsLeftOut: string[] = [];
  const unreadable: UnreadableProject[] = [];
  // Two names can reduce to the same directory name: the second gets its ref appended.
  const functionDirs = new Set<string>();

  const projectNames = manifestNames(selected);
  const variables = new ExportVariables(variablePrefixes(projectNames.values()));
  const context: FleetExportContext = {
    api,
    projects: selected,
    organizations,
    projectNames,
    organizationNames: new Map(),
    sections: options.sections ?? CONFIG_SECTIONS,
    sectionContexts: (project, name) => sectionExportContexts(api, project, name, variables, log),
    log,
  };
  // The fleet-level modules' documents in registry order (organizations, then projects), each
  // project's followed by the documents of its per-project kinds.
  for (const module of FLEET_MODULES) {
    for await (const { document, project } of module.exportDocuments(context)) {
      if (!project) {
        documents.push({ file: FLEET_FILE, document });
        continue;
      }
      const { ref, name } = project;
      const file = fileName(name);
      documents.push({ file, document });
      // One project the service cannot read yet (creating, failed to initialize, restoring...)
      // must not cost the rest of the fleet its export: it is adopted by ref, sections later.
      if (project.state === 'unreadable') unreadable.push({ name, ref, status: project.status });
      if (project.state !== 'readable') continue;
      // Every per-project kind of the registry that has documents of its own, in registry order.
      const kindContext = kindExportContext(api, ref, name, document.spec as Json, options.functions !== false, variables, () => {
        let dir = `functions/${baseName(name)}`;
        if (functionDirs.has(dir)) dir = `${dir}-${ref}`;
        functionDirs.add(dir);
        return dir;
      }, log);
      for (const kind of KIND_MODULES) {
        if (!kind.exportDocuments) continue;
        const exported = await kind.exportDocuments(kindContext);
        for (const kindDocument of exported.documents) documents.push({ file, document: kindDocument });
        files.push(...(exported.files ?? []));
        functionsLeftOut.push(...(exported.leftOut ?? []));
      }
    }
  }
  return { documents, files, functionsLeftOut, unreadable };
}

/** What each kind's export of documents works with, for one readable project. */
function kindExportContext(
  api: ManagementApi,
  ref: string,
  name: string,
  spec: Json,
  functions: boolean,
  variables: ExportVariables,
  functionDir: () => string,
  log: Logger,
): KindExportContext {
  return {
    api,
    ref,
    name,
    spec,
    read: (fetch, what) => optional(fetch, log, name, what),
    secretRef: (field) => variables.ref(name, field, `secret ${field}`),
    functions,
    functionDir,
    log,
  };
}

/** What each section's export works with; a read sections share is made once per project. */
function sectionExportContexts(api: ManagementApi, project: V1ProjectWithDatabaseResponse, name: string, variables: ExportVariables, log: Logger): (section: string) => SectionExportContext {
  const shared = new Map<string, Promise<unknown>>();
  return (section) => ({
    api,
    project,
    ref: project.ref,
    name,
    read<T>(fetch: () => Promise<T>, share?: string): Promise<T | undefined> {
      if (share === undefined) return optional(fetch, log, name, section);
      if (!shared.has(share)) shared.set(share, optional(fetch, log, name, section));
      return shared.get(share) as Promise<T | undefined>;
    },
    prune: (value, def) => pruneToSchema(value, sectionSchema(def)),
    fieldsOf: (def) => Object.keys(sectionSchema(def)?.properties ?? {}),
    secretRef: (field) => variables.ref(name, field, `${section}.${field}`),
  });
}
