// The suite's properties draw from the run's seed (FC_SEED, fresh per run unless given), so a
// run replays exactly with the same FC_SEED.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAST_CHECK_SEED } from './fast-check.js';

describe('fast-check global configuration', () => {
  it('runs every property from the run\'s seed, the one FC_SEED names', () => {
    expect(fc.readConfigureGlobal().seed).toBe(FAST_CHECK_SEED);
    expect(String(FAST_CHECK_SEED)).toBe(process.env.FC_SEED);
  });

  it('draws the same values on every run of a property', () => {
    const draws = (): string[] => {
      const seen: string[] = [];
      fc.assert(fc.property(fc.string(), (value) => {
        seen.push(value);
      }), { numRuns: 20 });
      return seen;
    };
    expect(draws()).toEqual(draws());
  });
});
