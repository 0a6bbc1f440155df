import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';

export interface SourceWatcher {
  /** Events seen so far (the loader compares it before and after reading). */
  eventCount(): number;
  close(): Promise<void>;
}

interface SourceWatcherOptions {
  /** The manifests path as given: a directory, or a link git-sync swaps to a new worktree. */
  path: string;
  onEvent(reason: { path: string; event: string }): void;
  log: Logger;
  clock: Clock;
  /** Directories whose changes are not the source's (the state directory, when it lies inside the tree). */
  ignore?: string[];
  /**
   * Also re-resolve the link this often, ms (0: never). File events can be missed across an
   * atomic link swap on some file systems; one realpath is cheap and never misses.
   */
  resolveEveryMs?: number;
}

function isDotPath(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel.split(sep).some((part) => part.startsWith('.'));
}

function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Watches a checkout: the tree it resolves to (for edits in place), and the link's parent
 * directory, depth 0, for the swap of the link itself. When the link moves, the tree watcher
 * follows it to the new worktree.
 */
export async function watchSource(options: SourceWatcherOptions): Promise<SourceWatcher> {
  const { path, log, clock } = options;
  let events = 0;
  let closed = false;
  let resolved = await realpath(path).catch(() => undefined);
  let tree: FSWatcher | undefined;
  // Compared with real paths: the tree watcher sees the resolved worktree.
  const ignored = await Promise.all((options.ignore ?? []).map((dir) => realpath(dir).catch(() => dir)));

  const emit = (event: string, changed: string) => {
    if (closed) return;
    events += 1;
    options.onEvent({ path: changed, event });
  };

  const watchTree = async (root: string | undefined) => {
    const previous = tree;
    tree = undefined;
    await previous?.close();
    if (!root || closed) return;
    const next = watch(root, {
      ignoreInitial: true,
      followSymlinks: false,
      ignored: (candidate: string) => isDotPath(root, candidate) || ignored.some((dir) => isInside(dir, candidate)),
    });
    next.on('all', (event, changed) => emit(event, changed));
    next.on('error', (error) => log.warn({ err: error, root }, 'file watcher error'));
    tree = next;
  };

  const checkLink = async () => {
    const now = await realpath(path).catch(() => undefined);
    if (now === resolved) return;
    resolved = now;
    await watchTree(now);
    emit('relink', path);
  };

  const name = basename(path);
  const parent = dirname(path);
  const link = watch(parent, {
    ignoreInitial: true,
    depth: 0,
    followSymlinks: false,
    ignored: (candidate: string) => candidate !== parent && basename(candidate) !== name,
  });
  link.on('all', () => {
    void checkLink();
  });
  link.on('error', (error) => log.warn({ err: error, parent }, 'file watcher error'));

  await watchTree(resolved);

  let cancelPoll: (() => void) | undefined;
  const every = options.resolveEveryMs ?? 5_000;
  const poll = () => {
    if (closed) return;
    void checkLink().finally(() => {
      if (!closed && every > 0) cancelPoll = clock.schedule(poll, every);
    });
  };
  if (every > 0) cancelPoll = clock.schedule(poll, every);

  return {
    eventCount: () => events,
    async close() {
      closed = true;
      cancelPoll?.();
      await Promise.all([link.close(), tree?.close()]);
    },
  };
}
