// The checks of Function documents when a checkout is loaded (the kind's `checks` facet): a valid
// slug, once per project; a source directory inside the checkout, with its entrypoint and
// import map. The sources themselves are read by a pass (function-sources.ts).
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { textOf as str, type CheckedEntry, type CrossCheckContext, type KindCheck } from '../../manifests/load-facets.js';

const FUNCTION_SLUG = /^[A-Za-z][A-Za-z0-9_-]*$/;

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

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

/** The Function documents of a checkout, each checked in document order. */
export const checkFunctions: KindCheck = (entries, check) => {
  const lookups = new FileSystemLookups();
  for (const entry of entries) checkFunction(entry, check, lookups);
};

/** A valid slug, once per project; a source directory inside the checkout, with its entrypoint and import map. */
function checkFunction(entry: CheckedEntry, check: CrossCheckContext, lookups: FileSystemLookups): void {
  const { root, error } = check;
  const project = str(entry.spec.project);
  const slug = str(entry.spec.slug) ?? entry.name;
  if (!str(entry.spec.slug) && entry.name !== undefined && !FUNCTION_SLUG.test(entry.name)) {
    error(entry, '/metadata/name', `\`${entry.name}\` is not a valid function slug (${FUNCTION_SLUG.source}): set spec.slug or rename`);
  }
  if (project !== undefined && slug !== undefined && !check.duplicates.has(entry)) {
    check.claim('function-slug', `${project}\u0000${slug}`, entry, str(entry.spec.slug) ? '/spec/slug' : '/metadata/name', (first) => `two functions with slug \`${slug}\` in project \`${project}\`: also ${check.where(first, '/metadata/name')}`);
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
