import { describe, expect, it } from 'vitest';
import { WriteLedger } from '../../src/daemon/write-ledger.js';

describe('WriteLedger', () => {
  it('counts a write pass from its start (estimated) until a cycle after its end (counted)', () => {
    const ledger = new WriteLedger();
    const rate = 0.8 / 1000; // 48 re-check reads a minute
    const id = ledger.start(0, 57);
    expect(ledger.pendingRequests(10_000, 60_000, rate)).toBe(57);
    ledger.finish(id, 40_000, 49);
    // 49 requests delay the cycle by 61.25 s: the pass counts until 40 + 60 + 61.25 s.
    expect(ledger.pendingRequests(100_000, 60_000, rate)).toBe(49);
    expect(ledger.nextExpiry(60_000, rate)).toBeCloseTo(161_250, 6);
    expect(ledger.pendingRequests(161_250, 60_000, rate)).toBe(0);
  });

  it('adds passes in flight together and keeps the estimate of a pass whose count is unknown', () => {
    const ledger = new WriteLedger();
    const a = ledger.start(0, 10);
    ledger.start(1_000, 20);
    expect(ledger.pendingRequests(2_000, 60_000, 1 / 1000)).toBe(30);
    ledger.finish(a, 3_000);
    expect(ledger.pendingRequests(4_000, 60_000, 1 / 1000)).toBe(30);
    expect(ledger.pendingRequests(3_000 + 60_000 + 10_000, 60_000, 1 / 1000)).toBe(20);
  });
});
