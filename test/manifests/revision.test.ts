import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { revisionOf } from '../../src/manifests/revision.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' } }).trim();

function repository(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'reconcile-revision-')));
  roots.push(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.email', 'test@example.com');
  git(root, 'config', 'user.name', 'test');
  writeFileSync(join(root, 'org.yaml'), 'kind: Organization\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'first');
  return root;
}

describe('the revision of a checkout', () => {
  it('is what git rev-parse HEAD answers: on a branch, detached, in a linked worktree, with packed refs, and none outside a repository', async () => {
    const root = repository();
    const head = git(root, 'rev-parse', 'HEAD');
    expect(await revisionOf(root)).toBe(head);
    writeFileSync(join(root, 'org.yaml'), 'kind: Organization\nmetadata: {}\n');
    git(root, 'commit', '-q', '-am', 'second');
    const second = git(root, 'rev-parse', 'HEAD');
    expect(await revisionOf(root)).toBe(second);
    git(root, 'checkout', '-q', head);
    expect(await revisionOf(root)).toBe(head);
    git(root, 'checkout', '-q', 'main');
    git(root, 'pack-refs', '--all');
    expect(await revisionOf(root)).toBe(second);
    const linked = join(root, '..', `${root.split('/').pop()}-linked`);
    roots.push(linked);
    git(root, 'worktree', 'add', '-q', '-b', 'other', linked, head);
    expect(await revisionOf(linked)).toBe(head);
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'reconcile-revision-none-')));
    roots.push(outside);
    expect(await revisionOf(outside)).toBeUndefined();
  });
});
