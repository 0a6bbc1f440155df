// Checks that span documents: unique names, references that resolve, one Secrets document per
// project, SSO domains claimed once, and function sources that exist inside the checkout.
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import cron from 'node-cron';
import { Cron } from 'croner';
import { didYouMean } from './suggest.js';
import type { ManifestError, ManifestKind } from './types.js';
import type { Position } from './yaml-source.js';

/** A document with a recognised kind, valid against its schema or not. */
export interface CheckedEntry {
  file: string;
  /** Absolute directory of the file. */
  dir: string;
  kind: ManifestKind;
  name: string | undefined;
  spec: Record<string, unknown>;
  /** Passed its schema: its fields have the documented types. */
  valid: boolean;
  locate(pointer: string, options?: { key?: boolean }): Position;
}

/**
 * Kinds whose names are unique across the fleet; every other kind belongs to a project
 * (`spec.project`) and its names are unique per project. A Secrets document holds a project's
 * whole set, so its name is the fleet's.
 */
const FLEET_NAMED: ReadonlySet<string> = new Set(['Organization', 'Project', 'Secrets']);
const FUNCTION_SLUG = /^[A-Za-z][A-Za-z0-9_-]*$/;

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function at(entry: CheckedEntry, pointer: string): { file: string; line: number; column: number } {
  return { file: entry.file, ...entry.locate(pointer) };
}

function where(entry: CheckedEntry, pointer: string): string {
  const { file, line, column } = at(entry, pointer);
  return `${file}:${line}:${column}`;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export function crossCheck(entries: CheckedEntry[], root: string): ManifestError[] {
  const errors: ManifestError[] = [];
  const error: ErrorFn = (entry, path, message, hint) => errors.push({ ...at(entry, path), path, message, ...(hint ? { hint } : {}) });
  const duplicates = checkUniqueNames(entries, error);
  const check = openCheck(entries, root, error, duplicates);
  for (const organization of check.organizations) checkOrganization(organization, check);
  for (const project of check.projects) checkProject(project, check);
  for (const entry of entries) {
    if (entry.kind === 'Organization' || entry.kind === 'Project') continue;
    const project = checkProjectReference(entry, check);
    KIND_CHECKS[entry.kind]?.(entry, project, check);
  }
  return errors;
}

/** What the checks after the unique names share: the fleet's names, and the first claim of each value. */
interface FleetCheck {
  readonly root: string;
  readonly error: ErrorFn;
  /** Records the first entry of `value` under `kind` (nothing when `value` is undefined); reports a later one with `message`. */
  readonly claim: ClaimFn;
  /** Documents already reported as duplicates: not reported again for their derived names. */
  readonly duplicates: ReadonlySet<CheckedEntry>;
  readonly organizations: CheckedEntry[];
  readonly projects: CheckedEntry[];
  readonly organizationNames: ReadonlySet<string>;
  readonly projectNames: ReadonlySet<string>;
  /** The first Project of each name, as a search in document order would find it. */
  readonly projectByName: ReadonlyMap<string | undefined, CheckedEntry>;
  readonly branchingDisabled: ReadonlySet<string>;
  /** SSO domains claimed so far, by project and lower-cased domain. */
  readonly domainOwners: Map<string, { entry: CheckedEntry; index: number }>;
  readonly lookups: FileSystemLookups;
}

/** Unique names: per kind, and per project for the project-scoped kinds. Returns the documents reported as duplicates. */
function checkUniqueNames(entries: CheckedEntry[], error: ErrorFn): Set<CheckedEntry> {
  const byName = new Map<string, CheckedEntry>();
  const duplicates = new Set<CheckedEntry>();
  for (const entry of entries) {
    if (!entry.name) continue;
    const scope = FLEET_NAMED.has(entry.kind) ? '' : `${str(entry.spec.project) ?? ''}/`;
    const key = `${entry.kind}\u0000${scope}${entry.name}`;
    const first = byName.get(key);
    if (first) {
      const owner = scope ? ` in project \`${str(entry.spec.project)}\`` : '';
      error(entry, '/metadata/name', `duplicate ${entry.kind} \`${entry.name}\`${owner}: also defined at ${where(first, '/metadata/name')}`);
      duplicates.add(entry);
    } else byName.set(key, entry);
  }
  return duplicates;
}

/** The fleet's organizations and projects, their names, and the claims the checks make as they go. */
function openCheck(entries: CheckedEntry[], root: string, error: ErrorFn, duplicates: ReadonlySet<CheckedEntry>): FleetCheck {
  const organizations = entries.filter((e) => e.kind === 'Organization');
  const projects = entries.filter((e) => e.kind === 'Project');
  const seen = new Map<string, CheckedEntry>();
  const claim: ClaimFn = (kind, value, entry, pointer, message) => {
    if (value === undefined) return;
    const key = `${kind}\u0000${value}`;
    const first = seen.get(key);
    if (first) error(entry, pointer, message(first));
    else seen.set(key, entry);
  };
  const projectByName = new Map<string | undefined, CheckedEntry>();
  for (const project of projects) if (!projectByName.has(project.name)) projectByName.set(project.name, project);
  return {
    root,
    error,
    claim,
    duplicates,
    organizations,
    projects,
    organizationNames: new Set(organizations.map((e) => e.name).filter((n): n is string => n !== undefined)),
    projectNames: new Set(projects.map((e) => e.name).filter((n): n is string => n !== undefined)),
    projectByName,
    branchingDisabled: new Set(projects.filter((p) => p.spec.branching_disabled === true && p.name).map((p) => p.name!)),
    domainOwners: new Map(),
    lookups: new FileSystemLookups(),
  };
}

/** An organization slug is adopted once. */
function checkOrganization(org: CheckedEntry, check: FleetCheck): void {
  const slug = str(org.spec.slug);
  check.claim('org-slug', slug, org, '/spec/slug', (first) => `organization slug \`${slug}\` is adopted twice: also by ${where(first, '/spec/slug')}`);
}

/** A project's organization exists, its ref is adopted once, and its API name is unique in its organization. */
function checkProject(project: CheckedEntry, check: FleetCheck): void {
  const organization = str(project.spec.organization);
  if (organization !== undefined && !check.organizationNames.has(organization)) {
    check.error(project, '/spec/organization', `unknown organization \`${organization}\`: no Organization document has this name`, didYouMean(organization, check.organizationNames));
  }
  const ref = str(project.spec.ref);
  check.claim('project-ref', ref, project, '/spec/ref', (first) => `project ref \`${ref}\` is adopted twice: also by ${where(first, '/spec/ref')}`);
  const apiName = str(project.spec.name) ?? project.name;
  if (organization !== undefined && apiName !== undefined && !check.duplicates.has(project)) {
    check.claim('project-name', `${organization}\u0000${apiName}`, project, str(project.spec.name) ? '/spec/name' : '/metadata/name', (first) =>
      `two projects named \`${apiName}\` in organization \`${organization}\`: also ${where(first, '/metadata/name')}`,
    );
  }
}

/** A project-scoped document names a Project that exists; returns the name it gives. */
function checkProjectReference(entry: CheckedEntry, check: FleetCheck): string | undefined {
  const project = str(entry.spec.project);
  if (project !== undefined && !check.projectNames.has(project)) {
    check.error(entry, '/spec/project', `unknown project \`${project}\`: no Project document has this name`, didYouMean(project, check.projectNames));
  }
  return project;
}

type KindCheck = (entry: CheckedEntry, project: string | undefined, check: FleetCheck) => void;

/** The checks of each project-scoped kind, after its project reference. */
const KIND_CHECKS: Partial<Record<ManifestKind, KindCheck>> = {
  Secrets: checkSecrets,
  Function: checkFunction,
  Branch: checkBranch,
  Migrations: checkMigrations,
  Rollout: checkRolloutDocument,
  SsoProvider: checkSsoProvider,
};

/** One Secrets document per project. */
function checkSecrets(entry: CheckedEntry, project: string | undefined, check: FleetCheck): void {
  check.claim('secrets', project, entry, '/spec/project', (first) => `a second Secrets document for project \`${project}\`: the first is at ${where(first, '/metadata/name')} (one document holds a project's whole set)`);
}

/** A branch name once per project, and no branch in a project without branching. */
function checkBranch(entry: CheckedEntry, project: string | undefined, check: FleetCheck): void {
  const branchName = str(entry.spec.branch_name) ?? entry.name;
  if (project !== undefined && branchName !== undefined && !check.duplicates.has(entry)) {
    check.claim('branch-name', `${project}\u0000${branchName}`, entry, str(entry.spec.branch_name) ? '/spec/branch_name' : '/metadata/name', (first) => `two branches named \`${branchName}\` in project \`${project}\`: also ${where(first, '/metadata/name')}`);
  }
  if (project !== undefined && check.branchingDisabled.has(project)) {
    check.error(entry, '/spec/project', `project \`${project}\` sets branching_disabled: true, so it can have no branches`);
  }
}

/** Exactly one of a project or a selector, and a selector's organization exists. */
function checkMigrations(entry: CheckedEntry, project: string | undefined, check: FleetCheck): void {
  const selector = entry.spec.selector as { organization?: unknown } | undefined;
  if ((project === undefined) === (selector === undefined)) {
    check.error(entry, '/spec', 'give exactly one of `project` (one project) or `selector` (every project it matches)');
  }
  const organization = str(selector?.organization);
  if (organization !== undefined && !check.organizationNames.has(organization)) {
    check.error(entry, '/spec/selector/organization', `unknown organization \`${organization}\`: no Organization document has this name`, didYouMean(organization, check.organizationNames));
  }
}

/** One Rollout per shard with a shard map (each naming its `spec.shard`), else one for the whole fleet; then its waves and windows. */
function checkRolloutDocument(entry: CheckedEntry, _project: string | undefined, check: FleetCheck): void {
  check.claim('rollout', str(entry.spec.shard) ?? '', entry, '/metadata/name', (first) => `a second Rollout document${str(entry.spec.shard) ? ` for shard \`${str(entry.spec.shard)}\`` : ''}: the first is at ${where(first, '/metadata/name')} (one Rollout orders the whole fleet, or one each shard)`);
  if (entry.valid) checkRollout(entry, check.error);
}

/** One metadata source, a project that allows SAML, and each domain claimed once per project. */
function checkSsoProvider(entry: CheckedEntry, project: string | undefined, check: FleetCheck): void {
  // Not in the schema: strict ajv refuses `oneOf: [{required}]` without the properties.
  const sources = ['metadata_url', 'metadata_xml'].filter((field) => entry.spec[field] !== undefined);
  if (sources.length !== 1) {
    check.error(entry, sources.length ? `/spec/${sources[1]}` : '/spec', `set exactly one of \`metadata_url\` or \`metadata_xml\`${sources.length ? ', not both' : ''}`);
  }
  const owner = check.projectByName.get(project);
  const ownerAuth = owner?.spec.auth as Record<string, unknown> | undefined;
  if (ownerAuth?.saml_enabled === false) {
    check.error(entry, '/spec/project', `project \`${project}\` sets auth.saml_enabled: false, so it can have no SSO provider`);
  }
  const domains = Array.isArray(entry.spec.domains) ? entry.spec.domains : [];
  domains.forEach((domain, index) => {
    if (typeof domain !== 'string' || project === undefined) return;
    const key = `${project}\u0000${domain.toLowerCase()}`;
    const first = check.domainOwners.get(key);
    if (first) {
      check.error(entry, `/spec/domains/${index}`, `SSO domain \`${domain}\` is claimed twice in project \`${project}\`: also at ${where(first.entry, `/spec/domains/${first.index}`)}`);
    } else check.domainOwners.set(key, { entry, index });
  });
}

/** Wave names once each; windows with a cron schedule node-cron reads and a time zone the runtime knows. */
function checkRollout(entry: CheckedEntry, error: ErrorFn): void {
  const waves = Array.isArray(entry.spec.waves) ? (entry.spec.waves as Array<{ name?: unknown }>) : [];
  const names = new Map<unknown, number>();
  waves.forEach((wave, index) => {
    const first = names.get(wave.name);
    if (first !== undefined) error(entry, `/spec/waves/${index}/name`, `two waves named \`${String(wave.name)}\`: also /spec/waves/${first}/name`);
    else names.set(wave.name, index);
    if (wave.name === 'rest' && index !== waves.length - 1) error(entry, `/spec/waves/${index}/name`, 'the name `rest` is the implicit last wave: only the last wave may take it');
  });
  const windows = Array.isArray(entry.spec.windows) ? (entry.spec.windows as Array<{ schedule?: unknown; timeZone?: unknown }>) : [];
  windows.forEach((window, index) => {
    if (typeof window.schedule === 'string') {
      const fields = window.schedule.trim().split(/\s+/).length;
      const detail = cron.validateDetailed(window.schedule);
      // The gate computes windows with croner: a schedule it cannot read is refused as well.
      const computable = fields === 5 && detail.valid ? cronerProblem(window.schedule) : undefined;
      if (fields !== 5 || !detail.valid || computable !== undefined) {
        const why = fields !== 5 ? `five fields expected, got ${fields}` : computable ?? (detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'invalid');
        error(entry, `/spec/windows/${index}/schedule`, `not a cron expression such as \`0 2 * * 6\`: ${why}`);
      }
    }
    if (typeof window.timeZone === 'string') {
      try {
        new Intl.DateTimeFormat('en', { timeZone: window.timeZone });
      } catch {
        error(entry, `/spec/windows/${index}/timeZone`, `unknown time zone \`${window.timeZone}\`: expected an IANA name such as \`Europe/Berlin\` or \`UTC\``);
      }
    }
  });
}

function cronerProblem(schedule: string): string | undefined {
  try {
    new Cron(schedule, { mode: '5-part' });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

type ErrorFn = (entry: CheckedEntry, path: string, message: string, hint?: string) => void;
type ClaimFn = (kind: string, value: string | undefined, entry: CheckedEntry, pointer: string, message: (first: CheckedEntry) => string) => void;

type DirectoryLookup = { real: string } | { problem: 'missing' | 'not-directory' };
type FileLookup = 'file' | 'not-file' | 'missing';

/**
 * File system answers for one check: Function documents of many projects share a source
 * directory, and asking once per directory (not once per document) gives the same answers.
 */
class FileSystemLookups {
  readonly #directories = new Map<string, DirectoryLookup>();
  readonly #files = new Map<string, FileLookup>();

  directory(path: string): DirectoryLookup {
    let found = this.#directories.get(path);
    if (!found) {
      try {
        const real = realpathSync(path);
        found = statSync(real).isDirectory() ? { real } : { problem: 'not-directory' };
      } catch {
        found = { problem: 'missing' };
      }
      this.#directories.set(path, found);
    }
    return found;
  }

  file(path: string): FileLookup {
    let found = this.#files.get(path);
    if (!found) {
      try {
        found = statSync(path).isFile() ? 'file' : 'not-file';
      } catch {
        found = 'missing';
      }
      this.#files.set(path, found);
    }
    return found;
  }
}

/** A valid slug, once per project; a source directory inside the checkout, with its entrypoint and import map. */
function checkFunction(entry: CheckedEntry, project: string | undefined, check: FleetCheck): void {
  const { root, error, lookups } = check;
  const slug = str(entry.spec.slug) ?? entry.name;
  if (!str(entry.spec.slug) && entry.name !== undefined && !FUNCTION_SLUG.test(entry.name)) {
    error(entry, '/metadata/name', `\`${entry.name}\` is not a valid function slug (${FUNCTION_SLUG.source}): set spec.slug or rename`);
  }
  if (project !== undefined && slug !== undefined && !check.duplicates.has(entry)) {
    check.claim('function-slug', `${project}\u0000${slug}`, entry, str(entry.spec.slug) ? '/spec/slug' : '/metadata/name', (first) => `two functions with slug \`${slug}\` in project \`${project}\`: also ${where(first, '/metadata/name')}`);
  }
  const source = str(entry.spec.source);
  if (source === undefined) return;
  const sourceDir = resolve(entry.dir, source);
  if (!inside(root, sourceDir)) {
    error(entry, '/spec/source', `source \`${source}\` lies outside the manifests directory: sources are read from the checkout only`);
    return;
  }
  const directory = lookups.directory(sourceDir);
  if ('problem' in directory) {
    if (directory.problem === 'not-directory') error(entry, '/spec/source', `source \`${source}\` is not a directory`);
    else error(entry, '/spec/source', `source directory \`${source}\` does not exist (relative to ${entry.file})`);
    return;
  }
  const realSource = directory.real;
  if (!inside(root, realSource)) {
    error(entry, '/spec/source', `source \`${source}\` links outside the manifests directory`);
    return;
  }
  for (const field of ['entrypoint', 'import_map'] as const) {
    const file = str(entry.spec[field]);
    if (file === undefined) continue;
    const path = resolve(realSource, file);
    if (!inside(realSource, path) || path === realSource) {
      error(entry, `/spec/${field}`, `${field} \`${file}\` must lie inside the source directory`);
      continue;
    }
    const found = lookups.file(path);
    if (found === 'not-file') error(entry, `/spec/${field}`, `${field} \`${file}\` is not a file`);
    else if (found === 'missing') error(entry, `/spec/${field}`, `${field} \`${file}\` does not exist in the source directory \`${source}\``);
  }
}
