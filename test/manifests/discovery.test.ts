import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { TreeWalkError, walkTree } from '../../src/manifests/walk-tree.js';
import { cleanupTrees, ORG, tree } from './helpers.js';
import { DIST_BUILT, IS_ROOT, runAsNobody } from './unprivileged.js';

afterAll(cleanupTrees);

const org = (name: string) => ORG.replace('name: acme', `name: ${name}`);
const BROKEN = 'kind: [unclosed\n';

describe('discovery: an incomplete tree is an invalid set', () => {
  it('names a dangling symlink anywhere in the tree, and hands on no document', async () => {
    const root = tree({ 'org.yaml': ORG, 'teams/a/project.yaml': org('a') });
    symlinkSync(join(root, 'gone'), join(root, 'teams/b'));
    const set = await loadManifests(root);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0]).toMatchObject({ file: 'teams/b', message: expect.stringContaining('`teams/b` is a symbolic link whose target does not exist') });
    expect(set.errors[0]!.message).toContain('nothing is planned or applied');
  });

  it('names a symlink that leaves the tree, unless the ignore rules leave it out', async () => {
    const outside = tree({ 'elsewhere.yaml': org('elsewhere') });
    const root = tree({ 'org.yaml': ORG });
    symlinkSync(outside, join(root, 'vendor'));
    const set = await loadManifests(root);
    expect(set.errors.map((e) => [e.file, e.message.split(':')[0]])).toEqual([['vendor', '`vendor` is a symbolic link that leaves the manifests directory (list it in .reconcileignore to leave it out)']]);
    writeFileSync(join(root, '.reconcileignore'), 'vendor/\n');
    const ignored = await loadManifests(root);
    expect(ignored.errors).toEqual([]);
    expect(ignored.files).toEqual(['org.yaml']);
  });

  it('names an ignored dangling link nowhere: the rules apply before the link is followed', async () => {
    const root = tree({ 'org.yaml': ORG, '.reconcileignore': 'cache\n' });
    symlinkSync(join(root, 'nowhere'), join(root, 'cache'));
    expect((await loadManifests(root)).errors).toEqual([]);
  });

  // Root reads every directory: as root the case runs as an unprivileged user (below).
  it.skipIf(IS_ROOT)('names an unreadable directory', async () => {
    const root = tree({ 'org.yaml': ORG, 'locked/project.yaml': org('locked') });
    chmodSync(join(root, 'locked'), 0o000);
    try {
      const set = await loadManifests(root);
      expect(set.errors.map((e) => e.file)).toEqual(['locked']);
      expect(set.errors[0]!.message).toContain('`locked` cannot be read (EACCES)');
    } finally {
      chmodSync(join(root, 'locked'), 0o755);
    }
  });

  it.runIf(IS_ROOT && DIST_BUILT)('names an unreadable directory (as root: read as the unprivileged user nobody, with the built modules)', () => {
    const root = tree({ 'org.yaml': ORG, 'locked/project.yaml': org('locked') });
    chmodSync(join(root, 'locked'), 0o000);
    try {
      const errors = runAsNobody<Array<{ file: string; message: string }>>(`const { loadManifests } = await import(dist + '/reconcile/load-manifests.js'); return (await loadManifests(${JSON.stringify(root)})).errors;`, [root]);
      expect(errors.map((e) => e.file)).toEqual(['locked']);
      expect(errors[0]!.message).toContain('`locked` cannot be read (EACCES)');
    } finally {
      chmodSync(join(root, 'locked'), 0o755);
    }
  });

  it('names a directory that vanishes while the tree is read', async () => {
    const root = tree({ 'a/org.yaml': ORG, 'b/org.yaml': org('b') });
    const walk = walkTree(root, {
      enterDirectory: (path, absolute) => {
        if (path === 'b') rmSync(absolute, { recursive: true });
      },
    });
    const error = await walk.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TreeWalkError);
    expect(error).toMatchObject({ path: 'b', problem: 'vanished' });
  });

  it('a walk without a status of each file (statFiles: false) finds the same files by the same paths, following links inside the tree and refusing one that leaves it', async () => {
    const root = tree({ 'org.yaml': ORG, 'teams/a/project.yaml': org('a'), 'teams/a/notes.txt': 'notes\n', 'shared/common.yaml': org('common') });
    symlinkSync(join(root, 'shared'), join(root, 'teams/linked'));
    symlinkSync(join(root, 'org.yaml'), join(root, 'teams/org-link.yaml'));
    const withStats = await walkTree(root);
    const pathsOnly = await walkTree(root, { statFiles: false });
    expect(pathsOnly.files).toEqual(withStats.files.map(({ path, absolute }) => ({ path, absolute })));
    expect(pathsOnly.files.map((file) => file.path)).toEqual(['org.yaml', 'shared/common.yaml', 'teams/a/notes.txt', 'teams/a/project.yaml', 'teams/linked/common.yaml', 'teams/org-link.yaml']);
    expect(pathsOnly.files.find((file) => file.path === 'teams/org-link.yaml')!.absolute).toBe(join(root, 'org.yaml'));
    const outside = tree({ 'elsewhere.yaml': org('elsewhere') });
    symlinkSync(outside, join(root, 'vendor'));
    await expect(walkTree(root, { statFiles: false })).rejects.toMatchObject({ path: 'vendor', problem: 'outside-link' });
  });

  it('names a manifest that is a FIFO, and a .reconcileignore that is a device', async () => {
    const root = tree({ 'org.yaml': ORG });
    execFileSync('mkfifo', [join(root, 'pipe.yaml')]);
    symlinkSync('/dev/zero', join(root, '.reconcileignore'));
    const set = await loadManifests(root);
    expect(set.errors.map((e) => `${e.file}: ${e.message}`)).toEqual([
      '.reconcileignore: the ignore file .reconcileignore is a device, not a regular file: what it would leave out is unknown, so nothing is read',
      'pipe.yaml: the file is a FIFO (named pipe), not a regular file',
    ]);
  });
});

describe('discovery: what is left out', () => {
  it('leaves out node_modules/ and what .gitignore files ignore, from the repository root down', async () => {
    const repo = tree({
      '.gitignore': 'generated/\n',
      'fleet/org.yaml': ORG,
      'fleet/.gitignore': '*.local.yaml\n',
      'fleet/node_modules/pkg/x.yaml': BROKEN,
      'fleet/generated/out.yaml': BROKEN,
      'fleet/team/dev.local.yaml': BROKEN,
      'fleet/team/.gitignore': 'scratch/\n',
      'fleet/team/scratch/a.yaml': BROKEN,
      'fleet/team/kept.yaml': org('kept'),
      'fleet/other/scratch/b.yaml': org('other'),
    });
    mkdirSync(join(repo, '.git'));
    const set = await loadManifests(join(repo, 'fleet'));
    expect(set.errors).toEqual([]);
    expect(set.files).toEqual(['org.yaml', 'other/scratch/b.yaml', 'team/kept.yaml']);
  });

  it('reads no .gitignore above the repository root', async () => {
    const outer = tree({ '.gitignore': '*.yaml\n', 'repo/org.yaml': ORG });
    mkdirSync(join(outer, 'repo/.git'));
    expect((await loadManifests(join(outer, 'repo'))).files).toEqual(['org.yaml']);
  });

  it('re-includes with `!pattern` as git does, and .reconcileignore has the last word', async () => {
    const root = tree({
      '.gitignore': 'drafts/*\n!drafts/keep.yaml\n',
      '.reconcileignore': 'legacy/*.yaml\n!legacy/still-used.yaml\n!node_modules/\nnode_modules/*\n!node_modules/fleet.yaml\n',
      'org.yaml': ORG,
      'drafts/wip.yaml': BROKEN,
      'drafts/keep.yaml': org('draft'),
      'legacy/old.yaml': BROKEN,
      'legacy/still-used.yaml': org('legacy'),
      'node_modules/fleet.yaml': org('vendored'),
      'node_modules/pkg/x.yaml': BROKEN,
    });
    const set = await loadManifests(root);
    expect(set.errors).toEqual([]);
    expect(set.files).toEqual(['drafts/keep.yaml', 'legacy/still-used.yaml', 'node_modules/fleet.yaml', 'org.yaml']);
  });
});
