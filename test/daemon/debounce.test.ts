import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { debounce } from '../../src/daemon/debounce.js';

describe('debounce', () => {
  it('collapses a burst into one call after the quiet time', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const d = debounce(() => calls++, { clock, quietMs: 1000 });
    for (let i = 0; i < 10; i++) {
      d.trigger();
      await clock.advance(300);
    }
    expect(calls).toBe(0);
    await clock.advance(1000);
    expect(calls).toBe(1);
  });

  it('fires no later than maxWaitMs after the first event of an endless burst', async () => {
    const clock = new ManualClock();
    const firedAt: number[] = [];
    const start = clock.now();
    const d = debounce(() => firedAt.push(clock.now() - start), { clock, quietMs: 1000, maxWaitMs: 5000 });
    for (let i = 0; i < 30; i++) {
      d.trigger();
      await clock.advance(500);
    }
    expect(firedAt[0]).toBe(5000);
    expect(firedAt.length).toBeGreaterThanOrEqual(2);
  });

  it('cancel drops the pending call', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const d = debounce(() => calls++, { clock, quietMs: 100 });
    d.trigger();
    expect(d.pending).toBe(true);
    d.cancel();
    await clock.advance(1000);
    expect(calls).toBe(0);
    expect(d.pending).toBe(false);
  });

  it('validates its options with exact messages', () => {
    const clock = new ManualClock();
    expect(() => debounce(() => 0, { clock, quietMs: -1 })).toThrow('Expected `quietMs` to be a finite number >= 0, got `-1` (number)');
    expect(() => debounce(() => 0, { clock, quietMs: 10, maxWaitMs: 5 })).toThrow('Expected `maxWaitMs` to be a number >= quietMs (10), got `5` (number)');
  });
});
