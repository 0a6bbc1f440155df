import { randomInt } from 'node:crypto';
import { defineConfig } from 'vitest/config';

// Property tests (fast-check) draw a fresh seed on every run, the same for every test file of
// the run; `FC_SEED=N` replays a run (its seed is printed here, and in a property's failure).
const seed = /^-?\d+$/.test(process.env.FC_SEED ?? '') ? Number(process.env.FC_SEED) : randomInt(0, 2 ** 31 - 1);
process.env.FC_SEED = String(seed);
process.stdout.write(`fast-check seed ${seed} (replay this run's properties with FC_SEED=${seed})\n`);

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep the number of workers small so the emulator servers are not starved.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
