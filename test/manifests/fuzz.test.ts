import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSecretReferences } from '../../src/manifests/check-refs.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import type { ManifestSet } from '../../src/manifests/types.js';
import { cleanupTrees, EXAMPLES, tree } from './helpers.js';

afterAll(cleanupTrees);

const root = tree({});
cpSync(EXAMPLES, root, { recursive: true });
const original = await loadManifests(root);
const FILES = original.files!;
const TEXTS = new Map(FILES.map((file) => [file, readFileSync(join(root, file), 'utf8')]));

const yamlChars = fc.constantFrom(...':{}[]-&*!|>\'"#%@`,?\n\t  abcXYZ019_.~\u0000\u00e9\ufeff'.split(''));
const fragment = fc.array(yamlChars, { maxLength: 24 }).map((chars) => chars.join(''));

type Mutation = (text: string) => string;

const textMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.nat({ max: 40 })).map(([at, length]): Mutation => (text) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + text.slice(i + length);
  }),
  fc.tuple(fc.nat(), fragment).map(([at, insert]): Mutation => (text) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + insert + text.slice(i);
  }),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]): Mutation => (text) => {
    const lines = text.split('\n');
    const i = a % lines.length;
    const j = b % lines.length;
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    return lines.join('\n');
  }),
  fc.tuple(fc.nat(), fc.integer({ min: -4, max: 4 })).map(([a, shift]): Mutation => (text) => {
    const lines = text.split('\n');
    const i = a % lines.length;
    lines[i] = shift >= 0 ? ' '.repeat(shift) + lines[i] : lines[i]!.slice(-shift);
    return lines.join('\n');
  }),
  fc.nat().map((at): Mutation => (text) => text.slice(0, at % (text.length + 1))),
);

/** Edits of the parsed structure: the kinds of mistakes people make in valid YAML. */
const valueMutation: fc.Arbitrary<Mutation> = fc
  .tuple(fc.nat(), fc.nat(), fc.constantFrom('delete', 'rename', 'replace', 'wrap', 'add'), fc.jsonValue({ maxDepth: 3 }), fc.nat())
  .map(([pick, docPick, operation, replacement, charPick]): Mutation => (text) => {
    const docs = parseAllDocuments(text);
    if (!Array.isArray(docs) || docs.length === 0) return text;
    let values: unknown[];
    try {
      values = docs.map((d) => d.toJS());
    } catch {
      // An earlier mutation left text this one cannot take apart (an alias without its anchor): it stays as it is.
      return text;
    }
    const target = values[docPick % values.length];
    const holders: Array<[Record<string, unknown> | unknown[], string | number]> = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach((item, i) => { holders.push([node, i]); walk(item); });
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) { holders.push([node as Record<string, unknown>, k]); walk(v); }
    };
    walk(target);
    if (holders.length === 0) return text;
    const [holder, key] = holders[pick % holders.length]!;
    const record = holder as Record<string | number, unknown>;
    switch (operation) {
      case 'delete':
        if (Array.isArray(holder)) holder.splice(key as number, 1);
        else delete record[key];
        break;
      case 'rename':
        if (!Array.isArray(holder) && typeof key === 'string' && key.length > 0) {
          const i = charPick % key.length;
          const renamed = key.slice(0, i) + key.slice(i + 1);
          record[renamed || 'x'] = record[key];
          delete record[key];
        }
        break;
      case 'replace':
        record[key] = replacement;
        break;
      case 'wrap':
        record[key] = [record[key]];
        break;
      case 'add':
        if (!Array.isArray(holder)) record[`unknown_${charPick % 7}`] = replacement;
        break;
    }
    return values.map((v) => stringify(v)).join('---\n');
  });

function assertLocated(set: ManifestSet): void {
  for (const error of set.errors) {
    expect(typeof error.file).toBe('string');
    expect(Number.isInteger(error.line) && error.line >= 1, JSON.stringify(error)).toBe(true);
    expect(Number.isInteger(error.column) && error.column >= 1, JSON.stringify(error)).toBe(true);
    expect(typeof error.path).toBe('string');
    expect(error.message.length).toBeGreaterThan(0);
  }
  if (set.errors.length === 0) expect(set.documents.length).toBeGreaterThan(0);
  // what the loader hands on is plain data: the reconciler serializes it (plans, digests)
  expect(() => JSON.stringify(set.documents.map((d) => d.spec))).not.toThrow();
}

describe('fuzzing the loader with mutations of the examples', () => {
  it('has a valid starting point', () => {
    expect(original.errors).toEqual([]);
  });

  it('never crashes: each mutation validates or yields located errors', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), fc.array(fc.oneof(textMutation, valueMutation), { minLength: 1, maxLength: 3 }), async (file, mutations) => {
        const text = mutations.reduce((current, mutate) => mutate(current), TEXTS.get(file)!);
        writeFileSync(join(root, file), text);
        try {
          const set = await loadManifests(root);
          assertLocated(set);
          for (const error of set.errors) expect(FILES.includes(error.file) || error.file === '.').toBe(true);
          // the reference check runs on whatever loaded, without throwing
          expect(() => checkSecretReferences(set, { env: {} })).not.toThrow();
        } finally {
          writeFileSync(join(root, file), TEXTS.get(file)!);
        }
      }),
      { numRuns: 200 },
    );
  });
});
