// A one-shot apply of a checkout with a manifest error (the built command, emulator) applies
// nothing and exits 1; `reconcile status` then says the newest revision is broken, naming the
// file and the line, with the last applied revision named; a clean apply clears it. A dry run
// records nothing.
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { converge, openFleetHarness, type FleetHarness } from '../../src/bench/harness.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

let harness: FleetHarness | undefined;

afterAll(async () => {
  await harness?.close();
});

function commit(dir: string, message: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=ops@example.com', '-c', 'user.name=ops', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  if (message === 'init') git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', message);
  return git('rev-parse', 'HEAD');
}

describe('a one-shot apply of a broken revision (built command, emulator)', () => {
  it('shows in reconcile status as a broken revision naming file and line, and clears with a clean apply', async () => {
    assertBuilt();
    harness = await openFleetHarness({ shape: { projects: 2, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: { limit: 100_000, windowMs: 60_000 }, clientRate: { limit: 100_000, windowMs: 60_000 } });
    await converge(harness);
    const dir = harness.fleet.dir;
    const env = { ...harness.fleet.env, MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_RATE_LIMIT: '1000/60s' };
    const good = commit(dir, 'init');
    expectExit(await runCli([dir], env), 0);

    await writeFile(join(dir, 'zz-broken.yaml'), 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: broken\nspec:\n  organization: 7\n');
    const broken = commit(dir, 'broken');
    const dry = await runCli([dir, '--dry-run'], env);
    expectExit(dry, 1);
    const afterDry = JSON.parse((await runCli(['status', dir, '--output', 'json'], env)).stdout) as { condition: { state: string } };
    expect(afterDry.condition.state).not.toBe('broken-revision');

    const apply = await runCli([dir], env);
    expectExit(apply, 1);
    const status = await runCli(['status', dir], env);
    expectExit(status, 0);
    expect(status.stdout).toContain(`Condition: BROKEN REVISION: broken revision ${broken.slice(0, 12)}: zz-broken.yaml:6`);
    expect(status.stdout).toContain(`revision ${good.slice(0, 12)} stays applied`);

    await rm(join(dir, 'zz-broken.yaml'));
    commit(dir, 'fixed');
    expectExit(await runCli([dir], env), 0);
    const fixed = JSON.parse((await runCli(['status', dir, '--output', 'json'], env)).stdout) as { condition: { state: string }; brokenRevision?: unknown };
    expect(fixed.condition.state).toBe('in_sync');
    expect(fixed.brokenRevision).toBeUndefined();
  }, 180_000);
});
