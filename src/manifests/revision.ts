// The commit a manifest tree was read from: git-sync publishes each commit as a worktree
// directory named by its hash (behind a symlink it swaps atomically), otherwise HEAD as git
// would answer it: read from the repository's files where they are plain, else by git itself.
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

const COMMIT_IN_NAME = /(?:^|[^0-9a-f])([0-9a-f]{40}|[0-9a-f]{64})(?:[^0-9a-f]|$)/;
const COMMIT = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

/** The commit named by a directory of the resolved path (deepest first), if any. */
export function revisionFromPath(resolvedPath: string): string | undefined {
  const parts = resolvedPath.split(sep).filter(Boolean).reverse();
  for (const part of parts) {
    const match = COMMIT_IN_NAME.exec(part);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * `git rev-parse HEAD` in the directory; undefined when it is not a checkout or git is absent.
 * `node:child_process` is loaded here, when git is needed, not by every process at its start.
 */
async function gitHead(dir: string, timeoutMs = 5000): Promise<string | undefined> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolvePromise) => {
    execFile('git', ['rev-parse', 'HEAD'], { cwd: dir, timeout: timeoutMs, windowsHide: true }, (error, stdout) => {
      const head = String(stdout ?? '').trim();
      resolvePromise(!error && COMMIT.test(head) ? head : undefined);
    });
  });
}

/** A text file's content, or undefined when it cannot be read. */
async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The git directory git would find from `dir` (a `.git` directory, or a `.git` file naming one,
 * as in a linked worktree), searching upwards; `none` when there is none up to the root.
 */
async function findGitDir(dir: string): Promise<string | 'none' | undefined> {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const candidate = join(current, '.git');
    const found = await stat(candidate).catch(() => undefined);
    if (found?.isDirectory()) {
      // git refuses a repository another user owns (safe.directory): let git itself decide.
      if (typeof process.getuid === 'function' && found.uid !== process.getuid()) return undefined;
      return candidate;
    }
    if (found?.isFile()) {
      const pointer = /^gitdir: (.+)$/m.exec((await readText(candidate)) ?? '');
      if (!pointer) return undefined;
      const target = pointer[1]!.trim();
      return isAbsolute(target) ? target : resolve(current, target);
    }
    if (found) return undefined;
    if (dirname(current) === current) return 'none';
  }
}

/**
 * HEAD's commit read from the repository's files: a detached HEAD, or a branch whose loose ref
 * file holds a commit. Undefined for anything else (a packed or reftable ref, an unusual
 * layout, git's environment variables in effect): `git rev-parse HEAD` answers those, so the
 * answer is the same as git's, without starting a process in the usual case.
 */
async function headFromFiles(dir: string): Promise<{ head: string | undefined } | undefined> {
  if (Object.keys(process.env).some((name) => name.startsWith('GIT_'))) return undefined;
  if (resolve(dir).split(sep).includes('.git')) return undefined;
  const gitDir = await findGitDir(dir);
  if (gitDir === 'none') return { head: undefined };
  if (gitDir === undefined) return undefined;
  const head = (await readText(join(gitDir, 'HEAD')))?.trim();
  if (head === undefined) return undefined;
  if (COMMIT.test(head)) return { head };
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
  if (!ref || ref.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) return undefined;
  // A linked worktree keeps its branches in the common directory.
  const common = (await readText(join(gitDir, 'commondir')))?.trim();
  const refDirs = [gitDir, ...(common ? [isAbsolute(common) ? common : resolve(gitDir, common)] : [])];
  for (const refDir of refDirs) {
    const value = (await readText(join(refDir, ref)))?.trim();
    if (value !== undefined) return COMMIT.test(value) ? { head: value } : undefined;
  }
  return undefined;
}

export async function revisionOf(resolvedRoot: string): Promise<string | undefined> {
  const named = revisionFromPath(resolvedRoot);
  if (named) return named;
  const read = await headFromFiles(resolvedRoot).catch(() => undefined);
  return read ? read.head : await gitHead(resolvedRoot);
}
