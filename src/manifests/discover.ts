// Finds the manifest files of a tree: every *.yaml / *.yml, skipping dot-files and
// dot-directories (.git, .github, ...) and whatever `.reconcileignore` at the root lists.
import { readFileSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { MAX_FILES } from './limits.js';

export const IGNORE_FILE = '.reconcileignore';

const MANIFEST_FILE = /\.ya?ml$/i;

/** gitignore-like patterns: `dir/` (a directory anywhere), `/dir/x.yaml` (anchored), `*` within a name, `**` across directories. */
export function parseIgnoreFile(text: string): RegExp[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const directory = line.endsWith('/');
      let pattern = line.replace(/\/+$/, '');
      const anchored = pattern.startsWith('/') || pattern.includes('/');
      pattern = pattern.replace(/^\//, '');
      const body = pattern
        .split('/')
        .map((segment) =>
          segment === '**'
            ? '.*'
            : segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*').replaceAll('?', '[^/]'),
        )
        .join('/');
      return new RegExp(`${anchored ? '^' : '(^|/)'}${body}${directory ? '/' : '(/|$)'}`);
    });
}

function ignored(relativePath: string, isDirectory: boolean, patterns: RegExp[]): boolean {
  const subject = isDirectory ? `${relativePath}/` : relativePath;
  return patterns.some((pattern) => pattern.test(subject));
}

export interface Discovered {
  files: string[];
  /** Problems with the tree itself (too many files). */
  problems: string[];
}

/** Manifest files below `root` (already resolved), as sorted paths relative to it with `/` separators. */
export async function discoverManifestFiles(root: string): Promise<Discovered> {
  let patterns: RegExp[] = [];
  try {
    patterns = parseIgnoreFile(readFileSync(join(root, IGNORE_FILE), 'utf8'));
  } catch {
    // No ignore file: nothing is ignored beyond dot-files.
  }
  const files: string[] = [];
  const problems: string[] = [];
  const visited = new Set<string>([root]);
  const pending: string[] = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // vanished or unreadable mid-walk: the files that remain are still read
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      const rel = relative(root, full).split(sep).join('/');
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        // Follow a link only inside the tree: a checkout must not pull in files from elsewhere.
        try {
          const target = await realpath(full);
          if (target !== root && !target.startsWith(root + sep)) continue;
          const info = await stat(target);
          isDirectory = info.isDirectory();
          isFile = info.isFile();
          if (isDirectory) {
            if (visited.has(target)) continue;
            visited.add(target);
          }
        } catch {
          continue;
        }
      }
      if (ignored(rel, isDirectory, patterns)) continue;
      if (isDirectory) pending.push(full);
      else if (isFile && MANIFEST_FILE.test(entry.name)) {
        if (files.length >= MAX_FILES) {
          problems.push(`more than ${MAX_FILES} manifest files: the rest are not read`);
          return { files: files.sort(), problems };
        }
        files.push(rel);
      }
    }
  }
  return { files: files.sort(), problems };
}
