import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { maxInAnyWindow } from '../../src/bench/window.js';

describe('maxInAnyWindow', () => {
  it('counts events closer together than the window as one window', () => {
    expect(maxInAnyWindow([0, 10, 20, 999], 1000)).toBe(4);
  });

  it('treats the window as half-open: an event exactly one window later starts a new one', () => {
    expect(maxInAnyWindow([0, 1000, 2000], 1000)).toBe(1);
  });

  it('finds the densest window anywhere, not only at aligned boundaries', () => {
    expect(maxInAnyWindow([0, 900, 950, 1100, 1800], 1000)).toBe(4);
  });

  it('agrees with a brute-force count for arbitrary times', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 2000 }), (times, windowMs) => {
        const brute = times.reduce((best, t) => Math.max(best, times.filter((u) => u >= t && u < t + windowMs).length), 0);
        expect(maxInAnyWindow(times, windowMs)).toBe(brute);
      }),
    );
  });
});
