import { describe, expect, it } from 'vitest';
import { benchBudget } from '../../src/bench/budget.js';

describe('benchBudget', () => {
  it('reports the figures of a run against the emulator, with the budget kept', async () => {
    const figures = await benchBudget({ scale: 60, windows: 2 });
    expect(figures).toMatchObject({ requestsSent: 100, failedCalls: 0, rateLimited: 0, windowMs: 1000, budget: 50 });
    expect(figures.maxWindowOverBudget).toBeLessThanOrEqual(1);
    expect(figures.budgetUsedWhileWaiting).toBeGreaterThan(0);
    expect(figures.budgetUsedWhileWaiting).toBeLessThanOrEqual(1);
  });

  it('refuses a nonsensical scale', async () => {
    await expect(benchBudget({ scale: 0 })).rejects.toThrow('Expected `scale` to be a finite number > 0, got `0` (number)');
  });
});
