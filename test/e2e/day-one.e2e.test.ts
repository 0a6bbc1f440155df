// Corners a newcomer meets in the first hour, through the built command: a document whose spec
// is all optional may leave `spec` out; bad indentation is reported on the line that is wrong;
// a usage error is one line and a pointer to --help, not the whole usage text.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from './helpers/cli.js';

const HINT = 'reconcile: `reconcile --help` lists every command and option\n';
let work: string;
beforeAll(() => {
  assertBuilt();
  work = mkdtempSync(join(tmpdir(), 'reconciler-day-one-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A manifests directory of the given files, in the test's temporary directory. */
function tree(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const PROJECT = ['apiVersion: reconciler/v1', 'kind: Project', 'metadata:', '  name: shop', 'spec:', '  organization: acme', '  region: eu-central-1', ''];

describe('optional specs, YAML lines and usage errors', () => {
  it('accepts an Organization and a Rollout without `spec`, and plans them against the sandbox', async () => {
    const dir = tree('no-spec', {
      'org.yaml': 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\n',
      'rollout.yaml': 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata:\n  name: fleet\n',
      'project.yaml': PROJECT.join('\n'),
    });
    const valid = await runCli(['validate', dir], {});
    expect(valid.stderr).toBe('');
    expect(valid.stdout).toBe('valid: 3 documents in 3 files\n');
    expect(valid.code).toBe(0);
    const plan = await runCli([dir, '--sandbox', '--dry-run', '--detailed-exitcode', '--log-level', 'silent'], {});
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain('+ Organization/acme create');
    expect(plan.stdout).toContain('+ Project/shop create');
  });

  it('still requires `spec` where a field of it is required (a Project names its organization)', async () => {
    const dir = tree('project-no-spec', { 'project.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\n' });
    const run = await runCli(['validate', dir], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('missing required field `spec`');
  });

  it('reports a line indented too deep on that line, once, not on the line above', async () => {
    const lines = [...PROJECT.slice(0, -1), '   db_pass: { valueFrom: { env: SHOP_DB_PASSWORD } }', ''];
    const dir = tree('indent', { 'org.yaml': 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\n', 'project.yaml': lines.join('\n') });
    const run = await runCli(['validate', dir], {});
    expect(run.code).toBe(1);
    const errors = run.stdout.split('\n').filter((line) => line.startsWith('project.yaml:'));
    expect(errors).toEqual(['project.yaml:8:4 /: YAML syntax: this line is indented deeper than the key above it (keys of one mapping start at the same column)']);
  });

  it('keeps the parser\'s own message, on its line, for other syntax errors', async () => {
    const lines = ['apiVersion: reconciler/v1', 'kind: Organization', 'metadata:', '  name: acme', '  labels:', '    tier: gold', '   plan: free', ''];
    const dir = tree('shallow', { 'org.yaml': lines.join('\n') });
    const run = await runCli(['validate', dir], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^org\.yaml:7:\d+ \/: YAML syntax: /m);
  });

  it('answers a usage error with its one line and a pointer to --help', async () => {
    const approve = await runCli(['approve', '--revision', '3f2c9a1b7d4e'], {});
    expect(approve.code).toBe(1);
    expect(approve.stdout).toBe('');
    expect(approve.stderr).toBe(`reconcile: approve: set --trigger-token-file PATH (or RECONCILE_TRIGGER_TOKEN_FILE) to the token the daemon was started with\n${HINT}`);
    const unknown = await runCli(['--no-such-flag'], {});
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`reconcile: unknown option --no-such-flag\n${HINT}`);
    expect(unknown.stderr).not.toContain('Usage:');
  });
});
