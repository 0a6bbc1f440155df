// Plan, then apply: on a terminal (a pseudo-terminal from util-linux `script`) a one-shot apply
// shows the plan and asks; `n` writes nothing, `y` applies exactly the plan shown; `--yes` and
// a standard input that is not a terminal do not ask. The emulator's request log tells what
// was written.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, copyFixture, expectExit, runCli, type CliRun } from './helpers/cli.js';

const QUESTION = 'Apply these changes? Only `y` or `yes` applies. [y/N] ';
const CANARY = 'confirm-e2e-db-3f9a71';

let emulator: RunningEmulator;
let dir: string;
let stateRoot: string;
let runs = 0;

const apiRequests = () => emulator.requests().filter((r) => !r.path.startsWith('/_emulator'));
const writes = () => apiRequests().filter((r) => r.method !== 'GET');

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture('test/fixtures/reconcile-e2e');
  stateRoot = await mkdtemp(join(tmpdir(), 'reconcile-confirm-'));
});

afterAll(async () => {
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(stateRoot, { recursive: true, force: true });
});

beforeEach(async () => {
  await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
});

function environment(): NodeJS.ProcessEnv {
  runs += 1;
  return {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(stateRoot, `state-${runs}`),
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: CANARY,
    E2E_SMTP_PASS: 'confirm-e2e-smtp-0b2c',
    NO_COLOR: '1',
  };
}

/**
 * The built command on a pseudo-terminal, both streams on the screen. `answer` is typed once the
 * question is on the screen (as a person types it after reading the plan); the transcript is
 * everything the terminal showed, the typed answer's echo included.
 */
function runOnTerminal(args: string[], env: NodeJS.ProcessEnv, answer?: string | (() => Promise<void>)): Promise<CliRun & { writesBeforeAnswer?: number }> {
  const command = [NODE, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let answered = false;
    let writesBeforeAnswer: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (answer !== undefined && !answered && stdout.includes(QUESTION)) {
        answered = true;
        writesBeforeAnswer = writes().length;
        if (typeof answer === 'string') child.stdin.write(`${answer}\r`);
        else answer().catch(reject);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout: stdout.replaceAll('\r\n', '\n'), stderr, ...(writesBeforeAnswer !== undefined ? { writesBeforeAnswer } : {}) }));
  });
}

describe('plan, then apply, on a terminal', () => {
  it('`n`: the plan, the question, nothing written, exit 1', async () => {
    const run = await runOnTerminal([dir], environment(), 'n');
    expectExit(run, 1);
    const screen = run.stdout;
    expect(screen).toMatch(/^Plan \(dry run: nothing was changed\)/m);
    expect(screen).toContain('+ Project/shop create');
    expect(screen.indexOf('+ Project/shop create')).toBeLessThan(screen.indexOf(QUESTION));
    expect(screen).toContain(`${QUESTION}n\nNothing was applied.`);
    expect(screen).not.toContain('Apply:');
    expect(writes()).toEqual([]);
    expect(apiRequests().length).toBeGreaterThan(0);
    expect(screen).not.toContain(CANARY);
  }, 60_000);

  it('`y`: the plan, the question, then the apply of that plan, exit 0', async () => {
    const env = environment();
    const run = await runOnTerminal([dir], env, 'y');
    expectExit(run, 0);
    const screen = run.stdout;
    expect(run.writesBeforeAnswer).toBe(0);
    const asked = screen.indexOf(`${QUESTION}y\n`);
    expect(asked).toBeGreaterThan(screen.indexOf('+ Project/shop create'));
    const after = screen.slice(asked);
    expect(after).toMatch(/^Plan \(applied: outcomes below\)/m);
    expect(after).toMatch(/^Apply: \d+ succeeded, 0 failed, 0 skipped\.$/m);
    expect(writes().filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(3);
    // The fleet is now as planned: a second run on the terminal has nothing to ask.
    const again = await runOnTerminal([dir], env);
    expectExit(again, 0);
    expect(again.stdout).toContain('No changes. The live state matches the manifests.');
    expect(again.stdout).not.toContain(QUESTION);
    expect(screen).not.toContain(CANARY);
  }, 90_000);

  it('a SIGTERM at the question applies nothing and releases the state lock: the next run starts at once', async () => {
    const env = environment();
    let holder: { pid: number; processStart?: string } | undefined;
    const run = await runOnTerminal([dir], env, async () => {
      // The command itself (not the terminal's shell) holds the lock and names its pid there.
      holder = JSON.parse(await readFile(join(env.RECONCILE_STATE_DIR!, 'state.lock'), 'utf8')) as { pid: number; processStart?: string };
      process.kill(holder.pid, 'SIGTERM');
    });
    expect(holder?.processStart).toMatch(/^\d+$/);
    expect(run.stdout).toContain('Nothing was applied.');
    expect(writes()).toEqual([]);
    await expect(readFile(join(env.RECONCILE_STATE_DIR!, 'state.lock'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    const next = await runCli([dir, '--dry-run'], env);
    expectExit(next, 0);
    expect(next.stderr).not.toContain('locked by');
  }, 90_000);

  it('a lock left by a killed command (SIGKILL at the question) is taken at once: its process is gone', async () => {
    const env = environment();
    const run = await runOnTerminal([dir], env, async () => {
      const holder = JSON.parse(await readFile(join(env.RECONCILE_STATE_DIR!, 'state.lock'), 'utf8')) as { pid: number };
      process.kill(holder.pid, 'SIGKILL');
    });
    expect(run.stdout).not.toContain('Apply:');
    expect(writes()).toEqual([]);
    const left = JSON.parse(await readFile(join(env.RECONCILE_STATE_DIR!, 'state.lock'), 'utf8')) as { pid: number };
    const next = await runCli([dir, '--yes'], env);
    expectExit(next, 0);
    expect(next.stderr).not.toContain('locked by');
    expect(next.stderr).toContain(`took over the stale state lock of pid ${left.pid}`);
    expect(next.stdout).toMatch(/^Apply: \d+ succeeded/m);
  }, 90_000);

  it('--yes applies without asking', async () => {
    const run = await runOnTerminal([dir, '--yes'], environment());
    expectExit(run, 0);
    expect(run.stdout).not.toContain(QUESTION);
    expect(run.stdout).toMatch(/^Apply: \d+ succeeded, 0 failed, 0 skipped\.$/m);
    expect(writes().length).toBeGreaterThan(0);
  }, 90_000);

  it('a standard input that is not a terminal does not ask (scripts and CI are unchanged)', async () => {
    const run = await runCli([dir], environment());
    expectExit(run, 0);
    expect(run.stderr + run.stdout).not.toContain(QUESTION);
    expect(run.stdout).toMatch(/^Apply: \d+ succeeded/m);
  }, 90_000);
});
