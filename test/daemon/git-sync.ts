import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyDocument, ManifestSet } from '../../src/manifests/types.js';

/**
 * A directory laid out as git-sync publishes a checkout: worktrees named by their commit under
 * `.worktrees/`, and a link swapped atomically (a new link renamed over the old one).
 */
export class GitSyncDir {
  private constructor(readonly root: string) {}

  static async create(): Promise<GitSyncDir> {
    const root = await mkdtemp(join(tmpdir(), 'reconciler-gitsync-'));
    await mkdir(join(root, '.worktrees'));
    return new GitSyncDir(root);
  }

  /** The path the daemon watches. */
  get link(): string {
    return join(this.root, 'repo');
  }

  /** Writes a worktree for `commit` with these files (relative path -> content). */
  async worktree(commit: string, files: Record<string, string>): Promise<string> {
    const dir = join(this.root, '.worktrees', commit);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return dir;
  }

  /** Points the link at `commit`'s worktree atomically; removes the previous worktree like git-sync does. */
  async publish(commit: string, options: { removePrevious?: string } = {}): Promise<void> {
    const tmp = join(this.root, `.repo-${commit}.tmp`);
    await symlink(join('.worktrees', commit), tmp);
    await rename(tmp, this.link);
    if (options.removePrevious) await rm(join(this.root, '.worktrees', options.removePrevious), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export function commitId(n: number): string {
  return n.toString(16).padStart(40, 'c');
}

/**
 * A stand-in for the manifest loader: every `<name>.yaml` is one Project named `name`; a file
 * containing `BROKEN` yields a located error instead.
 */
export async function fakeLoadManifests(dir: string): Promise<ManifestSet> {
  const documents: AnyDocument[] = [];
  const errors: ManifestSet['errors'] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.yaml')).sort();
  } catch {
    return { root: dir, documents, errors: [{ file: '.', line: 0, column: 0, path: '', message: 'directory not found' }] };
  }
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    if (text.includes('BROKEN')) {
      errors.push({ file: name, line: 1, column: 1, path: '/spec', message: 'expected an object' });
      continue;
    }
    documents.push({
      apiVersion: 'reconciler/v1',
      kind: 'Project',
      metadata: { name: name.replace(/\.yaml$/, '') },
      spec: { organization: 'acme', region: 'eu-west-1' },
      source: { file: name, line: 1, column: 1, dir },
    });
  }
  return { root: dir, documents, errors };
}
