import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/manifests/ignore-rules.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { locateField } from '../../src/manifests/locations.js';
import { revisionFromPath } from '../../src/manifests/revision.js';
import { cleanupTrees, EXAMPLES, ORG, PROJECT, tree } from './helpers.js';

afterAll(cleanupTrees);

const SHA_A = 'a'.repeat(8) + '0123456789abcdef0123456789abcdef';
const SHA_B = 'b'.repeat(8) + '0123456789abcdef0123456789abcdef';

describe('loadManifests', () => {
  it('reads every *.yaml and *.yml below the directory, any number of documents per file', async () => {
    const root = tree({
      'orgs.yml': `${ORG}---\n${ORG.replace('name: acme', 'name: labs')}---\n`,
      'deep/down/project.YAML': PROJECT,
      'notes.txt': 'not: [a manifest',
    });
    const set = await loadManifests(root);
    expect(set.errors).toEqual([]);
    expect(set.files).toEqual(['deep/down/project.YAML', 'orgs.yml']);
    expect(set.documents.map((d) => `${d.kind}/${d.metadata.name}@${d.source.file}:${d.source.line}`)).toEqual([
      'Project/shop@deep/down/project.YAML:1',
      'Organization/acme@orgs.yml:1',
      'Organization/labs@orgs.yml:7',
    ]);
    expect(set.documents[0]!.source.dir).toBe(join(realpathSync(root), 'deep/down'));
  });

  it('ignores dot-files, dot-directories and what .reconcileignore lists', async () => {
    const broken = 'kind: [';
    const root = tree({
      'org.yaml': ORG,
      '.git/config.yaml': broken,
      '.github/workflows/plan.yml': 'on: push\njobs: {}\n',
      '.hidden.yaml': broken,
      'ci/workflow.yml': 'on: pull_request\n',
      'vendor/nested/x.yaml': broken,
      'keep/vendor.yaml': ORG.replace('name: acme', 'name: kept'),
      '.reconcileignore': '# not manifests\nci/\n/vendor/\n',
    });
    const set = await loadManifests(root);
    expect(set.errors).toEqual([]);
    expect(set.files).toEqual(['keep/vendor.yaml', 'org.yaml']);
  });

  it('matches .reconcileignore patterns like gitignore', () => {
    const rules = new IgnoreRules(tree({ '.reconcileignore': 'ci/\n/vendor/\n*.draft.yaml\ndocs/**/old.yaml\n' }));
    expect(rules.ignores('ci', true)).toBe(true);
    expect(rules.ignores('team/ci', true)).toBe(true);
    expect(rules.ignores('ci.yaml', false)).toBe(false);
    expect(rules.ignores('vendor', true)).toBe(true);
    expect(rules.ignores('team/vendor', true)).toBe(false);
    expect(rules.ignores('team/project.draft.yaml', false)).toBe(true);
    expect(rules.ignores('project.yaml', false)).toBe(false);
    expect(rules.ignores('docs/a/b/old.yaml', false)).toBe(true);
    expect(rules.ignores('old.yaml', false)).toBe(false);
  });

  it('never throws for a directory that does not exist, or a file given as the directory', async () => {
    const missing = await loadManifests('/nonexistent/manifests');
    expect(missing.errors).toEqual([{ file: '/nonexistent/manifests', line: 1, column: 1, path: '', message: 'the manifests directory does not exist' }]);
    const root = tree({ 'org.yaml': ORG });
    const file = await loadManifests(join(root, 'org.yaml'));
    expect(file.errors[0]!.message).toBe('the manifests path is not a directory');
  });

  it('keeps only valid documents, and locates fields of the loaded ones', async () => {
    const root = tree({ 'org.yaml': ORG, 'bad.yaml': ORG.replace('name: acme', 'name: broken').replace('spec: {}', 'spec: {slugg: x}'), 'project.yaml': PROJECT });
    const set = await loadManifests(root);
    expect(set.documents.map((d) => d.metadata.name).sort()).toEqual(['acme', 'shop']);
    const project = set.documents.find((d) => d.kind === 'Project')!;
    expect(locateField(project, '/spec/region')).toEqual({ line: 7, column: 11 });
    expect(locateField(project, '/spec/db_pass/valueFrom/env')).toEqual({ line: 10, column: 12 });
  });

  it('handles empty files and stray document separators', async () => {
    const root = tree({ 'empty.yaml': '', 'seps.yaml': `---\n---\n${ORG}---\n# only a comment\n` });
    const set = await loadManifests(root);
    expect(set.errors).toEqual([]);
    expect(set.documents).toHaveLength(1);
  });
});

describe('git-sync checkouts and the revision', () => {
  it('resolves a symlinked directory once, reads only from the worktree, and takes the commit from its name', async () => {
    const base = tree({
      [`.worktrees/${SHA_A}/org.yaml`]: ORG,
      [`.worktrees/pre-${SHA_B}-post/org.yaml`]: ORG.replace('name: acme', 'name: newer'),
    });
    symlinkSync(join(base, `.worktrees/${SHA_A}`), join(base, 'current'));
    const set = await loadManifests(join(base, 'current'));
    expect(set.root).toBe(realpathSync(join(base, `.worktrees/${SHA_A}`)));
    expect(set.revision).toBe(SHA_A);
    expect(set.documents.map((d) => d.metadata.name)).toEqual(['acme']);

    // git-sync swaps the link atomically (rename over it): the next load sees the new commit
    symlinkSync(join(base, `.worktrees/pre-${SHA_B}-post`), join(base, 'next'));
    renameSync(join(base, 'next'), join(base, 'current'));
    const next = await loadManifests(join(base, 'current'));
    expect(next.revision).toBe(SHA_B);
    expect(next.documents.map((d) => d.metadata.name)).toEqual(['newer']);
  });

  it('asks git for HEAD in a plain checkout', async () => {
    const root = tree({ 'org.yaml': ORG });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } }).trim();
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'manifests');
    const set = await loadManifests(root);
    expect(set.revision).toBe(git('rev-parse', 'HEAD'));
  });

  it('has no revision outside git', async () => {
    const set = await loadManifests(tree({ 'org.yaml': ORG }));
    expect(set.revision).toBeUndefined();
  });

  it('finds the commit in a prefixed or suffixed worktree name, deepest first', () => {
    expect(revisionFromPath(`/git/.worktrees/rev-${SHA_A}/manifests`)).toBe(SHA_A);
    expect(revisionFromPath(`/git/${SHA_B}/.worktrees/${SHA_A}_x`)).toBe(SHA_A);
    expect(revisionFromPath('/git/.worktrees/not-a-hash')).toBeUndefined();
    expect(revisionFromPath(`/git/${SHA_A}f`)).toBeUndefined();
  });
});

describe('examples/', () => {
  it('loads without a single error', async () => {
    const set = await loadManifests(EXAMPLES);
    expect(set.errors).toEqual([]);
  });

  it('still loads from a copy placed anywhere (function sources are relative to their manifests)', async () => {
    const root = tree({});
    const copy = join(root, 'repo');
    mkdirSync(copy);
    cpSync(EXAMPLES, copy, { recursive: true });
    writeFileSync(join(copy, 'ci.yaml.txt'), 'not read');
    const set = await loadManifests(copy);
    expect(set.errors).toEqual([]);
    expect(set.documents.length).toBe((await loadManifests(EXAMPLES)).documents.length);
  });

  it('escapes control and bidirectional characters in the file name an error is located in', async () => {
    const root = tree({ 'org.yaml': ORG, 'd\u001b[2K\u001b[1A\u202e/x.yaml': 'apiVersion: reconciler/v1\nkind: Nope\n' });
    const set = await loadManifests(root);
    expect(set.errors.map((error) => error.file)).toEqual(['d\\u001b[2K\\u001b[1A\\u202e/x.yaml']);
    // eslint-disable-next-line no-control-regex
    expect(set.errors.flatMap((error) => [error.file, error.message]).join(' ')).not.toMatch(/[\u001b\u202e]/);
  });
});
