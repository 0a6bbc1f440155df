import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The source revision of this build: RECONCILE_BUILD_REVISION, which an image sets from its
 * build argument; `unknown` when it is not set (a checkout run with node).
 */
export function buildRevision(env: NodeJS.ProcessEnv): string {
  return env.RECONCILE_BUILD_REVISION || 'unknown';
}
