import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ContinuousResync, planFreshness } from '../../src/daemon/resync-scheduler.js';
import { ManualClock } from '../../src/util/clock.js';

describe('planFreshness', () => {
  it('states the floor as the reads of a full cycle over the spare rate', () => {
    // 40 projects x 3 reads + 40 project lists, at 48 spare requests a minute.
    const plan = planFreshness({ fleet: 40, drifted: 0, readsPerProject: 3, spareRate: 48 / 60_000, minSpacingMs: 5_000 });
    expect(plan).toEqual({ sliceSize: 1, sweepReads: 160, boundMs: 200_000 });
  });

  it('never plans a slice faster than its minimum spacing, and the cycle covers every check (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 0, max: 50 }), fc.double({ min: 1, max: 30, noNaN: true }), fc.double({ min: 1e-4, max: 1, noNaN: true }), (fleet, drifted, reads, spareRate) => {
        const plan = planFreshness({ fleet, drifted, readsPerProject: reads, spareRate, minSpacingMs: 5_000 });
        const checks = fleet + Math.min(drifted, fleet);
        expect(plan.sliceSize).toBeGreaterThanOrEqual(1);
        expect(plan.sliceSize).toBeLessThanOrEqual(checks);
        if (plan.sliceSize < checks) expect((plan.sliceSize * reads + 1) / spareRate).toBeGreaterThanOrEqual(5_000 * (1 - 1e-9));
        expect(plan.boundMs).toBeCloseTo(plan.sweepReads / spareRate, 6);
      }),
      { numRuns: 300 },
    );
  });
});

describe('planFreshness with the time a re-check pass takes', () => {
  it('adds the duration of a pass to the floor, and stretches the cycle when a pass outlasts its share of the budget', () => {
    // 40 projects x 3 reads at 48 spare requests a minute: slices of 1 project, paced 5 s each.
    const base = { fleet: 40, drifted: 0, readsPerProject: 3, spareRate: 48 / 60_000, minSpacingMs: 5_000 };
    expect(planFreshness({ ...base, sliceMs: 0 }).boundMs).toBe(200_000);
    // A pass of 2 s: its observations count from its end, 2 s after the cycle.
    expect(planFreshness({ ...base, sliceMs: 2_000 }).boundMs).toBeCloseTo(202_000, 6);
    // A pass of 7 s outlasts its 5 s pace: each of the 40 slices adds 2 s to the cycle.
    expect(planFreshness({ ...base, sliceMs: 7_000 }).boundMs).toBeCloseTo(200_000 + 7_000 + 40 * 2_000, 6);
  });

  it('states a bound that covers the passes measured so far', async () => {
    const clock = new ManualClock();
    const plans: number[] = [];
    const resync: ContinuousResync = new ContinuousResync({
      clock,
      projects: () => ['a', 'b', 'c', 'd'],
      runSlice: async (slice, signal) => {
        // Each pass takes 1.5 s of the clock before it records its observations.
        try {
          await clock.sleep(1_500, signal);
        } catch {
          return; // stopped
        }
        resync.observed(slice, clock.now());
      },
      budget: () => ({ limit: 60, windowMs: 60_000 }),
      readsPerProject: () => 1,
      driftShare: 1,
      minSpacingMs: 3_000,
      onPlan: (plan) => plans.push(plan.boundMs),
    });
    resync.start();
    await clock.advance(10_000);
    await resync.stop();
    // 4 projects + 2 lists at 1 a second: 6 s; then 6 s plus the 1.5 s pass.
    expect(plans[0]).toBe(6_000);
    expect(plans.slice(1).every((bound) => bound === 7_500)).toBe(true);
    expect(plans.length).toBeGreaterThan(1);
  });
});

describe('the stated bound and the intervals a fleet is re-checked at', () => {
  it('spreads the checks evenly over the slices, so no project waits longer than the stated bound (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 2, max: 20 }), async (fleetSize, spacingSeconds) => {
        const clock = new ManualClock();
        const projects = Array.from({ length: fleetSize }, (_, i) => `p${i}`);
        const seen = new Map<string, number[]>();
        let bound = 0;
        const resync: ContinuousResync = new ContinuousResync({
          clock,
          projects: () => projects,
          runSlice: async (slice) => {
            for (const project of slice) seen.set(project, [...(seen.get(project) ?? []), clock.now()]);
            resync.observed(slice, clock.now());
          },
          budget: () => ({ limit: 60, windowMs: 60_000 }),
          readsPerProject: () => 1,
          driftShare: 1,
          minSpacingMs: spacingSeconds * 1_000,
          onPlan: (plan) => (bound = plan.boundMs),
        });
        resync.start();
        await clock.advance(4 * (fleetSize + 1) * 1_000 + 4 * spacingSeconds * 1_000);
        await resync.stop();
        for (const times of seen.values()) {
          for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(bound);
        }
      }),
      { seed: 20261128, numRuns: 60 },
    );
  });
});

describe('the stated bound while ages catch up with a shorter cycle', () => {
  it('states the age each project reaches by its turn, until the fleet is on the new cycle', async () => {
    const clock = new ManualClock();
    const plans: number[] = [];
    const resync: ContinuousResync = new ContinuousResync({
      clock,
      projects: () => ['a', 'b', 'c', 'd'],
      runSlice: async (slice) => resync.observed(slice, clock.now()),
      // 1 spare request a second, 1 read per project: slices of 2 projects every 3 s, a 6 s cycle.
      budget: () => ({ limit: 60, windowMs: 60_000 }),
      readsPerProject: () => 1,
      driftShare: 1,
      minSpacingMs: 3_000,
      onPlan: (plan) => plans.push(plan.boundMs),
    });
    // Observed 100 s ago (a longer cycle, or writes that held the re-checks back).
    resync.observed(['a', 'b', 'c', 'd'], clock.now() - 100_000);
    resync.start();
    await clock.advance(9_000);
    await resync.stop();
    // c and d wait for the second slice: 100 s + 3 s; once every project is on the cycle, 6 s.
    expect(plans.slice(0, 3)).toEqual([103_000, 103_000, 6_000]);
  });
});

describe('ContinuousResync', () => {
  function schedule(clock: ManualClock, projects: string[], checked: Array<{ at: number; projects: string[] }>) {
    const resync: ContinuousResync = new ContinuousResync({
      clock,
      projects: () => projects,
      runSlice: async (slice) => {
        checked.push({ at: clock.now(), projects: slice });
        resync.observed(slice, clock.now());
      },
      // 1 spare request a second, 1 read per project (+1 list): a slice of 2 projects each 3 s.
      budget: () => ({ limit: 60, windowMs: 60_000 }),
      readsPerProject: () => 1,
      driftShare: 1,
      minSpacingMs: 3_000,
    });
    return resync;
  }

  it('re-checks oldest observation first, one slice per its cost in spare requests', async () => {
    const clock = new ManualClock();
    const checked: Array<{ at: number; projects: string[] }> = [];
    const resync = schedule(clock, ['a', 'b', 'c', 'd'], checked);
    const t0 = clock.now();
    resync.observed(['a'], t0 - 1_000);
    resync.observed(['b'], t0 - 4_000);
    resync.observed(['c', 'd'], t0 - 2_000);
    resync.start();
    await clock.advance(8_999);
    await resync.stop();
    expect(checked.map((c) => ({ at: c.at - t0, projects: c.projects }))).toEqual([
      { at: 0, projects: ['b', 'c'] },
      { at: 3_000, projects: ['d', 'a'] },
      { at: 6_000, projects: ['b', 'c'] },
    ]);
    // 4 projects + 2 lists at 1 request a second.
    expect(resync.plan()!.boundMs).toBe(6_000);
  });

  it('checks a project whose last observation found drift sooner, and counts the extra check in the bound', async () => {
    const clock = new ManualClock();
    const checked: Array<{ at: number; projects: string[] }> = [];
    const resync = schedule(clock, ['a', 'b', 'c', 'd'], checked);
    const t0 = clock.now();
    resync.observed(['a', 'b', 'c'], t0 - 2_000);
    resync.observed(['d'], t0 - 1_000, new Set(['d']));
    resync.start();
    await clock.advance(1);
    await resync.stop();
    expect(checked[0]!.projects).toContain('d');
    // 5 checks + 3 lists.
    expect(resync.plan()!.boundMs).toBe(8_000);
  });

  it('paces re-checks at the drift share of the budget; writes are not taken off it (the daemon adds their delay to the bound)', () => {
    const clock = new ManualClock();
    const resync = schedule(clock, ['a'], []);
    expect(resync.spareRate(clock.now())).toBeCloseTo(60 / 60_000, 12);
    const shared = new ContinuousResync({ clock, projects: () => ['a'], runSlice: async () => undefined, budget: () => ({ limit: 60, windowMs: 60_000 }), readsPerProject: () => 2, driftShare: 0.8 });
    expect(shared.spareRate(clock.now())).toBeCloseTo(48 / 60_000, 12);
  });
});
