// The drift sweep's pacing counts the observed-only reads (`--observe`): with six facts per
// project the slices spread out so that pass reads plus observed reads stay within the drift
// share of the budget.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Daemon, type DaemonPassRequest } from '../../src/daemon/controller.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import type { PassResult } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { passResult, manualTrigger } from './fixtures.js';
import { GitSyncDir, commitId, fakeLoadManifests } from './git-sync.js';

/** 10 requests a minute, 80 % of them for drift: 8 drift reads a minute. */
const BUDGET = { limit: 10, windowMs: 60_000 };
const DRIFT_READS_PER_MS = (BUDGET.limit * 0.8) / BUDGET.windowMs;
/** Requests each fake re-check pass reports per project. */
const PASS_READS = 3;

describe('drift pacing with observed-only reads', () => {
  let dir: GitSyncDir;
  let clock: ManualClock;

  beforeEach(async () => {
    dir = await GitSyncDir.create();
    clock = new ManualClock();
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b', 'c.yaml': 'c' });
    await dir.publish(commitId(1));
  });

  afterEach(async () => {
    await dir.close();
  });

  async function sweep(observeReads: number | undefined): Promise<{ starts: number[]; estimates: number[]; observed: string[] }> {
    const trigger = manualTrigger(60_000);
    const starts: number[] = [];
    const estimates: number[] = [];
    const observed: string[] = [];
    let daemon: Daemon | undefined;
    const runPass = async (request: DaemonPassRequest): Promise<PassResult> => {
      if (request.priority === 'drift') {
        starts.push(clock.now());
        estimates.push(daemon!.readsPerProject());
      }
      const names = request.projects ?? ['a', 'b', 'c'];
      return passResult({
        result: 'success',
        resources: [],
        outcomes: [],
        projects: names.map((name) => ({ name, ref: `${name}`.repeat(20), status: 'ACTIVE_HEALTHY' })),
        requests: PASS_READS * names.length,
      });
    };
    daemon = new Daemon({
      manifestsPath: dir.link,
      runPass,
      ...(observeReads === undefined
        ? {}
        : {
            observe: async (projects) => {
              observed.push(...projects.map((p) => p.name));
              return projects;
            },
            observeReadsPerProject: observeReads,
          }),
      loadManifests: fakeLoadManifests,
      metrics: createMetrics(undefined, { clock, processMetrics: false }),
      log: silentLogger,
      clock,
      trigger,
      budget: () => BUDGET,
      settleMs: 10,
      minSliceSpacingMs: 1_000,
    });
    await daemon.start();
    await daemon.idle();
    trigger.tick();
    let done = false;
    void daemon.idle().finally(() => (done = true));
    while (!done) await clock.advance(500);
    await daemon.stop(1_000);
    return { starts, estimates, observed };
  }

  it('plans each project at its measured pass reads plus one read per observed fact', async () => {
    const { starts, estimates, observed } = await sweep(6);
    expect(observed).toEqual(['a', 'b', 'c']);
    // Before any measurement: the default 8 reads of a pass, plus the six observed reads.
    expect(estimates[0]).toBe(8 + 6);
    // After each slice the pass estimate moves towards the measured 3; the observed six stay.
    expect(estimates[1]).toBeCloseTo(0.7 * 8 + 0.3 * PASS_READS + 6, 9);
    expect(estimates[2]).toBeCloseTo(0.7 * (0.7 * 8 + 0.3 * PASS_READS) + 0.3 * PASS_READS + 6, 9);
    // One project per slice: its planned reads (and the slice's project list) never run faster
    // than the drift share of the budget.
    for (let i = 1; i < starts.length; i++) {
      const planned = estimates[i - 1]! + 1;
      const gap = starts[i]! - starts[i - 1]!;
      expect(gap).toBeGreaterThanOrEqual(planned / DRIFT_READS_PER_MS);
      // …and not needlessly slower (the manual clock moves in 500 ms steps).
      expect(gap).toBeLessThan(planned / DRIFT_READS_PER_MS + 1_000);
    }
    // 112.5 s between the first two slices with the observed reads counted, against the 67.5 s
    // the pass reads alone would give: the six extra reads are what slows the sweep.
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(112_500);
  });

  it('without observed-only reads (--observe none) the pacing counts the pass alone', async () => {
    const { starts, estimates, observed } = await sweep(undefined);
    expect(observed).toEqual([]);
    expect(estimates[0]).toBe(8);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(67_500);
    expect(starts[1]! - starts[0]!).toBeLessThan(112_500);
  });

  it('rejects a cost that is not a whole number of requests', () => {
    expect(
      () =>
        new Daemon({
          manifestsPath: dir.link,
          runPass: async () => passResult(),
          observe: async (projects) => projects,
          observeReadsPerProject: 1.5,
          loadManifests: fakeLoadManifests,
          metrics: createMetrics(undefined, { processMetrics: false }),
          log: silentLogger,
          clock,
          trigger: manualTrigger(60_000),
          budget: () => BUDGET,
        }),
    ).toThrow('Expected `observeReadsPerProject` to be a non-negative integer, got `1.5`');
  });
});
