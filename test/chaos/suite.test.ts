import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runner = fileURLToPath(new URL('../../dist/chaos/run.js', import.meta.url));

describe('chaos suite', () => {
  it('fails, naming each invariant, when a run breaks them on purpose', () => {
    expect(existsSync(runner), 'build first: npm test builds dist/').toBe(true);
    const run = spawnSync(process.execPath, [runner, '--size', 'tiny', '--seed', '3', '--sabotage', 'duplicate-project,lost-secret,unwanted-delete'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/FAIL no project was created twice: duplicated: chaos-0000 x2/);
    expect(run.stdout).toMatch(/FAIL no secret was lost: missing or wrong: chaos-0000\/SECRET_0/);
    expect(run.stdout).toMatch(/FAIL nothing was deleted that the manifests did not ask to delete: .*bystanders gone: bystander/);
    // The run itself converged before the sabotage: that invariant still holds.
    expect(run.stdout).toMatch(/ok {3}the fleet converged/);
    expect(run.stdout).toMatch(/^2 passed, 3 failed$/m);
  }, 300_000);
});
