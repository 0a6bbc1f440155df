import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSecretReferences } from '../../src/manifests/check-refs.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import type { ManifestError } from '../../src/manifests/types.js';
import { CORPUS as BAD, HOSTILE } from './corpus-cases.js';

const CORPUS = [...BAD, HOSTILE];
import { cleanupTrees, ORG, PROJECT, tree } from './helpers.js';

afterAll(cleanupTrees);

function expectLocated(errors: ManifestError[], expected: (typeof CORPUS)[number]['expected']): void {
  expect(errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.path}`)).toEqual(expected.map((e) => `${e.file}:${e.line}:${e.column} ${e.path}`));
  errors.forEach((error, i) => {
    expect(error.message).toMatch(expected[i]!.message);
    if (expected[i]!.hint) expect(error.hint).toMatch(expected[i]!.hint!);
  });
}

describe('the corpus of bad manifests', () => {
  for (const testCase of CORPUS) {
    // The timeout only catches a hang; speed itself is measured by the bench, not asserted here.
    it(`${testCase.name}: every located error, and no valid document from the broken file`, { timeout: 10_000 }, async () => {
      const root = tree(testCase.files);
      const set = await loadManifests(root);
      expectLocated(set.errors, testCase.expected);
      const broken = new Set(testCase.expected.map((e) => e.file));
      // documents in files with a problem of their own are either absent or valid ones only
      for (const document of set.documents) {
        if (broken.has(document.source.file)) expect(set.errors.some((e) => e.file === document.source.file)).toBe(true);
      }
    });
  }

  it('leaves no control character in any message, and pollutes no prototype', async () => {
    const set = await loadManifests(tree(HOSTILE.files));
    // eslint-disable-next-line no-control-regex
    expect(JSON.stringify(set.errors)).not.toMatch(/[\u0000-\u001f]/);
    expect(({} as Record<string, unknown>).slug).toBeUndefined();
  });

  it('never repeats a literal secret value in an error', async () => {
    const literal = CORPUS.find((c) => c.name.startsWith('literal secrets'))!;
    const set = await loadManifests(tree(literal.files));
    const text = JSON.stringify(set.errors);
    expect(text).not.toContain('hunter2-canary');
    expect(text).not.toContain('canary-literal-value');
  });

  it('rejects a 50 MB file from its size, without reading it', async () => {
    const root = tree({ 'org.yaml': ORG });
    const big = join(root, 'huge.yaml');
    writeFileSync(big, 'apiVersion: reconciler/v1\n');
    truncateSync(big, 50 * 1024 * 1024);
    const set = await loadManifests(root);
    expectLocated(set.errors, [{ file: 'huge.yaml', line: 1, column: 1, path: '', message: /is 50 MiB, larger than the 1 MiB limit/ }]);
    expect(set.documents.map((d) => d.metadata.name)).toEqual(['acme']);
  });

  it('honours a smaller maxFileBytes and validates the option', async () => {
    const root = tree({ 'org.yaml': ORG });
    const set = await loadManifests(root, { maxFileBytes: 16 });
    expect(set.errors[0]!.message).toMatch(/larger than the 16 bytes limit/);
    await expect(loadManifests(root, { maxFileBytes: -1 })).rejects.toThrow('Expected `maxFileBytes` to be a positive integer, got `-1` (number)');
  });

  it('reports every problem at once, across files', async () => {
    const files = Object.assign({}, ...CORPUS.filter((c) => !c.name.includes('Secrets documents')).map((c, i) => Object.fromEntries(Object.entries(c.files).map(([path, content]) => [`case${i}/${path}`, content]))));
    const set = await loadManifests(tree(files));
    const filesWithErrors = new Set(set.errors.map((e) => e.file.split('/')[0]));
    expect(filesWithErrors.size).toBeGreaterThanOrEqual(CORPUS.length - 4);
  });
});

describe('unresolvable secret references', () => {
  const files = {
    'org.yaml': ORG,
    'project.yaml': `${PROJECT}  auth:\n    smtp_pass:\n      valueFrom:\n        file: secrets/smtp-password\n    external_idp05_secret:\n      valueFrom:\n        file: secrets/idp05\n`,
    'secrets/idp05': 'client-secret-canary\n',
  };

  it('names the missing environment variable and the missing file, located at the field, never a value', async () => {
    const set = await loadManifests(tree(files));
    expect(set.errors).toEqual([]);
    const problems = checkSecretReferences(set, { env: {} });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.path} ${p.severity} ${p.reference}`)).toEqual([
      'project.yaml:9:5 /spec/db_pass error env:SHOP_DB_PASSWORD',
      'project.yaml:13:7 /spec/auth/smtp_pass error file:secrets/smtp-password',
    ]);
    expect(problems[0]!.message).toBe('secret reference env:SHOP_DB_PASSWORD names an environment variable that is not set');
    expect(problems[1]!.message).toBe('secret reference file:secrets/smtp-password names a file that does not exist');
    expect(JSON.stringify(problems)).not.toContain('client-secret-canary');
  });

  it('reports an unset variable as a warning when asked (validate), a missing file always as an error', async () => {
    const set = await loadManifests(tree(files));
    const problems = checkSecretReferences(set, { env: {}, missingEnv: 'warning' });
    expect(problems.map((p) => p.severity)).toEqual(['warning', 'error']);
  });

  it('reports nothing once the references resolve, and nothing in sandbox mode', async () => {
    const root = tree(files);
    mkdirSync(join(root, 'secrets'), { recursive: true });
    writeFileSync(join(root, 'secrets/smtp-password'), 'smtp-canary\n');
    const set = await loadManifests(root);
    expect(checkSecretReferences(set, { env: { SHOP_DB_PASSWORD: 'db-canary' } })).toEqual([]);
    expect(checkSecretReferences(set, { env: { SHOP_DB_PASSWORD: '' } })[0]!.message).toMatch(/is empty/);
    const missing = await loadManifests(tree(files));
    expect(checkSecretReferences(missing, { env: {}, sandbox: true })).toEqual([]);
  });
});
