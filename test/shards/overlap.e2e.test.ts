// Two processes on one state directory, as users start them: overlapping one-shot applies,
// and a second daemon beside a first that is then killed with SIGKILL.
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';
import { DaemonProcess } from '../daemon/daemon-process.js';

let emulator: RunningEmulator | undefined;
const daemons: DaemonProcess[] = [];
/** Runs started in the background: each has exited before its directory is removed. */
const running: Array<Promise<unknown>> = [];
const roots: string[] = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const d of daemons.splice(0)) {
    d.signal('SIGKILL');
    await d.exited;
  }
  await Promise.all(running.splice(0));
  await emulator?.close();
  emulator = undefined;
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function fleet(projects: string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'lock-e2e-'));
  roots.push(root);
  const dir = join(root, 'manifests');
  await mkdir(dir, { recursive: true });
  const docs = [
    'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n',
    ...projects.map((name) => `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: acme\n  region: eu-west-1\n`),
  ];
  await writeFile(join(dir, 'fleet.yaml'), docs.join('---\n'));
  return dir;
}

async function projectCounts(): Promise<Map<string, number>> {
  const response = await fetch(`${emulator!.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator!.token}` } });
  const counts = new Map<string, number>();
  for (const p of (await response.json()) as Array<{ name: string }>) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  return counts;
}

describe('one writer per state directory', () => {
  it('two overlapping applies create no duplicate, and the second exits 1 naming the holder', async () => {
    // A creation takes 120 s / 40 = 3 s: the first run is still waiting when the second starts.
    emulator = await startEmulator({ port: 0, speed: 40, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    const dir = await fleet(['alpha', 'beta']);
    const stateDir = join(dir, '..', 'state');
    const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, RECONCILE_RATE_LIMIT: '1000/1s' };
    const first = runCliWithPid([dir], env);
    // The second starts once the first has written its first project: it holds the lock by then.
    await untilTrue(() => emulator!.requests().some((r) => r.method === 'POST' && r.route === '/v1/projects'));
    const second = await runCli([dir], env);
    expectExit(second, 1);
    expect(second.stderr).toMatch(new RegExp(`state directory ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is locked by pid ${first.pid} on \\S+ \\(reconcile ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    const done = await first.done;
    expectExit(done, 0);
    expect(Object.fromEntries(await projectCounts())).toEqual({ alpha: 1, beta: 1 });
    // Released at exit: the next run goes ahead.
    expect(existsSync(join(stateDir, 'state.lock'))).toBe(false);
    expectExit(await runCli([dir, '--dry-run', '--detailed-exitcode'], env), 0);
  }, 60_000);

  it('a second daemon waits, not ready, naming the holder; it takes over at once when the holder is SIGKILLed (its process is gone), and converges without a duplicate', async () => {
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    const dir = await fleet(['alpha', 'beta']);
    const stateDir = join(dir, '..', 'state');
    const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, RECONCILE_RATE_LIMIT: '1000/1s', RECONCILE_LOCK_TIMEOUT: '2s' };
    const args = [dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--observe', 'none'];
    const holder = new DaemonProcess(args, env);
    daemons.push(holder);
    await holder.waitFor((l) => l.msg === 'pass finished');
    const holderPid = (JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8')) as { pid: number }).pid;

    const waiter = new DaemonProcess(args, env);
    daemons.push(waiter);
    const url = (await waiter.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('serving /metrics, /healthz'))).metrics as string;
    const waiting = await waiter.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('waiting: '));
    expect(waiting.msg).toContain(`is locked by pid ${holderPid}`);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { reasons: string[] }).reasons.join(' ')).toMatch(new RegExp(`locked by pid ${holderPid} on \\S+ \\(reconcile .*--watch`));
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^reconciler_state_lock_held 0$/m);
    // While the holder lives the waiter never writes: no pass of its own.
    expect(waiter.lines.some((l) => l.msg === 'daemon started')).toBe(false);

    holder.signal('SIGKILL');
    await holder.exited;
    const took = await waiter.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('took over the stale state lock'));
    expect(took.msg).toContain(`pid ${holderPid}`);
    // Taken over at once: the holder ran on this host and its process is gone (no process with its pid and start time).
    expect(took.holderGone).toBe(true);
    expect(took.heartbeatAgeMs as number).toBeLessThanOrEqual(took.lockTimeoutMs as number);
    await waiter.waitFor((l) => l.msg === 'pass finished');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^reconciler_state_lock_held 1$/m);
    expect(Object.fromEntries(await projectCounts())).toEqual({ alpha: 1, beta: 1 });
  }, 90_000);
});

/** Polls on I/O turns (the emulator's log grows as requests arrive), never on a timer. */
async function untilTrue(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

function runCliWithPid(args: string[], env: NodeJS.ProcessEnv): { pid: number; done: Promise<{ code: number; stdout: string; stderr: string }> } {
  const child = spawn(NODE, [BIN, ...args], { cwd: REPO, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
  running.push(done);
  return { pid: child.pid!, done };
}
