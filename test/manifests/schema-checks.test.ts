// The checking validators compiled ahead of time (src/manifests/schema-checks.ts) answer as the
// same schemas compiled at run time do, on every document of the examples and the fixtures and
// on variants of each made invalid in several ways.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import * as PRECOMPILED from '../../src/manifests/schema-checks.js';
import { checkingAjv } from '../../src/manifests/schema-checks-gen.js';
import { KIND_SCHEMA_FILES } from '../../src/manifests/schema-source.js';
import { MANIFEST_KINDS } from '../../src/manifests/types.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

function documentsOf(files: readonly string[]): Array<Record<string, unknown>> {
  return files.flatMap((file) => {
    try {
      return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJS() as unknown).filter((doc): doc is Record<string, unknown> => typeof doc === 'object' && doc !== null && typeof (doc as { kind?: unknown }).kind === 'string');
    } catch {
      return [];
    }
  });
}

/** The document, and variants of it made invalid (or not) in several ways. */
function variants(doc: Record<string, unknown>): unknown[] {
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const out: unknown[] = [doc, { ...doc, unknownField: 1 }, { ...doc, metadata: 'x' }, { ...doc, spec: { ...spec, bogus: true } }];
  for (const key of Object.keys(spec)) {
    const { [key]: _dropped, ...rest } = spec;
    out.push({ ...doc, spec: rest });
    out.push({ ...doc, spec: { ...spec, [key]: 12345 } });
    out.push({ ...doc, spec: { ...spec, [key]: 'text' } });
    out.push({ ...doc, spec: { ...spec, [key]: null } });
  }
  return out;
}

describe('the checking validators compiled ahead of time', () => {
  const documents = documentsOf([...yamlFiles(join(REPO, 'examples')), ...yamlFiles(join(REPO, 'test/fixtures'))]);
  const ajv = checkingAjv();

  it('exist for every committed kind', () => {
    expect(Object.keys(PRECOMPILED).sort()).toEqual([...MANIFEST_KINDS].sort());
  });

  for (const kind of MANIFEST_KINDS) {
    it(`${kind}: the same answer as the schema compiled now, on every variant of every document`, () => {
      const compiled = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', KIND_SCHEMA_FILES[kind]), 'utf8')) as object);
      const precompiled = (PRECOMPILED as unknown as Record<string, (data: unknown) => boolean>)[kind]!;
      const ofKind = documents.filter((doc) => doc.kind === kind);
      const cases = [...ofKind, ...documents.slice(0, 20).map((doc) => ({ ...doc, kind }))].flatMap(variants);
      expect(cases.length).toBeGreaterThan(10);
      let valid = 0;
      for (const data of cases) {
        const expected = compiled(data);
        expect(precompiled(data), JSON.stringify(data).slice(0, 200)).toBe(expected);
        if (expected) valid += 1;
      }
      // Both answers occur, for the kinds the examples have.
      if (ofKind.length > 0) expect(valid).toBeGreaterThan(0);
    });
  }

  it('let a checkout of valid documents load without loading ajv (the built command)', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { loadManifests } = await import(${JSON.stringify(join(REPO, 'dist/reconcile/load-manifests.js'))});
      const loaded = await loadManifests(${JSON.stringify(join(REPO, 'examples'))});
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ errors: loaded.errors.length, ajv: cache.filter((path) => /[\\/]ajv[\\/]dist[\\/](core|2020|compile)/.test(path)) }));
    `;
    const answer = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { errors: number; ajv: string[] };
    expect(answer).toEqual({ errors: 0, ajv: [] });
  });
});
