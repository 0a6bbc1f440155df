import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(new URL('../../src', import.meta.url).pathname);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module a file imports or re-exports, resolved to a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(SRC, resolve(dirname(file), specifier)));
}

describe('layering of src/api', () => {
  it('src/api imports nothing from src/cli', () => {
    const offending = sourceFiles(join(SRC, 'api')).flatMap((file) =>
      importsOf(file).filter((target) => target.startsWith('cli/')).map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('no runtime module imports the generator (src/api/generate)', () => {
    const runtime = sourceFiles(SRC).filter((file) => !relative(SRC, file).startsWith('api/generate/'));
    const offending = runtime.flatMap((file) =>
      importsOf(file).filter((target) => target.startsWith('api/generate/')).map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('finds imports at all (the scan is not vacuous)', () => {
    expect(importsOf(join(SRC, 'api', 'client.ts'))).toContain('api/endpoints.js');
  });
});
