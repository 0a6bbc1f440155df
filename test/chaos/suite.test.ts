import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const runner = fileURLToPath(new URL('../../dist/chaos/run.js', import.meta.url));

describe('chaos suite', () => {
  it('holds every invariant while a project under deletion: delete is renamed twice between killed runs, a paused holder loses its lock, and a sharded rollout meets a failing canary', () => {
    expect(existsSync(runner), 'build first: npm test builds dist/').toBe(true);
    const run = spawnSync(process.execPath, [runner, '--size', 'tiny', '--seed', '5'], { encoding: 'utf8', timeout: 240_000 });
    expect(run.stdout).toMatch(/renamed the Project manifest chaos-0000 to chaos-0000-renamed-1/);
    expect(run.stdout).toMatch(/renamed the Project manifest chaos-0000-renamed-1 to chaos-0000-renamed-2/);
    expect(run.stdout).toMatch(/ok {3}no project was created twice/);
    expect(run.stdout).toMatch(/ok {3}nothing was deleted that the manifests did not ask to delete: no DELETE was served/);
    expect(run.stdout).toMatch(/a run stopped \(SIGSTOP\) past the lock timeout; a second run took the lock over; the first resumed/);
    expect(run.stdout).toMatch(/ok {3}a paused holder writes nothing after the takeover: the resumed run sent no API write and changed no file of the state directory/);
    expect(run.stdout).toMatch(/rollout across shards: both shards refused it; 0 writes to its projects/);
    expect(run.stdout).toMatch(/one Rollout per shard: exits \d, \d; shard left halted at wave canary/);
    expect(run.stdout).toMatch(/ok {3}no tenant outruns the canary of another shard, and a removed project waits for its approval/);
    expect(run.stdout).toMatch(/^8 passed, 0 failed$/m);
    expect(run.status).toBe(0);
  }, 300_000);

  it('fails, naming each invariant, when a run breaks them on purpose', () => {
    expect(existsSync(runner), 'build first: npm test builds dist/').toBe(true);
    const run = spawnSync(process.execPath, [runner, '--size', 'tiny', '--seed', '3', '--sabotage', 'duplicate-project,lost-secret,unwanted-delete,paused-holder-write'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    // A failed run keeps its files for a person to inspect: this one failed on purpose.
    const kept = /^chaos: kept the manifests and state directories in (.+)$/m.exec(run.stdout)?.[1];
    if (kept?.startsWith(join(tmpdir(), 'reconcile-chaos-'))) rmSync(kept, { recursive: true, force: true });
    expect(run.status).toBe(1);
    expect(kept).toMatch(/reconcile-chaos-/);
    expect(run.stdout).toMatch(/FAIL no project was created twice: duplicated: chaos-0000 x2/);
    expect(run.stdout).toMatch(/FAIL no secret was lost: missing or wrong: chaos-0000\/SECRET_0/);
    expect(run.stdout).toMatch(/FAIL nothing was deleted that the manifests did not ask to delete: .*bystanders gone: bystander/);
    // The run itself converged before the sabotage: that invariant still holds.
    expect(run.stdout).toMatch(/ok {3}the fleet converged/);
    // The renamed project (the duplicated one here) kept one record, under its last manifest name.
    expect(run.stdout).toMatch(/renamed the Project manifest chaos-0000 to chaos-0000-renamed-1 \(spec\.name chaos-0000, deletion: delete/);
    expect(run.stdout).toMatch(/ok {3}a renamed project is managed under its new name: chaos-0000 is recorded as `chaos-0000-renamed-2`/);
    // A write to the state directory while the paused holder resumes is seen.
    expect(run.stdout).toMatch(/FAIL a paused holder writes nothing after the takeover: API writes: none; state files changed: .*inventory\.json/);
    expect(run.stdout).toMatch(/^4 passed, 4 failed$/m);
  }, 300_000);
});
