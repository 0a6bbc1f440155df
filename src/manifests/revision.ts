// The commit a manifest tree was read from: git-sync publishes each commit as a worktree
// directory named by its hash (behind a symlink it swaps atomically), otherwise ask git.
import { execFile } from 'node:child_process';
import { sep } from 'node:path';

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

/** `git rev-parse HEAD` in the directory; undefined when it is not a checkout or git is absent. */
function gitHead(dir: string, timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    execFile('git', ['rev-parse', 'HEAD'], { cwd: dir, timeout: timeoutMs, windowsHide: true }, (error, stdout) => {
      const head = String(stdout ?? '').trim();
      resolvePromise(!error && COMMIT.test(head) ? head : undefined);
    });
  });
}

export async function revisionOf(resolvedRoot: string): Promise<string | undefined> {
  return revisionFromPath(resolvedRoot) ?? (await gitHead(resolvedRoot));
}
