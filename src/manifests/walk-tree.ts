// The one directory walker: manifest discovery, function sources and the daemon's tree
// fingerprint all list a checkout through it, so they agree on what a tree holds. A tree that
// cannot be read whole is an error, never a smaller tree: a skipped directory would read as
// "these manifests were removed", and projects under `deletion: delete` would go with it.
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { join, sep } from 'node:path';

type TreeWalkProblem = 'unreadable' | 'vanished' | 'dangling-link' | 'outside-link' | 'link-loop';

/** Part of the tree could not be listed: the listing would be incomplete. */
export class TreeWalkError extends Error {
  override readonly name = 'TreeWalkError';
  /** Path relative to the walked root, `/`-separated (`.` for the root itself). */
  readonly path: string;
  readonly problem: TreeWalkProblem;
  constructor(path: string, problem: TreeWalkProblem, detail: string) {
    super(`\`${path}\` ${detail}`);
    this.path = path;
    this.problem = problem;
  }
}

/** A file found by a walk that asked for no status of each file (`statFiles: false`). */
export interface ListedFile {
  /** Path relative to the root, `/`-separated. */
  path: string;
  /** Absolute path (the link's target for a followed symbolic link). */
  absolute: string;
}

interface WalkedFile extends ListedFile {
  /** The file's own status (its target's, for a link): type, size and identity. */
  stats: BigIntStats;
}

export interface WalkOptions {
  /**
   * Whether to leave an entry out (a directory is then not entered). `isDirectory` is
   * undefined for a link whose target cannot be found: it is asked before the link counts
   * as an error, so an ignored broken link stays ignored.
   */
  ignore?: (path: string, isDirectory: boolean | undefined) => boolean;
  /** Called with each directory (relative path, `''` for the root) before its entries are looked at. */
  enterDirectory?: (path: string, absolute: string) => void;
  /** Only files accepted here are returned and counted (default: every non-directory). */
  accept?: (path: string) => boolean;
  /** Stop after this many accepted files; the result then says `truncated`. */
  maxFiles?: number;
  /**
   * False: an entry that is not a symbolic link is taken for what its directory entry says it
   * is, and files come without a status of their own (one system call less per file, for a
   * caller that needs only the paths). A symbolic link is followed and checked all the same.
   */
  statFiles?: boolean;
}

export interface WalkResult<File = WalkedFile> {
  /** Accepted entries that are not directories (regular files and others: check `stats`), sorted by path. */
  files: File[];
  truncated: boolean;
}

function describe(error: unknown): { problem: TreeWalkProblem; detail: string } {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: 'vanished', detail: 'vanished while the tree was read' };
  return { problem: 'unreadable', detail: `cannot be read (${code})` };
}

function inside(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Every entry below `root` (an absolute, already resolved directory), dot-files and
 * dot-directories left out. Symbolic links are followed while their target stays inside the
 * root; a link back to a directory being walked is left out (it would loop). Throws
 * TreeWalkError, naming the path, for an unreadable or vanished entry, a link whose target
 * does not exist, and a link that leaves the root, unless `ignore` leaves it out first.
 */
export function walkTree(root: string, options: WalkOptions & { statFiles: false }): Promise<WalkResult<ListedFile>>;
export function walkTree(root: string, options?: WalkOptions): Promise<WalkResult>;
export async function walkTree(root: string, options: WalkOptions = {}): Promise<WalkResult<ListedFile | WalkedFile>> {
  const files: Array<ListedFile | WalkedFile> = [];
  const statFiles = options.statFiles ?? true;
  const maxFiles = options.maxFiles ?? Number.POSITIVE_INFINITY;
  const ignored = options.ignore ?? (() => false);
  const accept = options.accept ?? (() => true);
  const ancestors = new Set<string>();

  const walk = async (dir: string, prefix: string): Promise<boolean> => {
    ancestors.add(dir);
    options.enterDirectory?.(prefix, dir);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      const { problem, detail } = describe(error);
      throw new TreeWalkError(prefix || '.', problem, detail);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      let target = join(dir, entry.name);
      let info: BigIntStats | undefined;
      try {
        if (entry.isSymbolicLink()) {
          let followed: BigIntStats;
          try {
            followed = await stat(target, { bigint: true });
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (ignored(rel, undefined)) continue;
            if (code === 'ELOOP') throw new TreeWalkError(rel, 'link-loop', 'is a symbolic link that loops');
            if (code === 'ENOENT' || code === 'ENOTDIR') {
              // The link itself may be what vanished: say which.
              const still = await lstat(target).then(() => true, () => false);
              throw still ? new TreeWalkError(rel, 'dangling-link', 'is a symbolic link whose target does not exist') : new TreeWalkError(rel, 'vanished', 'vanished while the tree was read');
            }
            throw error;
          }
          if (ignored(rel, followed.isDirectory())) continue;
          target = await realpath(target);
          if (!inside(root, target)) throw new TreeWalkError(rel, 'outside-link', 'is a symbolic link that leaves the directory');
          info = followed;
        } else {
          if (ignored(rel, entry.isDirectory())) continue;
          if (statFiles || entry.isDirectory()) info = await lstat(target, { bigint: true });
        }
      } catch (error) {
        if (error instanceof TreeWalkError) throw error;
        const { problem, detail } = describe(error);
        throw new TreeWalkError(rel, problem, detail);
      }
      if (info?.isDirectory()) {
        if (ancestors.has(target)) continue;
        if (!(await walk(target, rel))) return false;
        continue;
      }
      if (!accept(rel)) continue;
      if (files.length >= maxFiles) return false;
      files.push(info && statFiles ? { path: rel, absolute: target, stats: info } : { path: rel, absolute: target });
    }
    ancestors.delete(dir);
    return true;
  };

  const complete = await walk(root, '');
  return { files, truncated: !complete };
}
