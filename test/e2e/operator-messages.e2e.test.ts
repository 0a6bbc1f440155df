// What the built command says when the user or the network is at fault: the host it could not
// reach, the name it guesses was meant, and (on a terminal) each manifest error once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { exportSeed } from '../reconcile/helpers/export-seed.js';
import { BIN, NODE, REPO, assertBuilt, copyFixture, expectExit, runCli, type CliRun } from './helpers/cli.js';

const DB_PASS = 'messages-e2e-db-3f81';
const SMTP_PASS = 'messages-e2e-smtp-9a0c';

let emulator: RunningEmulator;
let dir: string;
let stateRoot: string;
let runs = 0;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, seed: exportSeed(), rateLimit: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture('test/fixtures/reconcile-e2e');
  stateRoot = await mkdtemp(join(tmpdir(), 'reconcile-messages-'));
});

afterAll(async () => {
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(stateRoot, { recursive: true, force: true });
});

function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  runs += 1;
  return {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(stateRoot, `state-${runs}`),
    E2E_DB_PASS: DB_PASS,
    E2E_SMTP_PASS: SMTP_PASS,
    ...extra,
  };
}

/** A loopback port nothing listens on: bound, noted, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as { port: number };
  await new Promise((resolvePromise) => server.close(resolvePromise));
  return port;
}

/** Runs the built command on a pseudo-terminal (util-linux `script`): stdout and stderr both a TTY, as on a screen. */
function runOnTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const command = [NODE, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', NO_COLOR: '1', ...env },
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

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

describe('network errors', () => {
  it('name the host and port that could not be reached, never the token or the credentials of the URL', async () => {
    const port = await closedPort();
    const run = await runCli(
      [dir, '--dry-run', '--log-format', 'json'],
      environment({ MANAGEMENT_API_URL: `http://operator:url-pass-77e1@127.0.0.1:${port}/api` }),
    );
    expectExit(run, 1);
    const message = `cannot reach 127.0.0.1:${port} (ECONNREFUSED)`;
    expect(run.stdout).toContain(message);
    const logged = run.stderr.trim().split('\n').map((line) => JSON.parse(line) as { level: string; error?: string });
    expect(logged.some((line) => line.level === 'error' && line.error?.includes(message))).toBe(true);
    for (const text of [run.stdout, run.stderr]) {
      expect(text).not.toContain('url-pass-77e1');
      expect(text).not.toContain('operator');
      expect(text).not.toContain(emulator.token);
    }
  }, 30_000);
});

describe('did you mean', () => {
  it('status --project suggests the nearest Project manifest name', async () => {
    const run = await runCli(['status', dir, '--live', '--project', 'shpo'], environment());
    expectExit(run, 1);
    expect(run.stderr).toContain('--project `shpo` names no Project manifest');
    expect(run.stderr).toContain('did you mean `shop`?');
  }, 30_000);

  it('branch --project suggests the nearest manifest name, export --project the nearest live name', async () => {
    const branch = await runCli(['branch', 'push', 'main', '--project', 'blgo', '--manifests', dir], environment());
    expectExit(branch, 1);
    expect(branch.stderr).toContain('no live project with the ref or name `blgo`; did you mean `blog`?');
    const exported = await runCli(['export', '--project', 'shpo'], environment());
    expectExit(exported, 1);
    expect(exported.stderr).toContain('no live project has the ref or name `shpo` (did you mean `shop`?)');
    // Nothing near: no guess.
    const far = await runCli(['export', '--project', 'inventory'], environment());
    expectExit(far, 1);
    expect(far.stderr).toContain('no live project has the ref or name `inventory`\n');
  }, 30_000);

  it('validate suggests the kind a misspelt one was meant to be', async () => {
    const bad = await mkdtemp(join(tmpdir(), 'reconcile-messages-kind-'));
    try {
      const text = (await readFile(join(dir, 'shop.yaml'), 'utf8')).replace('kind: Project', 'kind: Projct');
      await writeFile(join(bad, 'shop.yaml'), text);
      const run = await runCli(['validate', bad], {});
      expectExit(run, 1);
      expect(`${run.stdout}${run.stderr}`).toMatch(/shop\.yaml:3:\d+.*unknown kind `Projct`.*did you mean `Project`\?/);
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('manifest errors on a terminal', () => {
  let invalid: string;
  beforeAll(async () => {
    invalid = await copyFixture('test/fixtures/reconcile-e2e');
    const shop = join(invalid, 'shop.yaml');
    await writeFile(shop, (await readFile(shop, 'utf8')).replace('max_rows: 500', 'max_rows: lots').replace('site_url:', 'site_ulr:'));
  });
  afterAll(async () => {
    await rm(dirname(invalid), { recursive: true, force: true });
  });

  it('shows each error once on a screen: in the plan, without a log line repeating it', async () => {
    const run = await runOnTerminal([invalid, '--dry-run'], environment());
    expectExit(run, 1);
    const screen = run.stdout;
    expect(screen).toContain('Manifests are invalid (2 errors): nothing was planned or applied.');
    expect(occurrences(screen, 'unknown field `site_ulr`')).toBe(1);
    expect(occurrences(screen, 'got the string `lots`')).toBe(1);
    expect(screen).not.toMatch(/ERROR/);
    expect(screen).toContain('did you mean `site_url`?');
  }, 30_000);

  it('keeps both when piped: the plan on stdout, one JSON error line per error on stderr', async () => {
    const run = await runCli([invalid, '--dry-run'], environment());
    expectExit(run, 1);
    expect(run.stdout).toContain('Manifests are invalid (2 errors)');
    const errors = run.stderr.trim().split('\n').map((line) => JSON.parse(line) as { level: string; file: string }).filter((line) => line.level === 'error');
    expect(errors).toHaveLength(2);
    expect(errors.every((line) => line.file === 'shop.yaml')).toBe(true);
  }, 30_000);
});
