// Every fast-check property in the suite draws from the run's seed: a fresh one per run, chosen
// and printed by test/vitest.config.ts and passed as FC_SEED (set FC_SEED=N to replay a run; a
// failing property prints its seed and path too). Run alone, without the config, a file draws
// its own and prints it.
import fc from 'fast-check';

function runSeed(): number {
  const given = process.env.FC_SEED;
  if (given !== undefined && /^-?\d+$/.test(given)) return Number(given);
  const drawn = Math.floor(Math.random() * 2 ** 31);
  process.env.FC_SEED = String(drawn);
  process.stdout.write(`fast-check seed ${drawn} (replay with FC_SEED=${drawn})\n`);
  return drawn;
}

export const FAST_CHECK_SEED = runSeed();

fc.configureGlobal({ seed: FAST_CHECK_SEED });
