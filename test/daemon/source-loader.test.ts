import { describe, expect, it } from 'vitest';
import { loadStable, revisionOf } from '../../src/daemon/source-loader.js';
import { ManualClock } from '../../src/util/clock.js';
import { GitSyncDir, commitId, fakeLoadManifests } from './git-sync.js';
import { GitSyncRepo } from './git-repo.js';

async function settle<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  void work.finally(() => (done = true)).catch(() => undefined);
  while (!done) await clock.advance(10);
  return work;
}

describe('loadStable', () => {
  it('reads again when the watcher saw events during the read (a tree written in place)', async () => {
    const dir = await GitSyncDir.create();
    try {
      await dir.worktree(commitId(1), { 'a.yaml': 'a' });
      await dir.publish(commitId(1));
      const clock = new ManualClock();
      let events = 0;
      let loads = 0;
      const result = await settle(
        clock,
        loadStable(dir.link, {
          clock,
          settleMs: 100,
          eventCount: () => events,
          load: async (path) => {
            loads += 1;
            // The first two reads overlap writes.
            if (loads <= 2) events += 1;
            return fakeLoadManifests(path);
          },
        }),
      );
      expect(loads).toBe(3);
      expect(result).toMatchObject({ kind: 'loaded', revision: commitId(1) });
    } finally {
      await dir.close();
    }
  });

  it('gives up after maxAttempts on a tree that never stops moving', async () => {
    const dir = await GitSyncDir.create();
    try {
      await dir.worktree(commitId(1), { 'a.yaml': 'a' });
      await dir.publish(commitId(1));
      const clock = new ManualClock();
      let events = 0;
      const result = await settle(
        clock,
        loadStable(dir.link, { clock, maxAttempts: 3, eventCount: () => events, load: async (p) => (events++, fakeLoadManifests(p)) }),
      );
      expect(result).toEqual({ kind: 'unstable', path: dir.link, attempts: 3 });
    } finally {
      await dir.close();
    }
  });

  it('reports a vanished checkout instead of an empty one', async () => {
    const clock = new ManualClock();
    expect(await loadStable('/nonexistent/reconciler/manifests', { clock, load: fakeLoadManifests })).toEqual({
      kind: 'vanished',
      path: '/nonexistent/reconciler/manifests',
    });
  });
});

describe('revisionOf', () => {
  it('reads the commit from a git checkout with git rev-parse', async () => {
    const repo = await GitSyncRepo.create();
    try {
      const commit = await repo.commit({ 'a.yaml': 'a' }, 'one');
      expect(await revisionOf(repo.repo)).toBe(commit);
      await repo.publish(commit);
      expect(await revisionOf(`${repo.root}/.worktrees/${commit}`)).toBe(commit);
    } finally {
      await repo.close();
    }
  });
});
