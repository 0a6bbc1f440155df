// Checks that span documents, for every kind: unique names, projects and organizations that
// exist, organization slugs, project refs and project names adopted once. Then each kind's own
// checks, the `check` facet of its document kind (load-facets.ts).
import { didYouMean } from './suggest.js';
import { textOf as str, type CheckedEntry, type CrossCheckContext, type LoadFacets } from './load-facets.js';
import type { ManifestError } from './types.js';

export type { CheckedEntry } from './load-facets.js';

/**
 * Kinds whose names are unique across the fleet; every other kind belongs to a project
 * (`spec.project`) and its names are unique per project. A Secrets document holds a project's
 * whole set, so its name is the fleet's.
 */
const FLEET_NAMED: ReadonlySet<string> = new Set(['Organization', 'Project', 'Secrets']);

function at(entry: CheckedEntry, pointer: string): { file: string; line: number; column: number } {
  return { file: entry.file, ...entry.locate(pointer) };
}

function where(entry: CheckedEntry, pointer: string): string {
  const { file, line, column } = at(entry, pointer);
  return `${file}:${line}:${column}`;
}

/** The fleet-wide checks, then the check of each document kind in `facets` over its documents. */
export function crossCheck(entries: CheckedEntry[], root: string, facets: LoadFacets): ManifestError[] {
  const errors: ManifestError[] = [];
  const error: ErrorFn = (entry, path, message, hint) => errors.push({ ...at(entry, path), path, message, ...(hint ? { hint } : {}) });
  const duplicates = checkUniqueNames(entries, error);
  const check = openCheck(entries, root, error, duplicates);
  for (const organization of check.organizations) checkOrganization(organization, check);
  for (const project of check.projects) checkProject(project, check);
  const byKind = new Map<string, CheckedEntry[]>();
  for (const entry of entries) {
    if (entry.kind === 'Organization' || entry.kind === 'Project') continue;
    checkProjectReference(entry, check);
    const ofKind = byKind.get(entry.kind);
    if (ofKind) ofKind.push(entry);
    else byKind.set(entry.kind, [entry]);
  }
  for (const [kind, ofKind] of byKind) {
    // A check that throws on a document its schema let through is an error of these documents, never a load that ends unlocated.
    try {
      facets.get(kind)?.check?.(ofKind, check);
    } catch (thrown) {
      error(ofKind[0]!, '', `the checks of the ${kind} documents failed: ${(thrown as Error).message}`);
    }
  }
  return errors;
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
function openCheck(entries: CheckedEntry[], root: string, error: ErrorFn, duplicates: ReadonlySet<CheckedEntry>): CrossCheckContext {
  const organizations = entries.filter((e) => e.kind === 'Organization');
  const projects = entries.filter((e) => e.kind === 'Project');
  const seen = new Map<string, CheckedEntry>();
  const claim: CrossCheckContext['claim'] = (kind, value, entry, pointer, message) => {
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
    where,
    duplicates,
    organizations,
    projects,
    organizationNames: new Set(organizations.map((e) => e.name).filter((n): n is string => n !== undefined)),
    projectNames: new Set(projects.map((e) => e.name).filter((n): n is string => n !== undefined)),
    projectByName,
  };
}

/** An organization slug is adopted once. */
function checkOrganization(org: CheckedEntry, check: CrossCheckContext): void {
  const slug = str(org.spec.slug);
  check.claim('org-slug', slug, org, '/spec/slug', (first) => `organization slug \`${slug}\` is adopted twice: also by ${where(first, '/spec/slug')}`);
}

/** A project's organization exists, its ref is adopted once, and its API name is unique in its organization. */
function checkProject(project: CheckedEntry, check: CrossCheckContext): void {
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

/** A project-scoped document names a Project that exists. */
function checkProjectReference(entry: CheckedEntry, check: CrossCheckContext): void {
  const project = str(entry.spec.project);
  if (project !== undefined && !check.projectNames.has(project)) {
    check.error(entry, '/spec/project', `unknown project \`${project}\`: no Project document has this name`, didYouMean(project, check.projectNames));
  }
}

type ErrorFn = (entry: CheckedEntry, path: string, message: string, hint?: string) => void;
