// The fast reader of plain block YAML gives the full parser's values, document indices and
// start positions for every text it accepts, and gives up on everything else; errors in a
// file it read are still located at their line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { LineCounter, parseAllDocuments, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseFastYaml } from '../../src/manifests/yaml-fast.js';
import { parseYamlFile } from '../../src/manifests/yaml-source.js';
import { EXAMPLES } from './helpers.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}
/** The example manifests (a CI workflow file beside them uses block scalars: not a manifest). */
const EXAMPLE_TEXTS = yamlFiles(EXAMPLES).filter((path) => !path.includes('/.github/')).map((path) => readFileSync(path, 'utf8'));

/** What the full parser makes of a text: each document's value and start, or undefined when it reports an error. */
function full(text: string): Array<{ index: number; value: unknown; start: { line: number; column: number } }> | undefined {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return undefined;
  return docs.flatMap((doc, index) => {
    const value = doc.toJS();
    if (value === null || value === undefined) return [];
    const { line, col } = lineCounter.linePos((doc.contents as { range?: number[] } | null)?.range?.[0] ?? 0);
    return [{ index, value, start: { line, column: col } }];
  });
}

/** The fast reader either gives up or agrees with the full parser. */
function agrees(text: string): boolean {
  const fast = parseFastYaml(text);
  if (fast === undefined) return true;
  expect(fast).toEqual(full(text));
  return true;
}

describe('the fast YAML reader', () => {
  it('reads every example manifest in block style, with the values, indices and starts of the full parser', () => {
    // A flow collection with content (`{ tenant: a }`, `[a, b]`) is the full parser's to read.
    const flow = (text: string) => /(?::|^\s*-)\s*[{[]\s*[^\s\]}]/m.test(text);
    expect(EXAMPLE_TEXTS.filter((text) => !flow(text)).length).toBeGreaterThan(5);
    for (const text of EXAMPLE_TEXTS) {
      expect(parseFastYaml(text) === undefined).toBe(flow(text));
      agrees(text);
    }
  });

  it('reads several documents of a file, comments before the first marker and empty documents included', () => {
    const cases = [
      '# a comment\n---\na: 1\n---\nb: two # trailing\n',
      'a: 1\n---\n---\nb: [] # empty\nc: {}\n---\n',
      '---\n  indented: yes\n  other: "quoted # not a comment"\n',
      "k: 'it''s'\nlist:\n- 1\n- -2.5e3\n- ~\n- name: x\n  items:\n  - a\n  -   b: c\n      d: 1.\n",
      'x:\n  # only a comment\ny: null\nz: Null\nw: TRUE\nv: 007\nu: +12\nt: 2026-11-28\ns: a:b\n',
    ];
    for (const text of cases) {
      expect(parseFastYaml(text), text).toBeDefined();
      agrees(text);
    }
  });

  it('gives up on what the full parser must read', () => {
    const cases = [
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      'a: |\n  block\n',
      'a: >\n  folded\n',
      'a: {b: 1}\n',
      'a: [1, 2]\n',
      'a: "esc\\n"\n',
      'a: plain\n  continued\n',
      'a: 1\na: 2\n',
      '1: one\n',
      'true: yes\n',
      '"quoted": key\n',
      '- top\n- level\n',
      'scalar\n',
      'a:\tb\n',
      'a: b\r\n',
      '%YAML 1.2\n---\na: 1\n',
      'a: b: c\n',
      'a: 0x1F\n',
      'a: .inf\n',
      '? complex\n: key\n',
      '__proto__: x\n',
      '<<: x\n',
      'a:\n  b: 1\n c: 2\n',
      '--- a: 1\n',
      `${'- '.repeat(3)}x\n`,
      "a: 'open\n  quote'\n",
    ];
    for (const text of cases) expect(parseFastYaml(text), text).toBeUndefined();
  });

  it('agrees with the full parser on random values written as YAML and on mutated manifests', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 })), { minLength: 1, maxLength: 3 }), (values) =>
        agrees(values.map((v) => stringify(v)).join('---\n')),
      ),
      { numRuns: 150 },
    );
    const chars = fc.constantFrom(...':{}[]-&*!|>\'"#%@`,?\n  abcXYZ019_.~'.split(''));
    const mutation = fc.tuple(fc.nat(), fc.nat({ max: 12 }), fc.array(chars, { maxLength: 10 }).map((c) => c.join('')));
    fc.assert(
      fc.property(fc.nat(), mutation, (pick, [at, cut, insert]) => {
        const text = EXAMPLE_TEXTS[pick % EXAMPLE_TEXTS.length]!;
        const i = at % (text.length + 1);
        return agrees(text.slice(0, i) + insert + text.slice(i + cut));
      }),
      { numRuns: 600 },
    );
  });

  it('locates a field of a file it read at its line, parsing the file fully only then', () => {
    const text = 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: p\nspec:\n  auth:\n    # comment\n    jwt_exp: 3600\n';
    const parsed = parseYamlFile(text);
    expect(parsed.problems).toEqual([]);
    parsed.release();
    expect(parsed.documents[0]!.locate('/spec/auth/jwt_exp')).toEqual({ line: 8, column: 14 });
    expect(parsed.documents[0]!.locate('/spec/auth/jwt_exp', { key: true })).toEqual({ line: 8, column: 5 });
    expect(parsed.documents[0]!.start).toEqual({ line: 1, column: 1 });
  });
});
