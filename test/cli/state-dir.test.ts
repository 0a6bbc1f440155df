import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/main.js';
import { parseSettings } from '../../src/cli/settings.js';
import { settleStateDir } from '../../src/cli/state-dir.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function layout(): Promise<{ cwd: string; manifests: string }> {
  const root = await mkdtemp(join(tmpdir(), 'state-dir-'));
  roots.push(root);
  const cwd = join(root, 'repo');
  const manifests = join(cwd, 'fleet');
  await mkdir(manifests, { recursive: true });
  return { cwd, manifests };
}

function settings(argv: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return parseSettings({ ...parseCommandLine(argv, env), env, cwd });
}

describe('the state directory belongs to the manifests directory', () => {
  it('defaults to .reconcile inside DIR (reconcile, --watch, status, apply FILE DIR), and --state-dir or RECONCILE_STATE_DIR as given', async () => {
    const { cwd, manifests } = await layout();
    expect(settings(['fleet'], cwd).stateDir).toBe(join(manifests, '.reconcile'));
    expect(settings(['fleet', '--watch'], cwd).stateDir).toBe(join(manifests, '.reconcile'));
    expect(settings(['status', 'fleet'], cwd).stateDir).toBe(join(manifests, '.reconcile'));
    expect(settings(['apply', 'plan.json', 'fleet'], cwd).stateDir).toBe(join(manifests, '.reconcile'));
    expect(settings(['--manifests', 'fleet', '--watch'], cwd).stateDir).toBe(join(manifests, '.reconcile'));
    expect(settings([], cwd).stateDir).toBe(join(cwd, '.reconcile'));
    expect(settings(['fleet', '--state-dir', 'st'], cwd)).toMatchObject({ stateDir: join(cwd, 'st'), stateDirGiven: true });
    expect(settings(['fleet'], cwd, { RECONCILE_STATE_DIR: '/var/lib/r' })).toMatchObject({ stateDir: '/var/lib/r', stateDirGiven: true });
    expect(settings(['fleet'], cwd).legacyStateDir).toBe(join(cwd, '.reconcile'));
  });

  it('a state at the old default place is moved by a writer, used in place by a reader, never replaced by an empty one', async () => {
    const { cwd, manifests } = await layout();
    const legacy = join(cwd, '.reconcile');
    await mkdir(legacy);
    await writeFile(join(legacy, 'inventory.json'), '{"projects":{"shop":{"ref":"abc"}}}\n');
    const reader = await settleStateDir(settings(['fleet', '--dry-run'], cwd), false);
    expect(reader.stateDir).toBe(legacy);
    expect(reader.note).toContain(`old default place ${legacy}`);
    const writer = await settleStateDir(settings(['fleet'], cwd), true);
    expect(writer.stateDir).toBe(join(manifests, '.reconcile'));
    expect(writer.note).toContain('moved the state directory');
    expect(await readFile(join(manifests, '.reconcile', 'inventory.json'), 'utf8')).toContain('"shop"');
    // Once moved, the new place wins.
    expect((await settleStateDir(settings(['fleet'], cwd), true)).note).toBeUndefined();
  });

  it('refuses to move a state another live process holds, and a default inside a manifests directory that is a symbolic link', async () => {
    const { cwd } = await layout();
    const legacy = join(cwd, '.reconcile');
    await mkdir(legacy);
    await writeFile(join(legacy, 'state.lock'), JSON.stringify({ pid: process.ppid, host: hostname(), command: 'reconcile --watch', startedAt: 'then', heartbeatAt: Date.now(), id: 'live', generation: 1 }));
    await expect(settleStateDir(settings(['fleet'], cwd), true)).rejects.toThrow(/in use by pid \d+ .*--state-dir/);
    await symlink(join(cwd, 'fleet'), join(cwd, 'current'));
    await expect(settleStateDir(settings(['current'], cwd), true)).rejects.toThrow(/is a symbolic link .*--state-dir/);
    // Given explicitly, anything goes.
    expect((await settleStateDir(settings(['current', '--state-dir', 'st'], cwd), true)).stateDir).toBe(join(cwd, 'st'));
  });
});
