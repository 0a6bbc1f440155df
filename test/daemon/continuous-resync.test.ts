// Continuous drift checking against the emulator over real HTTP (real daemon, engine and
// client), on a scaled clock: the budget is the spec's 60 requests a minute on the daemon's
// manual clock, which the scenario moves one second at a time.
import { describe, expect, it } from 'vitest';
import { continuousFreshness } from '../../src/bench/freshness.js';

describe('continuous drift checking (--resync continuous)', () => {
  it('keeps the largest observation age within 1.10 x the stated floor, and finds an out-of-band change within it', async () => {
    const figures = await continuousFreshness({ projects: 32, cycles: 2, budget: { limit: 60, windowMs: 60_000 } });
    expect(figures.samples).toBeGreaterThan(100);
    expect(figures.ratio).toBeGreaterThan(0.9);
    expect(figures.ratio).toBeLessThanOrEqual(1.1);
    expect(figures.detectionSeconds).toBeLessThanOrEqual(1.1 * figures.boundAtChangeSeconds);
  }, 120_000);
});
