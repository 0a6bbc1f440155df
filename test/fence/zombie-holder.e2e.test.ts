// A holder killed with SIGKILL whose parent never reaps it (a container's first process that
// reaps nothing, a shell that never waits) stays a zombie: its pid exists and started when the
// lock file says. It holds nothing: the next apply takes its lock over at once, as for a holder
// whose process is gone, without waiting for the lock timeout.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

let emulator: RunningEmulator | undefined;
let root: string | undefined;
const parents: Array<() => void | Promise<void>> = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const kill of parents.splice(0)) await kill();
  await emulator?.close();
  emulator = undefined;
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** Polls on I/O turns, never on a timer. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

describe('a holder killed and never reaped', () => {
  it.skipIf(process.platform !== 'linux')('is taken over at once by the next apply, well before the lock timeout', async () => {
    emulator = await startEmulator({ port: 0, speed: 40, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    root = await mkdtemp(join(tmpdir(), 'fence-zombie-e2e-'));
    const dir = join(root, 'manifests');
    const stateDir = join(root, 'state');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'fleet.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n---\napiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: alpha\nspec:\n  organization: acme\n  region: eu-west-1\n');
    // An hour: only a holder known to be gone is taken over within this test.
    const env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, RECONCILE_RATE_LIMIT: '1000/1s', RECONCILE_LOCK_TIMEOUT: '1h' };
    // The apply runs under a shell that then becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', `"${NODE}" "${BIN}" "${dir}" >/dev/null 2>&1 & echo $!; exec sleep 600`], { cwd: REPO, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    const parentClosed = new Promise((resolve) => parent.once('close', resolve));
    parents.push(async () => {
      parent.kill('SIGKILL');
      await parentClosed;
    });
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    await until(() => out.includes('\n'));
    const pid = Number(out.trim());
    parents.push(async () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      // A zombie writes nothing: the state directory can go.
      await until(() => processState(pid) === undefined || processState(pid) === 'Z');
    });
    // Killed mid-pass, while it holds the lock.
    await until(() => emulator!.requests().some((r) => r.method === 'POST' && r.route === '/v1/projects'));
    expect(JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8'))).toMatchObject({ pid });
    process.kill(pid, 'SIGKILL');
    await until(() => processState(pid) === 'Z');

    const next = await runCli([dir], env);
    expectExit(next, 0);
    expect(next.stderr).toContain(`took over the stale state lock of pid ${pid}`);
    expect(next.stderr).not.toContain('is locked by');
  }, 90_000);
});
