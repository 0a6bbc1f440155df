import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectFunctionSources, SourceHashCache, sourceDirectories } from '../../src/reconcile/kinds/function-sources.js';
import { sha256Hex } from '../../src/reconcile/kinds/common.js';
import { ManualClock } from '../../src/util/clock.js';

let dir: string;
const INDEX = 'import { x } from "./lib/x.ts";\nDeno.serve(() => new Response(x));\n';
const LIB = 'export const x = "hi";\n';
const AN_HOUR_AGO = new Date(Date.now() - 3_600_000);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fn-cache-'));
  await mkdir(join(dir, 'shared', 'lib'), { recursive: true });
  await writeFile(join(dir, 'shared', 'index.ts'), INDEX);
  await writeFile(join(dir, 'shared', 'lib', 'x.ts'), LIB);
  // Old modification times: any later write gives the file a different mtime.
  await utimes(join(dir, 'shared', 'index.ts'), AN_HOUR_AGO, AN_HOUR_AGO);
  await utimes(join(dir, 'shared', 'lib', 'x.ts'), AN_HOUR_AGO, AN_HOUR_AGO);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A cache whose clock is an hour ahead: every file on disk has settled. */
const settledCache = (options: { maxEntries?: number } = {}) => new SourceHashCache({ ...options, clock: new ManualClock(Date.now() + 3_600_000) });
const fn = (functionName: string, cache: SourceHashCache) => ({ functionName, baseDir: dir, source: 'shared', entrypoint: 'index.ts', cache });

describe('SourceHashCache', () => {
  it('reads each file of a source directory shared by two Function documents once', async () => {
    const cache = settledCache();
    const a = await collectFunctionSources(fn('alpha', cache));
    expect(cache.stats).toMatchObject({ hashed: 2, reused: 0 });
    const b = await collectFunctionSources(fn('beta', cache));
    expect(cache.stats).toMatchObject({ hashed: 2, reused: 2 });
    expect(b.digest).toBe(a.digest);
    expect(b.files.map((f) => [f.path, f.sha256])).toEqual([
      ['index.ts', sha256Hex(INDEX)],
      ['lib/x.ts', sha256Hex(LIB)],
    ]);
  });

  it('shares one walk and one read between documents planned at the same time', async () => {
    const cache = settledCache();
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => collectFunctionSources(fn(name, cache))));
    expect(cache.stats).toMatchObject({ hashed: 2, reused: 4 });
    expect(cache.stats.walked + cache.stats.walksShared).toBe(3);
    expect(new Set([a!.digest, b!.digest, c!.digest]).size).toBe(1);
  });

  it('a walk is shared only while it is under way: a later call walks again', async () => {
    const cache = new SourceHashCache();
    let finish!: (files: { files: [] }) => void;
    let walks = 0;
    const walk = () => {
      walks++;
      return new Promise<{ files: [] }>((resolve) => (finish = resolve));
    };
    const first = cache.listing('/src/fn', walk);
    const second = cache.listing('/src/fn', walk);
    const other = cache.listing('/src/other', () => Promise.resolve({ files: [] }));
    finish({ files: [] });
    expect(await second).toBe(await first);
    await other;
    expect(walks).toBe(1);
    expect(cache.stats).toMatchObject({ walked: 2, walksShared: 1 });
    const later = cache.listing('/src/fn', walk);
    finish({ files: [] });
    await later;
    expect(walks).toBe(2);
  });

  it('a link leaving the directory is refused for every function sharing it, each by its own name', async () => {
    const cache = settledCache();
    await writeFile(join(dir, 'outside.txt'), 'secret');
    await symlink(join(dir, 'outside.txt'), join(dir, 'shared', 'link.txt'));
    const results = await Promise.allSettled(['alpha', 'beta'].map((name) => collectFunctionSources(fn(name, cache))));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'resolved'))).toEqual([
      'Function `alpha`: `link.txt` is a symbolic link that leaves the source directory',
      'Function `beta`: `link.txt` is a symbolic link that leaves the source directory',
    ]);
  });

  it('a caller sharing a read that fails reads for itself (the failure names the other function)', async () => {
    const cache = new SourceHashCache({ clock: new ManualClock(Date.now() + 3_600_000) });
    const stamp = { dev: 1n, ino: 2n, size: 3n, mtimeNs: 0n, ctimeNs: 0n };
    const file = { path: 'index.ts', absolute: '/src/fn/index.ts', size: 3, stamp };
    let fail!: (error: Error) => void;
    const first = cache.digest(file, () => new Promise<string>((_, reject) => (fail = reject)));
    const second = cache.digest(file, async () => 'digest-read-by-second');
    fail(new Error('Function `alpha`: grew while read'));
    await expect(first).rejects.toThrow('Function `alpha`');
    await expect(second).resolves.toBe('digest-read-by-second');
    expect(cache.stats).toMatchObject({ hashed: 1, reused: 1 });
  });

  it('a changed file changes the digest in the next pass, even at the same size', async () => {
    const cache = settledCache();
    const before = await collectFunctionSources(fn('alpha', cache));
    await writeFile(join(dir, 'shared', 'lib', 'x.ts'), 'export const x = "ho";\n');
    const after = await collectFunctionSources(fn('alpha', cache));
    expect(after.digest).not.toBe(before.digest);
    expect(after.files.find((f) => f.path === 'lib/x.ts')!.sha256).toBe(sha256Hex('export const x = "ho";\n'));
    expect(cache.stats).toMatchObject({ hashed: 3, reused: 1 });
  });

  it('a file replaced by another (new inode, same size and times) is read again', async () => {
    const cache = settledCache();
    await collectFunctionSources(fn('alpha', cache));
    const replacement = join(dir, 'replacement.ts');
    await writeFile(replacement, 'export const x = "ho";\n');
    await utimes(replacement, AN_HOUR_AGO, AN_HOUR_AGO);
    await rm(join(dir, 'shared', 'lib', 'x.ts'));
    await rename(replacement, join(dir, 'shared', 'lib', 'x.ts'));
    const after = await collectFunctionSources(fn('alpha', cache));
    expect(after.files.find((f) => f.path === 'lib/x.ts')!.sha256).toBe(sha256Hex('export const x = "ho";\n'));
  });

  it('never reuses the digest of a file changed just before it was read (timestamps are coarse)', async () => {
    const clock = new ManualClock(Date.now());
    const cache = new SourceHashCache({ clock });
    await collectFunctionSources(fn('alpha', cache));
    await collectFunctionSources(fn('alpha', cache));
    // Both files changed (their ctime) within the settle time of each read: read every time.
    expect(cache.stats).toMatchObject({ hashed: 4, reused: 0 });
    await clock.advance(3_600_000);
    await collectFunctionSources(fn('alpha', cache));
    // Read again: the digests kept were taken while the files were fresh.
    expect(cache.stats).toMatchObject({ hashed: 6, reused: 0 });
    await collectFunctionSources(fn('alpha', cache));
    expect(cache.stats).toMatchObject({ hashed: 6, reused: 2 });
  });

  it('keeps at most maxEntries digests, dropping the least recently used', async () => {
    const cache = settledCache({ maxEntries: 1 });
    await collectFunctionSources(fn('alpha', cache));
    expect(cache.size).toBe(1);
    await collectFunctionSources(fn('alpha', cache));
    expect(cache.stats.reused).toBe(0);
  });

  it('validates its options', () => {
    expect(() => new SourceHashCache({ maxEntries: 0 })).toThrow('Expected `maxEntries` to be a positive integer, got `0` (number)');
    expect(() => new SourceHashCache({ settleMs: -1 })).toThrow('Expected `settleMs` to be a non-negative integer, got `-1` (number)');
  });

  it("a plan's documents that share a source directory list it once; a call without the plan's memo (a deploy's re-read) lists it again and sees what changed", async () => {
    const cache = settledCache();
    const directories = sourceDirectories();
    const planned = [];
    for (const name of ['alpha', 'beta', 'gamma']) planned.push(await collectFunctionSources({ ...fn(name, cache), directories }));
    expect(cache.stats.walked).toBe(1);
    expect(new Set(planned.map((sources) => sources.digest)).size).toBe(1);
    // Each document still gets its own checkout, which records the files it was handed.
    expect([...planned[2]!.checkout.inputs().keys()]).toEqual(['index.ts', 'lib/x.ts']);
    await writeFile(join(dir, 'shared', 'lib', 'y.ts'), LIB);
    const again = await collectFunctionSources(fn('alpha', cache));
    expect(cache.stats.walked).toBe(2);
    expect(again.files.map((f) => f.path)).toEqual(['index.ts', 'lib/x.ts', 'lib/y.ts']);
    expect(again.digest).not.toBe(planned[0]!.digest);
  });

  it("a source directory that cannot be used is named in each document's own error, from the plan's memo too", async () => {
    const cache = settledCache();
    const directories = sourceDirectories();
    const missing = (functionName: string) => ({ ...fn(functionName, cache), source: 'gone', directories });
    await expect(collectFunctionSources(missing('alpha'))).rejects.toThrow('Function `alpha`: source directory `gone` cannot be read (ENOENT)');
    await expect(collectFunctionSources(missing('beta'))).rejects.toThrow('Function `beta`: source directory `gone` cannot be read (ENOENT)');
    await writeFile(join(dir, 'plain'), 'not a directory');
    await expect(collectFunctionSources({ ...missing('gamma'), source: 'plain' })).rejects.toThrow('Function `gamma`: source `plain` is not a directory');
  });
});
