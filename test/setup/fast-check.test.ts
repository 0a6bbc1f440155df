// The suite's properties are repeatable: the setup file fixes fast-check's seed for all of them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAST_CHECK_SEED } from './fast-check.js';

describe('fast-check global configuration', () => {
  it('runs every property from the fixed seed', () => {
    expect(fc.readConfigureGlobal().seed).toBe(FAST_CHECK_SEED);
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
