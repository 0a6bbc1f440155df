import { describe, expect, it } from 'vitest';
import { FLEET_KEY, ProjectLocks } from '../../src/daemon/project-locks.js';

describe('ProjectLocks', () => {
  it('lets passes over different projects overlap and serializes passes over the same one', async () => {
    const locks = new ProjectLocks();
    const releaseA = await locks.acquire(['a']);
    const releaseB = locks.tryAcquire(['b']);
    expect(releaseB).toBeDefined();
    expect(locks.tryAcquire(['a', 'c'])).toBeUndefined();
    let second = false;
    const waiting = locks.acquire(['a']).then((release) => {
      second = true;
      return release;
    });
    await Promise.resolve();
    expect(second).toBe(false);
    releaseA();
    const release = await waiting;
    expect(second).toBe(true);
    release();
    releaseB!();
    expect(locks.held()).toEqual([]);
  });

  it('a fleet pass waits for every project pass and blocks new ones', async () => {
    const locks = new ProjectLocks();
    const releaseA = locks.tryAcquire(['a'])!;
    let fleetStarted = false;
    const fleet = locks.acquire([FLEET_KEY, 'a', 'b']).then((release) => {
      fleetStarted = true;
      return release;
    });
    await Promise.resolve();
    expect(fleetStarted).toBe(false);
    releaseA();
    const releaseFleet = await fleet;
    expect(locks.tryAcquire(['b'])).toBeUndefined();
    releaseFleet();
    expect(locks.tryAcquire(['b'])).toBeDefined();
  });

  it('an aborted wait rejects and takes nothing', async () => {
    const locks = new ProjectLocks();
    const release = locks.tryAcquire(['a'])!;
    const controller = new AbortController();
    const waiting = locks.acquire(['a', 'b'], controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    release();
    expect(locks.held()).toEqual([]);
  });
});
