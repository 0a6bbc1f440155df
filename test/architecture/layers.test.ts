// The layers of src/ (docs/development.md, "Layers"), checked on every import: cli -> daemon, status,
// notify, shards -> reconcile -> api, emulator -> manifests, util, with bench, chaos and the
// build tools on top; no import cycle anywhere, type-only imports included; and no function of
// src/reconcile over 120 lines. The checks are shown to fail on a deliberate violation.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCycles, importGraph, importSpecifiers, LAYER_RULES, layerViolations, longFunctions } from './import-graph.js';

const SRC = new URL('../../src', import.meta.url).pathname;
const MAX_FUNCTION_LINES = 120;

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A source tree of its own, file by file. */
function tree(files: Record<string, string>): string {
  scratch = mkdtempSync(join(tmpdir(), 'layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  }
  return scratch;
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesBelow(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the layers of src/', () => {
  const graph = importGraph(SRC);

  it('every folder of src/ is a layer, and every import goes down the layers or stays in its folder', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? entry.name : `(root) ${entry.name}`));
    expect(folders.filter((folder) => !(folder in LAYER_RULES))).toEqual([]);
    expect(layerViolations(graph)).toEqual([]);
  });

  it('has no import cycle, counting type-only imports', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('the contract of a pass (src/reconcile/types.ts) imports nothing of src/reconcile but the leaf list of kinds', () => {
    const own = graph.get('reconcile/types.ts')!.filter((target) => target.startsWith('reconcile/'));
    expect(own).toEqual(['reconcile/resource-kinds.ts']);
    expect(graph.get('reconcile/resource-kinds.ts')).toEqual([]);
  });

  it(`no function of src/reconcile is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const long = filesBelow(join(SRC, 'reconcile')).flatMap((file) =>
      longFunctions(readFileSync(file, 'utf8'), MAX_FUNCTION_LINES).map((what) => `${relative(SRC, file)}: ${what}`),
    );
    expect(long).toEqual([]);
  });

  it('sees the imports it checks (the scan is not vacuous)', () => {
    expect(graph.get('cli/main.ts')).toContain('cli/options.ts');
    expect(graph.get('reconcile/engine.ts')).toContain('reconcile/registry.ts');
    expect(graph.size).toBeGreaterThan(150);
  });
});

const TEST = new URL('..', import.meta.url).pathname;

/**
 * A test file runs the built command when it makes the path of `dist/cli/bin.js` to run it, or
 * uses a helper that spawns it (test/e2e/helpers/cli.ts, test/daemon/daemon-process.ts).
 */
function runsBuiltCommand(text: string): boolean {
  return [
    /(?:join|resolve)\([^)\n]*'dist'[^)\n]*'bin\.js'\)/,
    /(?:join|resolve)\([^)\n]*'dist\/cli\/bin\.js'\)/,
    /new URL\('[./]*dist\/cli\/bin\.js'/,
    /from '[./]*(?:e2e\/)?helpers\/cli\.js'/,
    /from '[./]*(?:daemon\/)?daemon-process\.js'/,
  ].some((pattern) => pattern.test(text));
}

/** Files that run the built command in a way the scan does not see. */
const RUN_IT_INDIRECTLY = new Set([
  // Performs the Dockerfile and starts the image's entrypoint, `node /app/dist/cli/bin.js`.
  'deploy/dockerfile.e2e.test.ts',
]);

describe('the names of test files', () => {
  it('a test file is named `.e2e.` exactly when it runs the built command', () => {
    // This file names the command in its checks, not to run it.
    const tests = filesBelow(TEST).filter((file) => file.endsWith('.test.ts') && file !== new URL(import.meta.url).pathname);
    const runs = (file: string) => RUN_IT_INDIRECTLY.has(relative(TEST, file)) || runsBuiltCommand(readFileSync(file, 'utf8'));
    const misnamed = tests.filter((file) => runs(file) !== file.includes('.e2e.')).map((file) => relative(TEST, file));
    expect(misnamed).toEqual([]);
    expect(tests.filter((file) => file.includes('.e2e.')).length).toBeGreaterThan(10);
  });
});

describe('the checks fail on a deliberate violation', () => {
  it('an import up the layers (api importing cli) is reported with the file and its target', () => {
    const root = tree({
      'cli/main.ts': "import { call } from '../api/client.js';\nexport const run = () => call();\n",
      'api/client.ts': "import { OPTIONS } from '../cli/options.js';\nexport const call = () => OPTIONS;\n",
      'cli/options.ts': 'export const OPTIONS = {};\n',
    });
    expect(layerViolations(importGraph(root))).toEqual(['api/client.ts -> cli/options.ts']);
  });

  it('a file outside every layer is reported', () => {
    const root = tree({ 'telemetry.ts': 'export const x = 1;\n' });
    expect(layerViolations(importGraph(root))).toEqual(['telemetry.ts is in no layer']);
  });

  it('a cycle made of type-only imports is a cycle', () => {
    const root = tree({
      'reconcile/types.ts': "import type { REGISTRY } from './registry.js';\nexport type Kind = (typeof REGISTRY)[number];\n",
      'reconcile/registry.ts': "import { secrets } from './kinds/secrets.js';\nexport const REGISTRY = [secrets] as const;\n",
      'reconcile/kinds/secrets.ts': "import type { Kind } from '../types.js';\nexport const secrets: { kind: Kind } = { kind: 'Secret' as never };\n",
      'reconcile/engine.ts': "export type { Kind } from './types.js';\n",
    });
    expect(importCycles(importGraph(root))).toEqual([['reconcile/kinds/secrets.ts', 'reconcile/registry.ts', 'reconcile/types.ts']]);
  });

  it('import types, re-exports and multi-line imports are all edges', () => {
    const text = [
      "import {\n  a,\n  type B,\n} from './one.js';",
      "export type { C } from './two.js';",
      "export * from './three.js';",
      "let d: import('./four.js').D;",
      "import './five.js';",
      "import { readFileSync } from 'node:fs';",
      "const text = 'not an import from \\'./six.js\\'';",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['./one.js', './two.js', './three.js', './five.js', './four.js']);
  });

  it('a function over the limit is reported by name, a multi-line signature included', () => {
    const body = Array.from({ length: 130 }, (_, i) => `  const v${i} = \`\${${i}} }\`; // {`).join('\n');
    const text = `export async function tooLong(\n  a: number,\n): Promise<void> {\n${body}\n}\n\nfunction short() {\n  return { a: 1 };\n}\n`;
    expect(longFunctions(text, MAX_FUNCTION_LINES)).toEqual(['tooLong (134 lines, line 1)']);
  });
});
