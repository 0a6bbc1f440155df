// `--sandbox` with a seed that cannot be used: exit 1 with the seed's file and field named, and
// no temporary state directory left behind, whichever command opened the sandbox.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, expectExit, runCli } from './helpers/cli.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

beforeAll(() => assertBuilt());

async function fresh(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** What is left in a temporary directory besides Node's compile cache of the command's modules (docs/commands.md). */
const leftovers = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((name) => name !== 'node-compile-cache');

describe('--sandbox with a bad --seed', () => {
  it.each([
    ['reconcile', ['examples', '--sandbox']],
    ['export', ['export', '--all', '--sandbox']],
  ])('%s: exits 1 naming the seed and leaves TMPDIR empty', async (_name, args) => {
    const work = await fresh('reconcile-z1-seed-');
    const seed = join(work, 'bad.yaml');
    await writeFile(seed, 'projects:\n  - name: 1\n');
    const temp = await fresh('reconcile-z1-tmpdir-');
    const out = args[0] === 'export' ? ['--out', join(work, 'out')] : [];
    const run = await runCli([...args, ...out, '--seed', seed], { TMPDIR: temp, RECONCILE_STATE_DIR: '' });
    expectExit(run, 1);
    expect(run.stderr).toContain(seed);
    expect(run.stderr).toMatch(/Invalid seed: `projects\.0\.organization` is required/);
    expect(await leftovers(temp)).toEqual([]);
  });

  it('a missing seed file: exits 1 naming it and leaves TMPDIR empty', async () => {
    const temp = await fresh('reconcile-z1-tmpdir-');
    const missing = join(temp, 'nowhere', 'seed.yaml');
    const run = await runCli(['examples', '--sandbox', '--seed', missing], { TMPDIR: temp, RECONCILE_STATE_DIR: '' });
    expectExit(run, 1);
    expect(run.stderr).toContain(missing);
    expect(await leftovers(temp)).toEqual([]);
  });
});
