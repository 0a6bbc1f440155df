// A holder stopped (SIGSTOP: a frozen VM, a long pause) for longer than the lock timeout loses
// its lock to a second process. When it resumes, it must write nothing: no API write, no file
// in the state directory; the successor's records stand.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, expectExit, runCli, type CliRun } from '../e2e/helpers/cli.js';
import { DaemonProcess } from '../daemon/daemon-process.js';

let emulator: RunningEmulator | undefined;
let root: string | undefined;
const children: Array<{ kill(signal: NodeJS.Signals): void; done: Promise<unknown> }> = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await child.done;
  }
  await emulator?.close();
  emulator = undefined;
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

const LOCK_TIMEOUT_MS = 1_500;

function manifests(deletion: 'delete' | 'orphan' | 'removed'): string {
  const docs = ['apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n'];
  if (deletion !== 'removed') {
    docs.push(
      `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: alpha\nspec:\n  organization: acme\n  region: eu-west-1\n  auth:\n    site_url: https://alpha.example\n  policy: { deletion: ${deletion} }\n`,
    );
  }
  return docs.join('---\n');
}

/** Every file of the state directory with its content and modification time. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    // A temporary file (`.NAME.RANDOM.tmp`) is no record: one the holder was writing when it was
    // stopped may be completed when it resumes, and is never renamed into place.
    if (!entry.isFile() || entry.name.endsWith('.tmp')) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length + 1)] = `${(await stat(path)).mtimeMs} ${await readFile(path, 'utf8')}`;
  }
  return out;
}

/** Polls on I/O turns, never on a timer. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

function start(args: string[], env: NodeJS.ProcessEnv): { pid: number; kill(signal: NodeJS.Signals): void; done: Promise<CliRun> } {
  const child = spawn(NODE, [BIN, ...args], { cwd: REPO, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const handle = { pid: child.pid!, kill: (signal: NodeJS.Signals) => void child.kill(signal), done: new Promise<CliRun>((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))) };
  children.push(handle);
  return handle;
}

describe('a paused holder that lost its lock', () => {
  it('writes nothing to the state directory or the API after the takeover, and the successor\'s inventory survives', async () => {
    // A creation takes 120 s / 40 = 3 s: the first process is still waiting for its project when it is stopped.
    emulator = await startEmulator({ port: 0, speed: 40, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    root = await mkdtemp(join(tmpdir(), 'fence-e2e-'));
    const dir = join(root, 'manifests');
    const stateDir = join(root, 'state');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'fleet.yaml'), manifests('delete'));
    const env = {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: stateDir,
      RECONCILE_RATE_LIMIT: '1000/1s',
      RECONCILE_LOCK_TIMEOUT: `${LOCK_TIMEOUT_MS}ms`,
    };

    // A: creates alpha under `deletion: delete`, and is stopped while it waits for it.
    const a = start([dir], env);
    await until(() => emulator!.requests().some((r) => r.method === 'POST' && r.route === '/v1/projects'));
    a.kill('SIGSTOP');
    // B may take over once A's last heartbeat is older than the lock timeout.
    await until(async () => {
      const lock = JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8')) as { heartbeatAt: number };
      return Date.now() - lock.heartbeatAt > LOCK_TIMEOUT_MS + 200;
    });

    // B: a newer revision moves alpha to `deletion: orphan`, and records it.
    await writeFile(join(dir, 'fleet.yaml'), manifests('orphan'));
    const b = await runCli([dir], env);
    expectExit(b, 0);
    expect(b.stderr).toContain('took over the stale state lock');
    const afterB = await snapshot(stateDir);
    const inventoryB = JSON.parse(await readFile(join(stateDir, 'inventory.json'), 'utf8')) as { projects: Record<string, { deletion: string }>; generation?: number };
    expect(inventoryB.projects.alpha?.deletion).toBe('orphan');
    // A holds generation 1, B took over as generation 2, and its records say so.
    expect(inventoryB.generation).toBe(2);
    const sent = emulator.requests().length;

    // A resumes: it finds its lock gone and stops.
    a.kill('SIGCONT');
    const resumed = await a.done;
    expectExit(resumed, 1);
    const writesAfter = emulator.requests().slice(sent).filter((r) => r.method !== 'GET');
    expect(writesAfter.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(await snapshot(stateDir)).toEqual(afterB);
    expect(resumed.stderr).toMatch(/state lock/);

    // Removing alpha's manifest under B's record orphans it: the live project stays.
    await writeFile(join(dir, 'fleet.yaml'), manifests('removed'));
    expectExit(await runCli([dir], env), 0);
    expect(emulator.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    const live = (await (await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${emulator.token}` } })).json()) as Array<{ name: string }>;
    expect(live.map((p) => p.name)).toContain('alpha');
  }, 90_000);

  it('a daemon stopped past the lock timeout and taken over exits 1 when it resumes, having written nothing (its watcher saw the new revision)', async () => {
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    root = await mkdtemp(join(tmpdir(), 'fence-daemon-e2e-'));
    const dir = join(root, 'manifests');
    const stateDir = join(root, 'state');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'fleet.yaml'), manifests('delete'));
    const env = {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: stateDir,
      RECONCILE_RATE_LIMIT: '1000/1s',
      RECONCILE_LOCK_TIMEOUT: `${LOCK_TIMEOUT_MS}ms`,
    };
    const daemon = new DaemonProcess([dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--observe', 'none'], env);
    children.push({ kill: (signal) => daemon.signal(signal), done: daemon.exited });
    await daemon.waitFor((l) => l.msg === 'pass finished');
    daemon.signal('SIGSTOP');
    await until(async () => {
      const lock = JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8')) as { heartbeatAt: number };
      return Date.now() - lock.heartbeatAt > LOCK_TIMEOUT_MS + 200;
    });

    await writeFile(join(dir, 'fleet.yaml'), manifests('orphan'));
    const b = await runCli([dir], env);
    expectExit(b, 0);
    expect(b.stderr).toContain('took over the stale state lock');
    const afterB = await snapshot(stateDir);
    const sent = emulator.requests().length;

    daemon.signal('SIGCONT');
    expect(await daemon.exited).toBe(1);
    expect(daemon.lines.some((l) => typeof l.msg === 'string' && l.msg.includes('state lock was taken over'))).toBe(true);
    expect(emulator.requests().slice(sent).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(await snapshot(stateDir)).toEqual(afterB);
    const inventory = JSON.parse(await readFile(join(stateDir, 'inventory.json'), 'utf8')) as { projects: Record<string, { deletion: string }> };
    expect(inventory.projects.alpha?.deletion).toBe('orphan');
  }, 90_000);
});
