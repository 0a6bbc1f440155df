// A real git repository in a temp dir, published the way git-sync publishes one: a worktree per
// commit under `.worktrees/<sha>` and a link renamed atomically over the previous one.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export class GitSyncRepo {
  private constructor(
    readonly base: string,
    readonly repo: string,
    readonly root: string,
  ) {}

  static async create(): Promise<GitSyncRepo> {
    const base = await mkdtemp(join(tmpdir(), 'reconciler-git-'));
    const repo = join(base, 'origin');
    const root = join(base, 'git');
    await mkdir(repo);
    await mkdir(join(root, '.worktrees'), { recursive: true });
    const self = new GitSyncRepo(base, repo, root);
    await self.git('init', '-q', '-b', 'main');
    await self.git('config', 'user.email', 'ci@example.invalid');
    await self.git('config', 'user.name', 'CI');
    return self;
  }

  /** The path the daemon watches (git-sync's `--link`). */
  get link(): string {
    return join(this.root, 'manifests');
  }

  async git(...args: string[]): Promise<string> {
    const { stdout } = await exec('git', ['-C', this.repo, ...args]);
    return stdout.trim();
  }

  /** Writes files (relative path -> content, null removes) and commits; returns the commit. */
  async commit(files: Record<string, string | null>, message: string): Promise<string> {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.repo, path);
      if (content === null) {
        await rm(full, { force: true });
      } else {
        await mkdir(join(full, '..'), { recursive: true });
        await writeFile(full, content);
      }
    }
    await this.git('add', '-A');
    await this.git('commit', '-q', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }

  /** Checks `commit` out into its own worktree and swaps the link to it; the previous worktree is removed. */
  async publish(commit: string, previous?: string): Promise<void> {
    const worktree = join(this.root, '.worktrees', commit);
    await this.git('worktree', 'add', '-q', '--detach', worktree, commit);
    const tmp = join(this.root, `.manifests-${commit}.tmp`);
    await symlink(join('.worktrees', commit), tmp);
    await rename(tmp, this.link);
    if (previous) await this.git('worktree', 'remove', '--force', join(this.root, '.worktrees', previous));
  }

  async close(): Promise<void> {
    await rm(this.base, { recursive: true, force: true });
  }
}
