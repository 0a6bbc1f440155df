// The fast reader of plain YAML (block collections, and flow collections on one line) gives the
// full parser's values, document indices and start positions for every text it accepts, and
// gives up on everything else; a field of a file it read is located where the full parser
// locates it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, stringify, type Document, type Node } from 'yaml';
import { describe, expect, it } from 'vitest';
import { fastLocator, parseFastYaml } from '../../src/manifests/yaml-fast.js';
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

/** Where the full parser locates a path of a document (yaml-source.ts's rule: the deepest node that exists). */
function fullLocate(doc: Document.Parsed, lineCounter: LineCounter, segments: string[], key: boolean): { line: number; column: number } | undefined {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0];
  for (let i = 0; i < segments.length; i++) {
    const last = i === segments.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === segments[i]);
      if (!pair) break;
      if (last && key) return position(lineCounter, (pair.key as Node).range![0]);
      node = pair.value;
      offset = (pair.value as Node | null)?.range?.[0] ?? offset;
    } else if (isSeq(node)) {
      const item = node.items[Number(segments[i])] as Node | undefined;
      if (!item) break;
      node = item;
      offset = item.range?.[0] ?? offset;
    } else break;
  }
  return offset === undefined ? undefined : position(lineCounter, offset);
}

function position(lineCounter: LineCounter, offset: number): { line: number; column: number } {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** Every path of a value (as segments), and one that goes past each. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const own = [prefix, [...prefix, 'absent']];
  if (typeof value !== 'object' || value === null) return own;
  return [...own, ...Object.entries(value).flatMap(([name, item]) => paths(item, [...prefix, name]))];
}

/** The fast reader either gives up or agrees with the full parser, on values and on every position it gives. */
function agrees(text: string): boolean {
  const fast = parseFastYaml(text);
  if (fast === undefined) return true;
  expect(fast).toEqual(full(text));
  const locate = fastLocator(text)!;
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false, logLevel: 'error' }) as Document.Parsed[];
  for (const doc of fast) {
    for (const segments of paths(doc.value)) {
      for (const key of [false, true]) {
        const at = locate(doc.index, segments, key);
        if (at !== undefined) expect(at, `${JSON.stringify(text)} ${segments.join('/')} key=${key}`).toEqual(fullLocate(parsed[doc.index]!, lineCounter, segments, key));
      }
    }
  }
  return true;
}

/** Flow collections on one line, with the spacing, quoting and scalars that matter to them. */
const flowText = (() => {
  const word = fc.oneof(fc.constantFrom('a', 'b c', '-x', '-', '1', '-2.5', 'true', 'null', '~', 'x-y', "it's", 'p.q', '0x1F', 'k:v', 'u#v', 'u #v', '?', '&a', '*a', '!t', ''), fc.string({ maxLength: 4 }));
  const scalar = fc.tuple(word, fc.constantFrom('plain', 'single', 'double')).map(([w, q]) => (q === 'plain' ? w : q === 'single' ? `'${w.replaceAll("'", "''")}'` : `"${w}"`));
  const space = fc.constantFrom('', ' ', '  ');
  const { node } = fc.letrec<{ node: string; seq: string; map: string }>((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, scalar, tie('seq'), tie('map')),
    seq: fc.tuple(fc.array(fc.tuple(space, tie('node'), space), { maxLength: 4 }), space, fc.constantFrom('', ',')).map(([items, s, t]) => `[${s}${items.map(([a, n, b]) => a + n + b).join(',')}${t}]`),
    map: fc
      .tuple(fc.array(fc.tuple(space, scalar, fc.constantFrom(': ', ':', ' : ', ':  ', ''), tie('node'), space), { maxLength: 4 }), space)
      .map(([pairs, s]) => `{${s}${pairs.map(([a, k, c, v, b]) => a + k + c + v + b).join(',')}}`),
  }));
  return fc.tuple(node, fc.constantFrom('', ' # c', '#c', ' x', '\n  more: 1'), fc.constantFrom('k: ', '- ', 'k:\n  - ')).map(([n, after, before]) => `${before}${n}${after}\nz: 1\n`.replace(/^- /, 'k:\n- '));
})();

describe('the fast YAML reader', () => {
  it('reads every example manifest, flow collections on one line included, with the values, indices, starts and positions of the full parser', () => {
    const flow = (text: string) => /(?::|^\s*-)\s*[{[]\s*[^\s\]}]/m.test(text);
    expect(EXAMPLE_TEXTS.filter(flow).length).toBeGreaterThan(1);
    for (const text of EXAMPLE_TEXTS) {
      expect(parseFastYaml(text)).toBeDefined();
      agrees(text);
    }
  });

  it('reads flow collections written on one line as the full parser does', () => {
    const cases = [
      'a: {b: 1}\n',
      'a: [1, 2]\n',
      'a: { b: { c: [x, "y, z", \'it\'\'s\'] }, d: [] , e: { } }  # comment\n',
      'a: [ {name: x, ring: canary}, [1, -2.5, true, null, ~], "q" ]\n',
      'list:\n- {tenant: acme, rows: 500}\n- [a,b]\n-   {k: "v"}\n',
      'a: {"quoted key": 1, \'single\': two words, dash: -x}\n',
      'a: {url: "http://example.com/x#y"}\n',
      'spec:\n  template:\n    db_pass: { valueFrom: { env: FLEET_DB_PASS } }\n    name: "svc-${id}"\n',
    ];
    for (const text of cases) {
      expect(parseFastYaml(text), text).toBeDefined();
      agrees(text);
    }
  });

  it('gives up on flow collections it could misread, for the full parser to read or refuse', () => {
    const cases = [
      'a: {b: 1,\n  c: 2}\n',
      'a: [1,\n  2]\n',
      'a: [1, 2, ]\n',
      'a: {b: 1, }\n',
      'a: [1, , 2]\n',
      'a: {b}\n',
      'a: {b:1}\n',
      'a: {b: }\n',
      'a: {b : 1}\n',
      'a: [b: 1]\n',
      'a: {b: c: d}\n',
      'a: {? b: 1}\n',
      'a: {b: http://x}\n',
      'a: {b: c#d}\n',
      'a: {b: c #d}\n',
      'a: {b: 1, b: 2}\n',
      'a: {1: one}\n',
      'a: {true: yes}\n',
      'a: {__proto__: x}\n',
      'a: {<<: x}\n',
      'a: {b: &x 1}\n',
      'a: [*x]\n',
      'a: [!!str 1]\n',
      'a: ["esc\\n"]\n',
      'a: [0x1F]\n',
      'a: [-]\n',
      'a: [- b]\n',
      'a: {b: 1}}\n',
      'a: [1] [2]\n',
      'a: ["x"y]\n',
      'a: [b]: c\n',
      '{a: 1}\n',
      '- [a]\n',
      'a: [b]\n  c: 1\n',
      `a: ${'['.repeat(70)}${']'.repeat(70)}\n`,
    ];
    for (const text of cases) expect(parseFastYaml(text), text).toBeUndefined();
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

  it('gives up on the Unicode spaces JavaScript trims but YAML reads as content', () => {
    // YAML reads `a:` then a key that starts with two no-break spaces; as indentation they would nest it.
    expect(full('a:\n\u00a0\u00a0x: 1\n')![0]!.value).toEqual({ a: null, '\u00a0\u00a0x': 1 });
    const spaces = ['\u00a0', '\u1680', '\u2000', '\u2005', '\u200a', '\u202f', '\u205f', '\u3000'];
    const cases = spaces.flatMap((s) => [`a:\n${s}${s}x: 1\n`, `a: ${s}b\n`, `a: b${s}\n`, `a${s}: b\n`, `a: [b${s}]\n`, `a: {x: ${s}y}\n`, `a:\n  ${s}\n`, `a: b\n${s}\n`]);
    for (const text of cases) {
      expect(parseFastYaml(text), JSON.stringify(text)).toBeUndefined();
      expect(parseYamlFile(text).documents.map((d) => d.value)).toEqual((full(text) ?? []).map((d) => d.value));
    }
  });

  it('agrees with the full parser on random values written as YAML, on flow collections and on mutated manifests', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 })), { minLength: 1, maxLength: 3 }), (values) =>
        agrees(values.map((v) => stringify(v)).join('---\n')),
      ),
      { numRuns: 150 },
    );
    const chars = fc.constantFrom(...':{}[]-&*!|>\'"#%@`,?\n  abcXYZ019_.~'.split(''));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })), (value) =>
        agrees(`a: ${stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trimEnd()}\nb: 1\n`),
      ),
      { numRuns: 200 },
    );
    fc.assert(fc.property(flowText, (text) => agrees(text)), { numRuns: 1500 });
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

  it('locates a field of a file it read where the full parser does, through flow collections too', () => {
    const text = 'spec:\n  template:\n    metadata: {name: "svc-${id}", labels: { tier: a }}\n    list:\n    - [x, {y: 1}]\n    - z\n';
    const locate = fastLocator(text)!;
    expect(locate(0, ['spec', 'template', 'metadata', 'labels', 'tier'], false)).toEqual({ line: 3, column: 51 });
    expect(locate(0, ['spec', 'template', 'metadata', 'name'], true)).toEqual({ line: 3, column: 16 });
    expect(locate(0, ['spec', 'template', 'list', '0', '1', 'y'], false)).toEqual({ line: 5, column: 15 });
    expect(locate(0, ['spec', 'template', 'nothing', 'here'], false)).toEqual({ line: 3, column: 5 });
    agrees(text);
    // A path through a value left empty is the full parser's to place.
    expect(fastLocator('a:\nb: 1\n')!(0, ['a'], false)).toBeUndefined();
    expect(parseYamlFile('a:\nb: 1\n').documents[0]!.locate('/a')).toEqual({ line: 1, column: 3 });
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
