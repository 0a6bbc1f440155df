// The built command as a person sees it on a terminal (a pseudo-terminal from util-linux
// `script`), and as a pipe sees it: progress lines on every long wait, JSON with level names.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, copyFixture, expectExit, runCli, type CliRun } from './helpers/cli.js';

// The emulator's window, and so the 429 block a rate-limit fault starts: long enough for a
// countdown of two lines (one line per 5 s of clock time), measured from the command's first request.
const WINDOW_MS = 8_000;

let emulator: RunningEmulator;
let dir: string;
let stateRoot: string;
let runs = 0;

beforeAll(async () => {
  assertBuilt();
  // Lifecycles 60 times faster: a new project is ACTIVE_HEALTHY after 2 s of real time.
  emulator = await startEmulator({ port: 0, speed: 60, rateLimit: { limit: 100_000, windowMs: WINDOW_MS } });
  dir = await copyFixture('test/fixtures/reconcile-e2e');
  stateRoot = await mkdtemp(join(tmpdir(), 'reconcile-terminal-'));
});

afterAll(async () => {
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(stateRoot, { recursive: true, force: true });
});

beforeEach(async () => {
  await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
  // The first list of projects meets a 429, as if someone else had spent the budget: a block of one window.
  const faults = await fetch(`${emulator.url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [{ route: '/v1/projects', method: 'GET', rateLimitRate: 1, maxFaults: 1 }] }),
  });
  expect(faults.status).toBe(200);
});

function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  runs += 1;
  return {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(stateRoot, `state-${runs}`),
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: 'terminal-e2e-db-5c1e',
    E2E_SMTP_PASS: 'terminal-e2e-smtp-77d0',
    ...extra,
  };
}

/** Runs the built command on a pseudo-terminal; stdout and stderr both reach it, as on a screen. */
function runOnTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const command = [NODE, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout: stdout.replaceAll('\r\n', '\n'), stderr }));
  });
}

describe('progress on a terminal', () => {
  it('shows a 429 countdown and the wait for new projects as one concise line each, without colour under NO_COLOR', async () => {
    // --yes: the apply does not stop to ask (on a terminal it would show the plan and ask first).
    const run = await runOnTerminal([dir, '--yes'], environment({ NO_COLOR: '1' }));
    expectExit(run, 0);
    const screen = run.stdout;
    // The countdown: the first line when the block is met, another while it still runs.
    const countdown = [...screen.matchAll(/INFO +rate limited \(429\): sending again in (\d+)s, \d+ requests? waiting/g)].map((m) => Number(m[1]));
    expect(countdown.length).toBeGreaterThanOrEqual(2);
    expect(countdown[0]!).toBeGreaterThan(countdown.at(-1)!);
    // Which project, what it waits for, for how long so far.
    expect(screen).toMatch(/INFO +waiting for project (blog|shop|web) to become ACTIVE_HEALTHY: COMING_UP \(\d+s so far\)/);
    // Human lines, not JSON; no level numbers; NO_COLOR honoured.
    expect(screen).not.toMatch(/^\{"level"/m);
    expect(screen).not.toContain('\u001b[');
    expect(screen).toContain('+ Project/shop');
    expect(screen).not.toContain('terminal-e2e-db-5c1e');
  }, 60_000);

  it('stays JSON with level names when piped, progress lines included', async () => {
    const run = await runCli([dir], environment());
    expectExit(run, 0);
    const lines = run.stderr.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.every((line) => typeof line.level === 'string')).toBe(true);
    const waits = lines.filter((line) => line.wait !== undefined);
    expect(waits.some((line) => line.wait === 'rate-limit' && line.level === 'info' && typeof line.remainingS === 'number')).toBe(true);
    expect(waits.some((line) => line.wait === 'project' && line.status === 'COMING_UP' && typeof line.elapsedS === 'number')).toBe(true);
    expect(run.stderr).not.toContain('\u001b[');
    expect(run.stderr).not.toContain('terminal-e2e-db-5c1e');
  }, 60_000);
});
