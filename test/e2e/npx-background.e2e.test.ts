// A background `npx reconcile emulator ... &` (the pattern docs/emulator.md shows) stops with
// `kill $!`: npm forwards the SIGTERM to the shell it runs the command in, which dies without
// passing it on; the command notices it lost its parent and stops as on SIGTERM, releasing its
// port. Run with bash as a script would, with the machine's PATH and without npm's variables.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, assertBuilt } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'reconcile-npx-bg-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function shellEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !/^(npm_|MANAGEMENT_API_|RECONCILE_)/i.test(key)) env[key] = value;
  return env;
}

/** Process ids whose command line holds `marker` (the emulator's unique token). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('a background npx command and kill $!', () => {
  it('the emulator stops, the whole chain with it, and the port is free again', async () => {
    assertBuilt();
    const token = `pat_npxbackground${process.pid}${Date.now()}`;
    const out = join(work, 'emulator.out');
    // The script waits for the two lines, kills the background npx, waits for it, and reports.
    const script = [
      `npx reconcile emulator --port 0 --token ${token} > "${out}" 2>&1 &`,
      'pid=$!',
      `for i in $(seq 1 600); do grep -q MANAGEMENT_API_TOKEN "${out}" && break; sleep 0.1; done`,
      'kill $pid',
      'wait $pid',
      'echo "npx exited with $?"',
    ].join('\n');
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('bash', ['-c', script], { cwd: REPO, env: shellEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const url = /^MANAGEMENT_API_URL=(.+)$/m.exec(readFileSync(out, 'utf8'))?.[1];
    expect(url, readFileSync(out, 'utf8')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The command stops within a few polls of its parent going away: wait for it, boundedly.
    for (let attempt = 0; attempt < 200 && processesWith(token).length > 0; attempt++) await new Promise((r) => setTimeout(r, 50));
    const left = processesWith(token);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left, 'processes of the emulator still running after kill $!').toEqual([]);
    await expect(fetch(`${url}/v1/projects`)).rejects.toThrow();
  }, 120_000);
});
