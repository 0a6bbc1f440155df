import { describe, expect, it } from 'vitest';
import { fullFleetPass } from '../../src/bench/full-fleet.js';

describe('bench scenario 11: the full fleet through the built command', () => {
  it('applies full projects from empty, then a no-change pass, each reporting its own CPU time and peak memory', async () => {
    // A small fleet: this checks the scenario, not its figures (the no-change pass exits 2 on any change).
    const figures = await fullFleetPass({ projects: 3, runs: 1 });
    expect(figures).toMatchObject({ projects: 3, files: 13, goals: { noChangeCpuSeconds: 5, noChangePeakRssMb: 200, applyPeakRssMb: 400 } });
    expect(figures.noChange.runs).toHaveLength(1);
    for (const usage of [figures.apply, ...figures.noChange.runs]) {
      expect(usage.cpuSeconds).toBeGreaterThan(0);
      expect(usage.peakRssMb).toBeGreaterThan(0);
    }
  }, 120_000);
});
