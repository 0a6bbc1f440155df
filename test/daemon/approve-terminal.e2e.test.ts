// `reconcile approve` without --revision on a terminal (a pseudo-terminal from util-linux
// `script`), against the built daemon and the emulator: it shows the daemon's revision and the
// changes that wait for an approval, asks, and approves only that revision on `y`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, DaemonProcess, NODE, REPO, assertBuilt } from './daemon-process.js';

let emulator: RunningEmulator;
let daemon: DaemonProcess | undefined;
let root: string;

const QUESTION = /Approve revision (content-[0-9a-f]{12}) for every project\? Only `y` or `yes` approves\. \[y\/N\] /;

/** The built command on a terminal; `answer` is typed once the question is on the screen. */
function onTerminal(args: string[], answer: string): Promise<{ code: number; screen: string }> {
  const command = [NODE, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: REPO, env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString('utf8');
      if (!answered && QUESTION.test(screen)) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, screen: screen.replaceAll('\r\n', '\n') }));
  });
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-approve-terminal-'));
});

afterAll(async () => {
  await daemon?.stop();
  await emulator?.close();
  await rm(root, { recursive: true, force: true });
});

describe('reconcile approve on a terminal', () => {
  it('shows the revision and what waits, approves nothing on no, and that revision on yes', async () => {
    const dir = join(root, 'manifests');
    await mkdir(dir);
    await writeFile(join(dir, 'org.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n');
    await writeFile(join(dir, 'shop.yaml'), 'apiVersion: reconciler/v1\nkind: Project\nmetadata: { name: shop }\nspec:\n  organization: acme\n  region: eu-west-1\n  db_pass: { valueFrom: { env: APPROVE_DB_PASS } }\n  restapi: { max_rows: 120 }\n');
    await writeFile(join(dir, 'rollout.yaml'), 'apiVersion: reconciler/v1\nkind: Rollout\nmetadata: { name: gated }\nspec:\n  approvals:\n    - { name: api-limits, kinds: [ProjectRestapi] }\n');
    const tokenFile = join(root, 'trigger-token');
    await writeFile(tokenFile, 'approve-terminal-token-3c8e\n');
    daemon = new DaemonProcess([dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--trigger-token-file', tokenFile, '--state-dir', join(root, 'state'), '--log-format', 'json'], {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_RATE_LIMIT: '1000/1s',
      APPROVE_DB_PASS: 'approve-db-pass-90aa',
    });
    const url = (await daemon.metricsUrl()).replace(/\/metrics$/, '');
    await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('approval needed'));
    await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'));
    const maxRows = async () => {
      const [shop] = (await (await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator.token}` } })).json()) as Array<{ ref?: string; id: string }>;
      const config = await fetch(`${emulator.url}/v1/projects/${shop!.ref ?? shop!.id}/restapi`, { headers: { authorization: `Bearer ${emulator.token}` } });
      return ((await config.json()) as { max_rows: number }).max_rows;
    };
    const before = await maxRows();
    expect(before).not.toBe(120);

    const no = await onTerminal(['approve', '--daemon-url', url, '--trigger-token-file', tokenFile], 'n');
    expect(no.screen).toMatch(QUESTION);
    expect(no.code).toBe(1);
    const revision = QUESTION.exec(no.screen)![1]!;
    expect(no.screen).toContain(`Revision ${revision}`);
    expect(no.screen).toMatch(/shop {2}ProjectRestapi\/restapi {2}create {2}needs approval \(api-limits\)/);
    expect(no.screen).toContain('nothing approved');
    expect(await maxRows()).toBe(before);

    const from = daemon.lines.length;
    const yes = await onTerminal(['approve', '--daemon-url', url, '--trigger-token-file', tokenFile], 'y');
    expect(yes.code).toBe(0);
    expect(yes.screen).toContain(`approved ${revision} for every project`);
    await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'), { from });
    expect(await maxRows()).toBe(120);
  }, 90_000);
});
