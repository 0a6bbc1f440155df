// `reconcile trigger` as a user runs it, against the built daemon (`--watch --sandbox`) with
// --trigger-token-file: the named project gets a pass at once; a wrong token is refused.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonProcess } from '../daemon/daemon-process.js';
import { assertBuilt, expectExit, runCli } from './helpers/cli.js';

const TOKEN = 'trigger-e2e-token-5f1c9a';
let daemon: DaemonProcess | undefined;
let work: string | undefined;

afterAll(async () => {
  await daemon?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const project = (name: string) => `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
spec:
  organization: acme
  region: eu-west-1
  db_pass:
    valueFrom:
      env: TRIGGER_DB_PASS
`;

describe('reconcile trigger (built command)', () => {
  it('asks the running daemon for a pass of the named project; refuses a wrong token', async () => {
    assertBuilt();
    work = await mkdtemp(join(tmpdir(), 'reconciler-trigger-e2e-'));
    const manifests = join(work, 'manifests');
    await mkdir(manifests);
    await writeFile(join(manifests, 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
    await writeFile(join(manifests, 'shop.yaml'), project('shop'));
    await writeFile(join(manifests, 'blog.yaml'), project('blog'));
    const tokenFile = join(work, 'token');
    await writeFile(tokenFile, `${TOKEN}\n`);
    const wrongFile = join(work, 'wrong');
    await writeFile(wrongFile, 'not-the-token\n');
    daemon = new DaemonProcess(
      [manifests, '--watch', '--sandbox', '--metrics-addr', '127.0.0.1:0', '--state-dir', join(work, 'state'), '--trigger-token-file', tokenFile],
      { TRIGGER_DB_PASS: 'db-pass-never-logged-7d1e' },
    );
    const url = await daemon.metricsUrl();
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    const from = daemon.lines.length;

    const refused = await runCli(['trigger', '--project', 'shop', '--daemon-url', url, '--trigger-token-file', wrongFile], {});
    expectExit(refused, 1);
    expect(refused.stderr).toContain('the daemon answered 401');

    const run = await runCli(['trigger', '--project', 'shop'], { RECONCILE_DAEMON_URL: url, RECONCILE_TRIGGER_TOKEN_FILE: tokenFile });
    expectExit(run, 0);
    expect(run.stdout).toMatch(/^pass started for shop/);
    const pass = await daemon.waitFor((l) => l.msg === 'pass finished' && Array.isArray(l.projects), { from });
    expect(pass).toMatchObject({ priority: 'write', projects: ['shop'], result: 'success' });

    const unknown = await runCli(['trigger', '--project', 'nope', '--daemon-url', url, '--trigger-token-file', tokenFile], {});
    expectExit(unknown, 1);
    expect(unknown.stderr).toContain('no Project manifest named `nope`');
    const typo = await runCli(['trigger', '--project', 'shpo', '--daemon-url', url, '--trigger-token-file', tokenFile], {});
    expectExit(typo, 1);
    expect(typo.stderr).toContain('the daemon answered 404: no Project manifest named `shpo` (did you mean `shop`?)');
    expect(daemon.stdout).not.toContain(TOKEN);
    expect(daemon.stdout).not.toContain('db-pass-never-logged-7d1e');
    expect(await daemon.stop()).toBe(0);
  });
});
