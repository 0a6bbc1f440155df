// The same fleet through full passes of the engine (the bench scenario `npm run bench` prints).
import { describe, expect, it } from 'vitest';
import { benchFleetKinds } from '../../src/bench/fleet-kinds.js';

describe('benchFleetKinds (full engine passes, 3 projects x 20 functions x 30 secrets)', () => {
  it('a no-change pass costs exactly its lower bound; one changed function causes one deploy and no other write', async () => {
    const figures = await benchFleetKinds();
    expect(figures).toMatchObject({
      no_change_requests: 7,
      no_change_lower_bound: 7,
      no_change_function_lists_per_project: 1,
      no_change_secret_lists_per_project: 1,
      no_change_per_function_reads: 0,
      deploys_after_one_change: 1,
      writes_after_one_change: 1,
    });
  });
});
