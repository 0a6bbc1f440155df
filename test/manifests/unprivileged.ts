// Cases that need a file or directory the reader cannot open. Root reads everything, so as root
// (CI's containers) they run in a child process with the permissions of the unprivileged user
// `nobody`, over the built modules (dist/): the behaviour is checked either way, never passed
// silently.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const IS_ROOT = process.getuid?.() === 0;
const DIST = resolve(new URL('../../dist', import.meta.url).pathname);
export const DIST_BUILT = existsSync(join(DIST, 'reconcile', 'load-manifests.js'));
const NOBODY = 65_534;

/**
 * Runs `body` (an async function body, given `dist` as the built modules' directory) in a Node
 * process as `nobody`, and returns what it returns (as JSON). `readable` directories are opened
 * to it first (read and enter), their content left as it is.
 */
export function runAsNobody<T>(body: string, readable: string[]): T {
  for (const dir of readable) chmodSync(dir, 0o755);
  const script = `const dist = ${JSON.stringify(DIST)}; const result = await (async () => { ${body} })(); process.stdout.write(JSON.stringify(result));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { uid: NOBODY, gid: NOBODY, encoding: 'utf8', cwd: '/' });
  if (child.status !== 0) throw new Error(`the unprivileged child failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as T;
}
