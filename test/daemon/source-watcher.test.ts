import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchSource, type SourceWatcher } from '../../src/daemon/source-watcher.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { GitSyncDir, commitId } from './git-sync.js';

describe('watchSource', () => {
  let dir: GitSyncDir | undefined;
  let watcher: SourceWatcher | undefined;

  afterEach(async () => {
    await watcher?.close();
    await dir?.close();
    watcher = undefined;
    dir = undefined;
  });

  it('sees a git-sync link swap, then follows the new worktree for edits in place', async () => {
    dir = await GitSyncDir.create();
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.worktree(commitId(2), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    const events: Array<{ path: string; event: string }> = [];
    watcher = await watchSource({ path: dir.link, onEvent: (e) => events.push(e), log: silentLogger, clock: systemClock, resolveEveryMs: 0 });
    // chokidar reports ready asynchronously; an edit proves the tree watch is live before the swap.
    await vi.waitFor(async () => {
      await writeFile(join(dir!.root, '.worktrees', commitId(1), 'a.yaml'), `a ${Date.now()}`);
      expect(events.length).toBeGreaterThan(0);
    }, { timeout: 20_000, interval: 200 });
    events.length = 0;
    await dir.publish(commitId(2), { removePrevious: commitId(1) });
    await vi.waitFor(() => expect(events.some((e) => e.event === 'relink')).toBe(true), { timeout: 20_000, interval: 50 });
    events.length = 0;
    await vi.waitFor(async () => {
      await writeFile(join(dir!.root, '.worktrees', commitId(2), 'c.yaml'), `c ${Date.now()}`);
      expect(events.some((e) => e.path.includes(commitId(2)))).toBe(true);
    }, { timeout: 20_000, interval: 200 });
    expect(watcher.eventCount()).toBeGreaterThan(0);
  });

  it('ignores dot-directories such as .git, and the state directory inside the tree', async () => {
    dir = await GitSyncDir.create();
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    await mkdir(join(dir.root, '.worktrees', commitId(1), '.git'));
    await mkdir(join(dir.root, '.worktrees', commitId(1), 'state'));
    const events: Array<{ path: string; event: string }> = [];
    watcher = await watchSource({
      path: dir.link,
      onEvent: (e) => events.push(e),
      log: silentLogger,
      clock: systemClock,
      resolveEveryMs: 0,
      ignore: [join(dir.link, 'state')],
    });
    await vi.waitFor(async () => {
      await writeFile(join(dir!.root, '.worktrees', commitId(1), '.git', 'index'), `x ${Date.now()}`);
      await writeFile(join(dir!.root, '.worktrees', commitId(1), 'state', 'request-window.json'), `x ${Date.now()}`);
      await writeFile(join(dir!.root, '.worktrees', commitId(1), 'a.yaml'), `a ${Date.now()}`);
      expect(events.some((e) => e.path.endsWith('a.yaml'))).toBe(true);
    }, { timeout: 20_000, interval: 200 });
    expect(events.filter((e) => e.path.includes('.git') || e.path.includes('state'))).toEqual([]);
  });
});
