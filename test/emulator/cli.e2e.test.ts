// `reconcile emulator` as a user runs it: the built command (npm test builds dist/ first).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const bin = join(root, 'dist/cli/bin.js');
const node = join(root, 'node_modules/.bin/node');

function startCommand(args: string[]) {
  if (!existsSync(bin)) throw new Error('dist/cli/bin.js is missing: build first with `npx tsc -p .` (npm test does)');
  const child = spawn(node, [bin, 'emulator', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RECONCILE_RATE_LIMIT: '' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines: string[] = [];
  const twoLines = new Promise<string[]>((resolve, reject) => {
    const reader = createInterface({ input: child.stdout });
    reader.on('line', (line) => {
      lines.push(line);
      if (lines.length === 2) resolve(lines.slice());
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code} before printing two lines: ${stderr}`)));
  });
  // A run that is expected to fail never prints its lines; nobody awaits twoLines then.
  twoLines.catch(() => undefined);
  return { child, twoLines, exited, stderr: () => stderr, lines };
}

describe('reconcile emulator (built command)', () => {
  it('prints the URL and a token, serves the API, and exits 0 on SIGTERM', async () => {
    const run = startCommand(['--port', '0', '--token', 'pat_cli_test_token', '--rate-limit', '5/60s', '--speed', '1000']);
    const [urlLine, tokenLine] = await run.twoLines;
    expect(urlLine).toMatch(/^MANAGEMENT_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
    expect(tokenLine).toBe('MANAGEMENT_API_TOKEN=pat_cli_test_token');
    const url = urlLine!.split('=')[1]!;
    const answer = await fetch(`${url}/v1/organizations`, { headers: { authorization: 'Bearer pat_cli_test_token' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('5');
    expect((await answer.json())[0].name).toBe('Default Organization');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.lines).toHaveLength(2);
  });

  it('uses the service limit (60) by default and loads a seed file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emulator-cli-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const seed = join(dir, 'seed.json');
    await writeFile(seed, JSON.stringify({ users: [{ name: 'Seeded', tokens: ['pat_seeded_user_token'] }], projects: [{ ref: 'clicliclicliclicliab', name: 'p', organization: 'Default Organization' }] }));
    const run = startCommand(['--port', '0', '--seed', seed]);
    const [urlLine, tokenLine] = await run.twoLines;
    expect(tokenLine).toBe('MANAGEMENT_API_TOKEN=pat_seeded_user_token');
    const answer = await fetch(`${urlLine!.split('=')[1]}/v1/projects/clicliclicliclicliab`, { headers: { authorization: 'Bearer pat_seeded_user_token' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('60');
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('exits 1 with a message for a bad seed file', async () => {
    const run = startCommand(['--port', '0', '--seed', '/nonexistent/seed.yaml']);
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('/nonexistent/seed.yaml');
    expect(run.lines).toEqual([]);
  });
});
