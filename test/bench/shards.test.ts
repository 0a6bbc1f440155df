import { describe, expect, it } from 'vitest';
import { shardScaling } from '../../src/bench/shards.js';

describe('bench scenario 7: shards', () => {
  it('converges the same fleet with one shard and with three, no 429 answers', async () => {
    // A budget far above what the fleet needs: this checks the scenario, not its figure.
    const figures = await shardScaling(6, 500, 1000, 2);
    expect(figures).toMatchObject({ projects: 6, shards: 3, budget: '500/1s' });
    // Two pairs run in turn; the figure and the runs it shows are those of the median pair.
    expect(figures.ratios).toHaveLength(2);
    expect(figures.ratio).toBe([...figures.ratios].sort((a, b) => a - b)[1]);
    expect(figures.ratio).toBe(Math.round((figures.sharded.seconds / (figures.single.seconds / 3)) * 100) / 100);
    expect(figures.single.perShardSeconds).toHaveLength(1);
    expect(figures.sharded.perShardSeconds).toHaveLength(3);
    expect(figures.single.rateLimited + figures.sharded.rateLimited).toBe(0);
    // Each shard's time is measured from its process's start; the run ends with the last one.
    for (const seconds of figures.sharded.perShardSeconds) expect(seconds).toBeLessThanOrEqual(figures.sharded.seconds);
    // Each process's first request and first write, as its user's at the emulator.
    for (const first of [...figures.single.firstRequest, ...figures.sharded.firstRequest]) {
      expect(first.requestSeconds).toBeGreaterThan(0);
      expect(first.writeSeconds).toBeGreaterThanOrEqual(first.requestSeconds);
    }
    // Both runs did the work (scenario 7 throws when a shard's apply fails or leaves changes).
    expect(figures.single.requests).toBeGreaterThan(6 * 3);
    expect(figures.sharded.requests).toBeGreaterThan(6 * 3);
  }, 150_000);
});
