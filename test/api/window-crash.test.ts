// A process killed right after a burst must not let its successor burst again: the window file
// is written ahead of the sends (claims), not only after them.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadWindow } from '../../src/api/window-store.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const CHILD = `
const [{ createClient }, { staticToken }] = await Promise.all([import(process.env.CLIENT_JS), import(process.env.AUTH_JS)]);
const client = await createClient({ baseUrl: process.env.URL, auth: staticToken(process.env.TOKEN), rate: { limit: 10, windowMs: 60000 }, stateDir: process.env.STATE });
await Promise.all(Array.from({ length: 10 }, () => client.api.listAllOrganizations()));
// Killed before any debounced write or close could record the burst.
process.kill(process.pid, 'SIGKILL');
`;

function runChild(emu: RunningEmulator, stateDir: string): Promise<number | null> {
  if (!existsSync(new URL('../../dist/api/client.js', import.meta.url))) {
    throw new Error('dist/api/client.js is missing: build first (`npx tsc -p .`; `npm test` does)');
  }
  const env = {
    ...process.env,
    // The built client (`npm test` builds first), as the reconciler runs it.
    CLIENT_JS: new URL('../../dist/api/client.js', import.meta.url).href,
    AUTH_JS: new URL('../../dist/api/auth.js', import.meta.url).href,
    URL: emu.url,
    TOKEN: emu.token,
    STATE: stateDir,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['--input-type=module', '-e', CHILD], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(null) : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
}

describe('persisted window under a crash loop', () => {
  it('a burst killed before any ordinary write is still on disk, so the next start cannot burst', async () => {
    const emu = await startEmulator({ port: 0, rateLimit: { limit: 60, windowMs: 60_000 } });
    cleanup.push(() => emu.close());
    const stateDir = await mkdtemp(join(tmpdir(), 'client-crash-'));
    cleanup.push(() => rm(stateDir, { recursive: true, force: true }));
    await runChild(emu, stateDir);
    expect(emu.requests().filter((e) => e.path.startsWith('/v1/'))).toHaveLength(10);
    const window = await loadWindow(stateDir);
    // Every one of the ten sends is accounted for (as a send, or within a claim written before it).
    expect(window.sends.length).toBeGreaterThanOrEqual(10);
    expect(JSON.parse(await readFile(join(stateDir, 'request-window.json'), 'utf8'))).toHaveProperty('version', 1);
    // The restarted client sees a full window and would wait for it.
    const restarted = await createClient({ baseUrl: emu.url, auth: staticToken(emu.token), rate: { limit: 10, windowMs: 60_000 }, stateDir });
    cleanup.push(() => restarted.close());
    expect(restarted.budget().remaining).toBe(0);
  });
});
