// The built command keeps V8's compiled code of its modules in Node's compile cache: under the
// temporary directory unless NODE_COMPILE_CACHE names another, none with
// NODE_DISABLE_COMPILE_CACHE=1, and a directory it cannot write changes nothing it does.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli, type CliRun } from '../e2e/helpers/cli.js';

/** `validate` over the examples: loads the command line, the manifests and the schema validators. */
const validate = (env: NodeJS.ProcessEnv): Promise<CliRun> => runCli(['validate', 'examples'], env);

/** The temporary directories the runs were given, removed once every run has exited. */
const temps: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Every file below `dir` with its bytes and modification time, by path. */
async function snapshot(dir: string): Promise<Map<string, { bytes: string; mtimeMs: number }>> {
  const files = new Map<string, { bytes: string; mtimeMs: number }>();
  if (!existsSync(dir)) return files;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(path, { bytes: (await readFile(path)).toString('base64'), mtimeMs: (await stat(path)).mtimeMs });
  }
  return files;
}

describe('the compile cache of the built command', () => {
  let plain: CliRun;
  beforeAll(async () => {
    assertBuilt();
    plain = await validate({ TMPDIR: await tempDir('reconcile-cc-off-'), NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(plain.code).toBe(0);
  });

  it('is written under the temporary directory by the first run, and a second run reads it instead of writing it again', async () => {
    const temp = await tempDir('reconcile-cc-');
    const first = await validate({ TMPDIR: temp });
    expect(first).toEqual(plain);
    const cache = join(temp, 'node-compile-cache');
    const written = await snapshot(cache);
    // One entry per module compiled: the command's own and its dependencies', dozens at least.
    expect(written.size).toBeGreaterThan(50);
    const second = await validate({ TMPDIR: temp });
    expect(second).toEqual(plain);
    // An entry V8 accepted is kept as it is; one it refused would be written anew at exit.
    expect(await snapshot(cache)).toEqual(written);
  });

  it('goes to NODE_COMPILE_CACHE when that is set, and nowhere with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const temp = await tempDir('reconcile-cc-');
    const chosen = join(temp, 'chosen');
    expect(await validate({ TMPDIR: temp, NODE_COMPILE_CACHE: chosen })).toEqual(plain);
    expect((await snapshot(chosen)).size).toBeGreaterThan(50);
    expect(existsSync(join(temp, 'node-compile-cache'))).toBe(false);

    const off = await tempDir('reconcile-cc-');
    expect(await validate({ TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual(plain);
    expect(await readdir(off)).toEqual([]);
  });

  it('changes nothing the command does when its directory cannot be made', async () => {
    // A path below a regular file can be made by no user, root included.
    const temp = await tempDir('reconcile-cc-');
    const file = join(temp, 'a-file');
    await writeFile(file, 'not a directory\n');
    expect(await validate({ TMPDIR: join(file, 'tmp') })).toEqual(plain);
    expect(await validate({ TMPDIR: temp, NODE_COMPILE_CACHE: join(file, 'cache') })).toEqual(plain);
    expect(await readdir(temp)).toEqual(['a-file']);
  });
});
