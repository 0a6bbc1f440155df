// The checking validators compiled ahead of time (src/manifests/schema-checks.ts) answer as the
// same schemas compiled at run time do, on every document of the examples and the fixtures and
// on variants of each made invalid in several ways.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

describe('the checking validators are compiled with their module', () => {
  it('each is a parenthesised function expression, the exports at the end', async () => {
    const { compiledWithModule } = await import('../../src/manifests/schema-checks-gen.js');
    const raw =
      'export const A = validate0;const schema0 = {"a":"{"};function validate0(data, { instancePath = "" } = {}) { if (data === "}") { return false; } return true; }validate0.evaluated = {"props":true};' +
      'export const B = validate1;function validate1(data) { return validate0(data) && "\\"}" !== data; }';
    const out = compiledWithModule(raw);
    expect(out).toBe(
      'const schema0 = {"a":"{"};const validate0 = (function validate0(data, { instancePath = "" } = {}) { if (data === "}") { return false; } return true; });validate0.evaluated = {"props":true};' +
        'const validate1 = (function validate1(data) { return validate0(data) && "\\"}" !== data; });' +
        '\nexport const A = validate0;\nexport const B = validate1;',
    );
    // A function whose end is not where its braces say fails at generation.
    expect(() => compiledWithModule('export const A = validate0;function validate0(data) { if (data) { return 1; }')).toThrow(/no end/);
    // The committed module: no validator is a declaration (compiled only when first called).
    const committed = readFileSync(join(REPO, 'src/manifests/schema-checks.ts'), 'utf8');
    expect(committed.match(/(?<!\()function validate\d+\(/g)).toBeNull();
    expect(committed.match(/const validate\d+ = \(function validate\d+\(/g)?.length).toBeGreaterThan(MANIFEST_KINDS.length);
  });

  it('so that validating a document compiles no validator then (V8 function events of the built module)', () => {
    const log = join(mkdtempSync(join(tmpdir(), 'reconcile-v8-log-')), 'v8.log');
    const script = `
      const checks = await import(${JSON.stringify(join(REPO, 'dist/manifests/schema-checks.js'))});
      const ok = checks.Project({ apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name: 'p' }, spec: { organization: 'o', region: 'eu-central-1', postgres: { statement_timeout: '30s' } } });
      if (!ok) throw new Error('the Project validator refused a valid document');
    `;
    execFileSync(process.execPath, ['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate', '--input-type=module', '-e', script], { cwd: REPO, env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' } });
    const events = readFileSync(log, 'utf8').split('\n').filter((line) => line.startsWith('function,'));
    const validators = events.filter((line) => /,validate\d+$/.test(line));
    // Each validator is compiled once, with the module; none is parsed again when first called.
    expect(validators.filter((line) => line.startsWith('function,interpreter,')).length).toBeGreaterThan(MANIFEST_KINDS.length);
    expect(validators.filter((line) => line.startsWith('function,parse-function,'))).toEqual([]);
    rmSync(dirname(log), { recursive: true, force: true });
  });
});
