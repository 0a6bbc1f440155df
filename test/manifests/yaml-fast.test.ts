import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { LineCounter, parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { readPlainYaml, type FastDocument } from '../../src/manifests/yaml-fast.js';
import { parseYamlFile } from '../../src/manifests/yaml-source.js';
import { checkingValidator, reportingValidator } from '../../src/manifests/schema-validator.js';
import { MANIFEST_KINDS } from '../../src/manifests/types.js';
import { generateFleet } from '../../src/bench/fleet.js';
import { cleanupTrees, EXAMPLES, tree } from './helpers.js';

/** What the full parser makes of a text, in the fast reader's terms; undefined when it has errors. */
function fullParse(text: string): FastDocument[] | undefined {
  const lineCounter = new LineCounter();
  const docs = [...parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false, logLevel: 'error' })];
  const out: FastDocument[] = [];
  for (const [index, doc] of docs.entries()) {
    if (doc.errors.length) return undefined;
    const value = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    const { line, col } = lineCounter.linePos((doc.contents as { range?: number[] } | null)?.range?.[0] ?? 0);
    out.push({ index, value, line, column: col });
  }
  return out;
}

/** The fast reader either gives up or agrees exactly with the full parser (values, -0, own keys, positions). */
function expectAgreement(text: string): boolean {
  const fast = readPlainYaml(text);
  if (fast === undefined) return false;
  const full = fullParse(text);
  expect(full, `the full parser refuses a text the fast reader took: ${JSON.stringify(text)}`).toBeDefined();
  // Node's strict comparison: prototypes, own keys, and -0 apart from 0 (a key named
  // `constructor` would confuse a comparison that reads it to compare types).
  expect(isDeepStrictEqual(fast, full), `${JSON.stringify(text)}: ${JSON.stringify(fast)} vs ${JSON.stringify(full)}`).toBe(true);
  return true;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [readFileSync(path, 'utf8')] : [];
  });
}
const EXAMPLE_TEXTS = yamlFiles(EXAMPLES);

// Pieces chosen to sit on the edges of the plain shape: typed scalars, indicators, quotes,
// keys that are not strings, inherited property names.
const SCALARS = [
  '1', '-1', '-0', '007', '+5', '1.5', '1.', '.5', '-.5', '1e3', '1E-2', '0x1F', '0o7', '.inf', '-.inf', '.nan', 'null', '~', 'Null',
  'true', 'False', 'yes', 'x', 'hello world', 'a: b', 'a:b', 'a #c', 'a#c', '"q"', '"q\\"x"', "'s'", "'it''s'", '[]', '{}', '[1]',
  '{a: 1}', '&a x', '*a', '!tag x', '|', '>', '- x', '-x', '--x', '---', '...', '@x', '`x`', '%x', 'https://x.example.com/a?b=c',
  '10.0.0.0/8', 'a,b', '30s', '12345678901234567890', '1_000', '?x', ':x', 'a:', '"', "'", '"a" b', '""', "''", 'é', 'a\tb',
];
const KEYS = ['a', 'b', 'kind', 'spec', 'true', 'null', 'x-y', '_k', 'True', 'constructor', 'toString', '__proto__', 'on', '1', '"q"', 'a b'];
// Mostly what the fast reader takes, so that agreement is tested often, with the edges mixed in.
const COMMON_SCALARS = ['1', '-1', '1.5', 'x', 'hello world', 'true', 'null', '"q"', "'s'", '[]', '{}', 'https://x.example.com/a?b=c', '30s'];
const COMMON_KEYS = ['a', 'b', 'c', 'kind', 'spec', 'x-y', '_k', 'constructor'];
const scalarPick = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...COMMON_SCALARS) }, { weight: 1, arbitrary: fc.constantFrom(...SCALARS) });
const keyPick = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...COMMON_KEYS) }, { weight: 1, arbitrary: fc.constantFrom(...KEYS) });

const spaces = (n: number) => ' '.repeat(n);

/** A block generated at indent 0, nested at most `depth` levels. */
function block(depth: number): fc.Arbitrary<string> {
  const inner: fc.Arbitrary<string> = depth > 0 ? block(depth - 1) : fc.constant('');
  const entry = fc.tuple(keyPick, scalarPick, fc.nat(3), fc.boolean(), fc.constantFrom(0, 1, 2, 4), inner).map(
    ([key, scalar, gap, nested, deeper, child]) =>
      // a nested value sits deeper, or (a sequence) at its key's own indent; empty means null
      nested && depth > 0 ? `${key}:\n${shift(child, deeper)}` : `${key}:${spaces(gap === 3 ? 2 : 1)}${scalar}\n`,
  );
  const item = fc.tuple(scalarPick, keyPick, fc.nat(2), inner).map(([scalar, key, form, child]) =>
    form === 0 || depth === 0 ? `- ${scalar}\n` : form === 1 ? `- ${key}: ${scalar}\n  ${key}x: 1\n` : `-\n${shift(child, 2)}`,
  );
  return fc.oneof(fc.array(entry, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('')), fc.array(item, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('')));
}

/** Re-indents a block generated at indent 0. */
function shift(text: string, by: number): string {
  return text
    .split('\n')
    .map((line) => (line ? spaces(by) + line : line))
    .join('\n');
}

const stream = fc
  .tuple(fc.array(fc.tuple(block(3), fc.constantFrom('---\n', '--- x\n', '...\n', '# note\n', '\n')), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean())
  .map(([docs, leadingMarker, trailingMarker]) => (leadingMarker ? '---\n' : '') + docs.map(([doc, separator], i) => (i ? separator : '') + doc).join('') + (trailingMarker ? '---\n' : ''));

afterAll(cleanupTrees);

describe('the fast YAML reader', () => {
  it('reads the example manifests without the full parser, exactly as the full parser does', () => {
    const taken = EXAMPLE_TEXTS.filter((text) => expectAgreement(text));
    // Most example files are in the plain shape; if none were, the fast path would be dead code.
    expect(taken.length).toBeGreaterThan(EXAMPLE_TEXTS.length / 2);
  });

  it('reads the benchmark fleet without the full parser (the planning figures measure this path)', async () => {
    const fleet = await generateFleet(tree({}), { projects: 3 });
    const texts = yamlFiles(fleet.dir);
    expect(texts).toHaveLength(4);
    for (const text of texts) expect(expectAgreement(text), text.slice(0, 200)).toBe(true);
  });

  it('gives up on what it does not recognise with certainty', () => {
    const refused = [
      'a: &x 1\nb: *x\n', // anchors and aliases
      'a: !!str 1\n', // tags
      'a: [1, 2]\n', // flow collections
      'a: {b: 1}\n',
      'a: one\n  two\n', // a multi-line scalar
      'a: |\n  text\n', // block scalars
      'a: "esc\\n"\n', // escapes
      'a: 1 # note\n', // a comment after a value
      'a:\t1\n', // tabs
      'a: 1\r\nb: 2\r\n', // CRLF
      'a: café\n', // non-ASCII
      'a: 1\na: 2\n', // a duplicate key
      '"a": 1\n', // a quoted key
      '1: x\n', // a key that is not a string
      'true: x\n',
      '__proto__: x\n',
      'a: 0x1F\n', // typed scalars left to the full parser
      'a: .inf\n',
      'a: 1\n b: 2\n', // bad indentation
      '%YAML 1.2\n---\na: 1\n', // directives
      'a: 1 \n', // trailing spaces
      'just a scalar\n',
    ];
    for (const text of refused) expect(readPlainYaml(text), JSON.stringify(text)).toBeUndefined();
  });

  it('agrees with the full parser on generated plain-shaped streams', () => {
    let taken = 0;
    fc.assert(
      fc.property(stream, (text) => {
        if (expectAgreement(text)) taken++;
      }),
      { numRuns: 3000, seed: 20261122 },
    );
    expect(taken).toBeGreaterThan(500);
  });

  it('agrees with the full parser on mutations of the examples', () => {
    const mutation = fc.tuple(fc.nat(EXAMPLE_TEXTS.length - 1), fc.nat(), fc.nat(3), fc.constantFrom(...':{}[]-&*!|>\'"#%@`,?\n  aZ09_.~'.split('')));
    fc.assert(
      fc.property(mutation, ([file, at, op, char]) => {
        let text = EXAMPLE_TEXTS[file]!;
        const i = at % (text.length + 1);
        if (op === 0) text = text.slice(0, i) + text.slice(i + 1);
        else if (op === 1) text = text.slice(0, i) + char + text.slice(i);
        else if (op === 2) text = text.slice(0, i);
        else {
          const lines = text.split('\n');
          const j = at % lines.length;
          lines[j] = ` ${lines[j]}`;
          text = lines.join('\n');
        }
        expectAgreement(text);
      }),
      { numRuns: 3000, seed: 7 },
    );
  });
});

describe('locating fields after the syntax tree is released', () => {
  const plain = 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: p\nspec:\n  region: eu-central-1\n  list:\n    - a: 1\n      b: 2\n';
  const full = 'apiVersion: reconciler/v1\nkind: Project\nmetadata: &m\n  name: p\nspec:\n  region: eu-central-1\n  list: [{a: 1, b: 2}]\n';
  const pointers = ['', '/kind', '/metadata/name', '/spec/region', '/spec/list/0/b', '/spec/missing', '/spec/list/9'];

  for (const [shape, text] of [['plain', plain], ['full-parser', full]] as const) {
    it(`gives the same positions before and after release (${shape} file)`, () => {
      const parsed = parseYamlFile(text);
      const doc = parsed.documents[0]!;
      const before = pointers.flatMap((p) => [doc.locate(p), doc.locate(p, { key: true })]);
      parsed.release();
      const after = pointers.flatMap((p) => [doc.locate(p), doc.locate(p, { key: true })]);
      expect(after).toEqual(before);
      expect(doc.locate('/spec/region')).toEqual({ line: 6, column: 11 });
      expect(doc.locate('/spec/region', { key: true })).toEqual({ line: 6, column: 3 });
    });
  }

  it('the plain file was read by the fast reader and the other by the full parser', () => {
    expect(readPlainYaml(plain)).toBeDefined();
    expect(readPlainYaml(full)).toBeUndefined();
  });
});

describe('the lean and the exhaustive validators', () => {
  it('agree on every document: the lean one decides validity, the exhaustive one explains it', () => {
    const docs = EXAMPLE_TEXTS.flatMap((text) => parseYamlFile(text).documents.map((d) => d.value as Record<string, unknown>)).filter((d) => (MANIFEST_KINDS as readonly unknown[]).includes(d.kind));
    const kinds = new Set(docs.map((d) => d.kind));
    expect([...kinds].sort()).toEqual([...MANIFEST_KINDS].sort());
    const replacement = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ valueFrom: { env: 'X' } }), fc.constant('a'.repeat(300)));
    fc.assert(
      fc.property(fc.nat(docs.length - 1), fc.nat(), fc.constantFrom('delete', 'replace', 'add'), replacement, (pick, at, operation, value) => {
        const doc = structuredClone(docs[pick]!);
        const holders: Array<[Record<string, unknown> | unknown[], string | number]> = [];
        const walk = (node: unknown): void => {
          if (Array.isArray(node)) node.forEach((item, i) => (holders.push([node, i]), walk(item)));
          else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) (holders.push([node as Record<string, unknown>, k]), walk(v));
        };
        walk(doc.spec);
        if (holders.length) {
          const [holder, key] = holders[at % holders.length]!;
          if (operation === 'delete') {
            if (Array.isArray(holder)) holder.splice(key as number, 1);
            else delete holder[key as string];
          } else if (operation === 'replace') (holder as Record<string, unknown>)[key] = value;
          else if (!Array.isArray(holder)) holder[`${String(key)}_x`] = value;
        }
        const kind = doc.kind as (typeof MANIFEST_KINDS)[number];
        expect(checkingValidator(kind)(doc)).toBe(reportingValidator(kind)(doc));
      }),
      { numRuns: 1500, seed: 11 },
    );
  });
});
