import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from '../../src/util/clock.js';
import { DriftSweep, planSweepPacing } from '../../src/daemon/drift-sweep.js';
import type { CronTrigger } from '../../src/daemon/cron-trigger.js';
import { validateSchedule, nodeCronTrigger } from '../../src/daemon/cron-trigger.js';

/** A cron trigger the test ticks by hand. */
function manualTrigger(intervalMs: number): CronTrigger & { tick(): void; started: boolean } {
  let onTick: (() => void) | undefined;
  return {
    started: false,
    start(fn) {
      onTick = fn;
      this.started = true;
    },
    stop() {
      onTick = undefined;
    },
    intervalMs: () => intervalMs,
    tick() {
      onTick?.();
    },
  };
}

describe('planSweepPacing', () => {
  it('spreads a fleet that fits the budget evenly over the interval', () => {
    const pacing = planSweepPacing({ fleet: 10, intervalMs: 600_000, readsPerProject: 8, budget: { limit: 50, windowMs: 60_000 }, driftShare: 0.8, minSpacingMs: 5_000 });
    expect(pacing).toEqual({ sliceSize: 1, spacingMs: 60_000, overBudget: false });
  });

  it('slows to the budget when the fleet needs more reads than one interval allows', () => {
    // 1000 projects x 8 reads = 8000 reads; 10 minutes of 40 drift reads/min = 400.
    const pacing = planSweepPacing({ fleet: 1000, intervalMs: 600_000, readsPerProject: 8, budget: { limit: 50, windowMs: 60_000 }, driftShare: 0.8, minSpacingMs: 5_000 });
    expect(pacing.overBudget).toBe(true);
    expect(pacing.sliceSize).toBe(9);
    // 73 reads per slice at 40 reads per minute.
    expect(pacing.spacingMs).toBeCloseTo((73 / 40) * 60_000, 6);
  });

  it('never plans drift reads faster than the drift share of the budget (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1_000, max: 86_400_000 }),
        fc.double({ min: 1, max: 50, noNaN: true }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1_000, max: 3_600_000 }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        (fleet, intervalMs, readsPerProject, limit, windowMs, driftShare) => {
          const p = planSweepPacing({ fleet, intervalMs, readsPerProject, budget: { limit, windowMs }, driftShare, minSpacingMs: 5_000 });
          const readsPerSlice = p.sliceSize * readsPerProject + 1;
          // Rate of drift reads: one slice per spacing.
          expect(readsPerSlice / p.spacingMs).toBeLessThanOrEqual(((limit * driftShare) / windowMs) * (1 + 1e-9));
          expect(p.sliceSize).toBeGreaterThanOrEqual(1);
          // Spread, not a burst: a fleet that fits takes the whole interval.
          if (!p.overBudget) expect(p.spacingMs * Math.ceil(fleet / p.sliceSize)).toBeGreaterThanOrEqual(intervalMs * (1 - 1e-9));
        },
      ),
    );
  });
});

describe('DriftSweep', () => {
  it('re-checks every project once per tick, one slice per spacing, at the clock pace', async () => {
    const clock = new ManualClock();
    const trigger = manualTrigger(60_000);
    const slices: Array<{ at: number; projects: string[] }> = [];
    const start = clock.now();
    const sweep = new DriftSweep({
      clock,
      trigger,
      projects: () => ['a', 'b', 'c', 'd'],
      runSlice: async (projects) => {
        slices.push({ at: clock.now() - start, projects });
      },
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      readsPerProject: () => 5,
      minSpacingMs: 1_000,
    });
    sweep.start();
    expect(trigger.started).toBe(true);
    trigger.tick();
    await clock.advance(60_000);
    await sweep.idle();
    expect(slices).toEqual([
      { at: 0, projects: ['a'] },
      { at: 15_000, projects: ['b'] },
      { at: 30_000, projects: ['c'] },
      { at: 45_000, projects: ['d'] },
    ]);
  });

  it('holds the budget pace across ticks: a fleet too large for the interval takes longer, never faster', async () => {
    const clock = new ManualClock();
    const trigger = manualTrigger(10_000);
    const checked: Array<{ at: number; projects: string[] }> = [];
    const start = clock.now();
    const sweep = new DriftSweep({
      clock,
      trigger,
      projects: () => ['a', 'b', 'c'],
      runSlice: async (projects) => {
        checked.push({ at: clock.now() - start, projects });
      },
      // 2 drift reads per minute: a slice of 3 projects (4 reads) every 2 minutes at most.
      budget: () => ({ limit: 2, windowMs: 60_000 }),
      readsPerProject: () => 1,
      driftShare: 1,
      minSpacingMs: 10_000,
    });
    sweep.start();
    trigger.tick();
    await clock.advance(10_000);
    trigger.tick();
    expect(sweep.due()).toEqual(['a', 'b', 'c']);
    await clock.advance(109_999);
    expect(checked).toEqual([{ at: 0, projects: ['a', 'b', 'c'] }]);
    await clock.advance(1);
    expect(checked).toEqual([
      { at: 0, projects: ['a', 'b', 'c'] },
      { at: 120_000, projects: ['a', 'b', 'c'] },
    ]);
    await sweep.stop();
  });

  it('stop ends the sweep: no slice runs after it', async () => {
    const clock = new ManualClock();
    const trigger = manualTrigger(60_000);
    const checked: string[] = [];
    const sweep = new DriftSweep({
      clock,
      trigger,
      projects: () => ['a', 'b', 'c'],
      runSlice: async (projects) => {
        checked.push(...projects);
      },
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      readsPerProject: () => 1,
      minSpacingMs: 1_000,
    });
    sweep.start();
    trigger.tick();
    await clock.advance(1);
    await sweep.stop();
    await clock.advance(120_000);
    trigger.tick();
    expect(checked).toEqual(['a']);
    expect(sweep.due()).toEqual([]);
  });
});

describe('cron schedule', () => {
  it('rejects an invalid --resync with a message naming the option', () => {
    expect(() => validateSchedule('every ten minutes')).toThrow(/^Expected --resync to be a cron expression such as `\*\/10 \* \* \* \*`, got `every ten minutes`/);
  });

  it('derives the interval from the schedule', () => {
    expect(nodeCronTrigger('*/10 * * * *').intervalMs()).toBe(600_000);
    expect(nodeCronTrigger('*/15 * * * * *').intervalMs()).toBe(15_000);
  });
});
