// The stated freshness bound through a revision's write pass, on a scaled clock: the real
// daemon, engine and client against the emulator over loopback HTTP, with the budget's effect
// on the passes' timing modelled on the daemon's clock (src/bench/freshness.ts). The write
// pass's requests go ahead of re-check reads, so observation ages grow while it runs; the bound
// the daemon states must grow with them.
import { describe, expect, it } from 'vitest';
import { freshnessThroughWrites } from '../../src/bench/freshness.js';

describe('the stated bound accounts for the writes in flight (--resync continuous)', () => {
  it('keeps reconciler_observation_age_max_seconds within 1.10 x reconciler_observation_age_bound_seconds through a write pass', async () => {
    const figures = await freshnessThroughWrites({ projects: 32, changed: 16, budget: { limit: 60, windowMs: 60_000 }, cycles: 1 });
    expect(figures.samples).toBeGreaterThan(100);
    // The revision wrote to half the fleet: a third of a minute's budget and more.
    expect(figures.writeRequests).toBeGreaterThanOrEqual(3 * figures.changed);
    // The write pass did delay re-checks: ages grew well past the bound stated before it...
    expect(figures.largestAgeSeconds).toBeGreaterThan(1.3 * figures.boundBeforeSeconds);
    // ...and the stated bound grew with them.
    expect(figures.boundLargestSeconds).toBeGreaterThan(figures.boundBeforeSeconds);
    expect(figures.ratioBefore).toBeLessThanOrEqual(1.1);
    expect(figures.ratioThrough).toBeLessThanOrEqual(1.1);
  }, 120_000);
});
