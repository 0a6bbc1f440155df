// `reconcile status` without --live, as a user runs it (the built command): from the state
// directory's recorded view, with no API URL, token or secret variable.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStatusRecord } from '../../src/status/status-file.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';
import { freePort } from '../deploy/tools.js';
import { passResult } from '../daemon/fixtures.js';

let dir: string;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'status-cli-'));
  await writeStatusRecord(join(dir, 'state'), foldPass(emptyStatusRecord(), passResult(), {}, Date.now()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('reconcile status from the state directory (built command)', () => {
  it('prints every recorded project with its state, and the failure, with no API variable set', async () => {
    const run = await runCli(['status', '--state-dir', join(dir, 'state')], {});
    expectExit(run, 0);
    expect(run.stdout).toMatch(/^Status from the state directory .*: 2 projects: 0 in sync, 1 drifted, 0 held, 0 pending, 1 failed$/m);
    expect(run.stdout).toMatch(/^shop\s+failed\s/m);
    expect(run.stdout).toMatch(/^blog\s+drifted\s/m);
    expect(run.stdout).toContain('TransientError: POST /v1/projects/{ref}/secrets answered 503');
  });

  it('--project shows one project, and suggests the nearest name', async () => {
    const one = await runCli(['status', '--state-dir', join(dir, 'state'), '--project', 'blog', '--output', 'json'], {});
    expectExit(one, 0);
    expect(JSON.parse(one.stdout).projects.map((p: { name: string }) => p.name)).toEqual(['blog']);
    const typo = await runCli(['status', '--state-dir', join(dir, 'state'), '--project', 'shpo'], {});
    expectExit(typo, 1);
    expect(typo.stderr).toContain('--project `shpo` names no project in the state directory');
    expect(typo.stderr).toContain('did you mean `shop`?');
  });

  it('says what to do when nothing is recorded, or the daemon does not answer', async () => {
    const empty = await runCli(['status', '--state-dir', join(dir, 'empty')], {});
    expectExit(empty, 1);
    expect(empty.stderr).toContain('no status recorded in');
    expect(empty.stderr).toContain('--live');
    const port = await freePort();
    const away = await runCli(['status'], { RECONCILE_DAEMON_URL: `http://127.0.0.1:${port}` });
    expectExit(away, 1);
    expect(away.stderr).toContain(`no answer from the daemon at http://127.0.0.1:${port}`);
  });
});
