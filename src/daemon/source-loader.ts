import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import type { ManifestSet } from '../manifests/types.js';
import type { Clock } from '../util/clock.js';

const execFileAsync = promisify(execFile);

export type LoadManifests = (dir: string) => Promise<ManifestSet>;

type SourceLoad =
  | { kind: 'loaded'; set: ManifestSet; resolved: string; revision?: string }
  | { kind: 'vanished'; path: string }
  | { kind: 'unstable'; path: string; attempts: number };

interface StableLoadOptions {
  load: LoadManifests;
  clock: Clock;
  /** Counts file events seen by the watcher; a change while loading means the tree moved under us. */
  eventCount?: () => number;
  /** Wait between attempts when the tree moved, ms. */
  settleMs?: number;
  maxAttempts?: number;
  signal?: AbortSignal;
}

/** A git-sync worktree is named by its commit (full or abbreviated hash). */
const COMMIT_NAME = /^[0-9a-f]{7,64}$/;

/**
 * The commit of a checkout: the git-sync worktree name when the link points at one, else
 * `git rev-parse HEAD` in the resolved directory; undefined when neither applies.
 */
export async function revisionOf(resolved: string): Promise<string | undefined> {
  const name = basename(resolved);
  if (COMMIT_NAME.test(name)) return name;
  try {
    await stat(join(resolved, '.git'));
  } catch {
    return undefined;
  }
  try {
    const { stdout } = await execFileAsync('git', ['-C', resolved, 'rev-parse', 'HEAD'], { timeout: 5_000 });
    const revision = stdout.trim();
    return COMMIT_NAME.test(revision) ? revision : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Loads the manifests from one resolved revision. The link is resolved once and only the
 * resolved directory is read; if the link moved, or the watcher saw events while loading
 * (a tree written in place), the load is thrown away and done again, so a half-written
 * tree is never what a pass uses.
 */
export async function loadStable(path: string, options: StableLoadOptions): Promise<SourceLoad> {
  const maxAttempts = options.maxAttempts ?? 5;
  const settleMs = options.settleMs ?? 500;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    options.signal?.throwIfAborted();
    let resolved: string;
    try {
      resolved = await realpath(path);
    } catch {
      return { kind: 'vanished', path };
    }
    const eventsBefore = options.eventCount?.() ?? 0;
    const set = await options.load(resolved);
    let after: string | undefined;
    try {
      after = await realpath(path);
    } catch {
      after = undefined;
    }
    const moved = after !== resolved || (options.eventCount?.() ?? 0) !== eventsBefore;
    if (!moved) {
      const revision = set.revision ?? (await revisionOf(resolved));
      return { kind: 'loaded', set, resolved, revision };
    }
    if (attempt < maxAttempts) await options.clock.sleep(settleMs, options.signal);
  }
  return { kind: 'unstable', path, attempts: maxAttempts };
}
