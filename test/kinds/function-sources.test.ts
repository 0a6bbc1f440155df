import { describe, expect, it, beforeEach, afterEach } from 'vitest';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  collectFunctionSources,
  FunctionSourceError,
  FunctionSourceTooLargeError,
  sourcesDigest,
} from '../../src/reconcile/kinds/function-sources.js';
import { buildDeployForm, parseFunctionBody } from '../../src/reconcile/kinds/function-deploy.js';
import { sha256Hex } from '../../src/reconcile/kinds/common.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fn-src-'));
  await mkdir(join(dir, 'hello', 'lib'), { recursive: true });
  await writeFile(join(dir, 'hello', 'index.ts'), 'import { x } from "./lib/x.ts";\nDeno.serve(() => new Response(x));\n');
  await writeFile(join(dir, 'hello', 'lib', 'x.ts'), 'export const x = "hi";\n');
  await writeFile(join(dir, 'hello', 'import_map.json'), '{"imports":{}}');
  await writeFile(join(dir, 'hello', '.env'), 'SHOULD_NOT_UPLOAD=1');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const base = () => ({ functionName: 'hello', baseDir: dir, source: 'hello', entrypoint: 'index.ts' });

describe('collectFunctionSources', () => {
  it('lists every file under the source directory by relative path, dot-files excluded', async () => {
    const sources = await collectFunctionSources({ ...base(), importMap: 'import_map.json' });
    expect(sources.files.map((f) => f.path)).toEqual(['import_map.json', 'index.ts', 'lib/x.ts']);
    expect(sources.files.find((f) => f.path === 'lib/x.ts')!.sha256).toBe(sha256Hex('export const x = "hi";\n'));
  });

  it('gives the same digest for the same sources and a different one when a byte changes', async () => {
    const a = await collectFunctionSources(base());
    const b = await collectFunctionSources(base());
    expect(a.digest).toBe(b.digest);
    await writeFile(join(dir, 'hello', 'lib', 'x.ts'), 'export const x = "ho";\n');
    const c = await collectFunctionSources(base());
    expect(c.digest).not.toBe(a.digest);
  });

  it('digest does not depend on file order', () => {
    const files = [{ path: 'a', sha256: '1' }, { path: 'b', sha256: '2' }];
    expect(sourcesDigest(files)).toBe(sourcesDigest([...files].reverse()));
  });

  it('refuses a missing entrypoint or import map, naming the function and the file', async () => {
    await expect(collectFunctionSources({ ...base(), entrypoint: 'main.ts' })).rejects.toThrow('Function `hello`: entrypoint `main.ts` not found in `hello`');
    await expect(collectFunctionSources({ ...base(), importMap: 'deno.json' })).rejects.toThrow('import map `deno.json` not found');
  });

  it('refuses paths that leave the source directory', async () => {
    await expect(collectFunctionSources({ ...base(), entrypoint: '../index.ts' })).rejects.toBeInstanceOf(FunctionSourceError);
    await expect(collectFunctionSources({ ...base(), staticPatterns: ['../../etc/*'] })).rejects.toBeInstanceOf(FunctionSourceError);
  });

  it('refuses a symbolic link that points outside the source directory', async () => {
    await writeFile(join(dir, 'outside.txt'), 'secret');
    await symlink(join(dir, 'outside.txt'), join(dir, 'hello', 'link.txt'));
    await expect(collectFunctionSources(base())).rejects.toThrow('`link.txt` is a symbolic link that leaves the source directory');
  });

  it('refuses sources over the cap, naming the function and the file that crosses it', async () => {
    await writeFile(join(dir, 'hello', 'big.bin'), Buffer.alloc(3000));
    const error = await collectFunctionSources({ ...base(), maxBytes: 2048 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FunctionSourceTooLargeError);
    expect((error as FunctionSourceTooLargeError).message).toBe('Function `hello`: sources exceed the limit of 2 KiB per function at file `big.bin`');
    expect((error as FunctionSourceTooLargeError).file).toBe('big.bin');
  });

  it('a missing source directory is a located error, not a crash', async () => {
    await expect(collectFunctionSources({ ...base(), source: 'nope' })).rejects.toThrow('Function `hello`: source directory `nope` cannot be read (ENOENT)');
  });
});

describe('deploy form and function body', () => {
  it('round-trips: the files parsed back from the multipart form give the same digest', async () => {
    const sources = await collectFunctionSources(base());
    const form = await buildDeployForm(sources, { entrypoint_path: 'index.ts', verify_jwt: false, name: 'hello' });
    const response = new Response(form);
    const contentType = response.headers.get('content-type')!;
    const bytes = new Uint8Array(await response.arrayBuffer());
    const parsed = await parseFunctionBody({ contentType, bytes });
    expect(parsed!.metadata).toEqual({ entrypoint_path: 'index.ts', verify_jwt: false, name: 'hello' });
    expect(parsed!.files.map((f) => f.path).sort()).toEqual(['import_map.json', 'index.ts', 'lib/x.ts']);
    expect(sourcesDigest(parsed!.files)).toBe(sources.digest);
  });

  it('an opaque bundle gives no file list (nothing to compare)', async () => {
    expect(await parseFunctionBody({ contentType: 'application/octet-stream', bytes: new Uint8Array([1, 2]) })).toBeUndefined();
  });
});
