import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTrees, ORG, PROJECT, REPO, tree } from './helpers.js';

const NODE = join(REPO, 'node_modules/.bin/node');
const BIN = join(REPO, 'dist/cli/bin.js');

function reconcile(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    // A clean environment: validate must need no token and no secrets.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env };
    execFile(NODE, [BIN, ...args], { cwd: options.cwd ?? REPO, env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolvePromise({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(() => {
  // `npm test` builds first; build here too when run on its own.
  if (!existsSync(BIN) || !existsSync(join(REPO, 'dist/manifests/load.js'))) execFileSync(join(REPO, 'node_modules/.bin/tsc'), ['-p', REPO], { stdio: 'ignore' });
}, 120_000);
afterAll(cleanupTrees);

describe('reconcile validate (built command)', () => {
  it('passes the examples offline, without a token, reporting unset variables as warnings', async () => {
    const result = await reconcile(['validate', 'examples']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^projects\/shop-production\.yaml:\d+:\d+ \/spec\/auth\/smtp_pass: warning: secret reference env:SHOP_SMTP_PASSWORD names an environment variable that is not set/m);
    expect(result.stdout).toMatch(/^valid: \d+ documents in \d+ files, \d+ warnings$/m);
  });

  it('takes the directory from --manifests, or the current directory', async () => {
    const flag = await reconcile(['validate', '--manifests', 'examples']);
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stdout).toMatch(/^valid: \d+ documents/m);
    const cwd = await reconcile(['validate'], { cwd: join(REPO, 'examples') });
    expect(cwd.code, cwd.stderr).toBe(0);
    expect(cwd.stdout).toMatch(/^valid: \d+ documents/m);
  });

  it('exits 1 on a bad directory with every located error at once', async () => {
    const root = tree({
      'org.yaml': ORG,
      'project.yaml': `${PROJECT}  auth:\n    site_ur: https://shop.example\n    smtp_pass: canary-literal\n`,
      'fn.yaml': 'apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: shop\n  source: missing\n  entrypoint: index.ts\n',
      'secret.yaml': 'apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: s\nspec:\n  project: shop\n  values:\n    KEY:\n      valueFrom:\n        file: not-there.txt\n',
    });
    const result = await reconcile(['validate', root]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toEqual([
      'fn.yaml:7:11 /spec/source: source directory `missing` does not exist (relative to fn.yaml)',
      'project.yaml:12:5 /spec/auth/site_ur: unknown field `site_ur` (did you mean `site_url`?)',
      'project.yaml:13:16 /spec/auth/smtp_pass: a secret must not be a literal: use valueFrom, `{valueFrom: {env: NAME}}` or `{valueFrom: {file: PATH}}` (put the value in an environment variable or a file outside git)',
      'secret.yaml:9:7 /spec/values/KEY: secret reference file:not-there.txt names a file that does not exist (paths are relative to the manifest file)',
      'invalid: 4 errors (4 files read)',
    ]);
    expect(result.stdout).not.toContain('canary-literal');
  });

  it('prints the documented JSON shape with --output json', async () => {
    const root = tree({ 'org.yaml': ORG, 'project.yaml': PROJECT.replace('eu-west-1', 'eu-wset-1') });
    const result = await reconcile(['validate', root, '--output', 'json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report)).toEqual(['version', 'valid', 'root', 'revision', 'files', 'documents', 'kinds', 'errors', 'warnings']);
    expect(report).toMatchObject({ version: 1, valid: false, revision: null, files: 2, documents: 1, kinds: { Organization: 1 }, warnings: [] });
    expect(report.errors).toEqual([
      {
        file: 'project.yaml',
        line: 7,
        column: 11,
        path: '/spec/region',
        message: expect.stringMatching(/^expected one of the 18 allowed values/),
        hint: 'did you mean `eu-west-1`?',
      },
    ]);
    const valid = JSON.parse((await reconcile(['validate', 'examples', '--output', 'json'])).stdout);
    expect(valid.valid).toBe(true);
    expect(valid.warnings.length).toBeGreaterThan(0);
    expect(valid.warnings[0]).toHaveProperty('reference');
  });

  it('treats the environment: a set variable is no warning', async () => {
    const root = tree({ 'org.yaml': ORG, 'project.yaml': PROJECT });
    const result = await reconcile(['validate', root], { env: { SHOP_DB_PASSWORD: 'canary-db-password' } });
    expect(result).toMatchObject({ code: 0, stdout: 'valid: 2 documents in 2 files\n' });
  });

  it('--output github prints one workflow annotation per problem, with the path from the working directory, and one notice for unset variables', async () => {
    const root = tree({
      'fleet/org.yaml': ORG,
      'fleet/project.yaml': PROJECT,
      // A message with a comma, a colon and a percent sign: escaped as the runner expects.
      'fleet/bad, 100%.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: broken\nspec:\n  organization: acme\n  region: eu-west-1\n  unknown_field: 1\n',
    });
    const result = await reconcile(['validate', 'fleet', '--output', 'github'], { cwd: root });
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    const annotations = lines.filter((l) => l.startsWith('::') && !l.startsWith('::notice '));
    expect(annotations.length).toBeGreaterThanOrEqual(1);
    for (const line of annotations) expect(line).toMatch(/^::(error|warning) file=[^,:]+,line=\d+,col=\d+,title=[^,:]+::\S.*$/);
    const error = annotations.find((l) => l.startsWith('::error file=fleet/bad%2C 100%25.yaml,'));
    expect(error, result.stdout).toMatch(/^::error file=fleet\/bad%2C 100%25\.yaml,line=8,col=3,title=reconcile validate%3A \/spec(\/unknown_field)?::/);
    // The unset variable of a secret reference is no annotation on the file (a workflow validates
    // without the secrets): one notice names it.
    expect(result.stdout).not.toContain('::warning ');
    expect(lines.filter((l) => l.startsWith('::notice '))).toEqual([
      '::notice title=reconcile validate%3A secret references::1 secret reference reads environment variables that are not set in this step (validate needs none; the plan and the apply do): SHOP_DB_PASSWORD',
    ]);
    expect(lines.at(-1)).toMatch(/^invalid: \d+ errors? \(3 files read\)$/);
  });

  it('refuses an unknown output format and extra arguments with a usage error', async () => {
    const bad = await reconcile(['validate', 'examples', '--output', 'markdown']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('validate: --output must be text, json or github, got `markdown`');
    const extra = await reconcile(['validate', 'a', 'b']);
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain('validate takes at most one directory, got 2');
  });
});
