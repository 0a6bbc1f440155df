// The budget said before the wait, through the built command against an emulator started here:
// a plan of the live examples says how many reads remain and how long they take at its budget,
// and (at the one-shot default) how a CI identity of its own runs at the full budget; a wait
// for the budget says how much of it earlier runs with the state directory spent; a pull
// request's plan (markdown) carries the apply's forecast at the daemon's budget.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, assertBuilt, copyFixture, expectExit, filesBelow, runCli } from './helpers/cli.js';

let emulator: RunningEmulator;
let dir: string;
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture('examples');
  work = await mkdtemp(join(tmpdir(), 'reconcile-forecast-'));
  env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_LOG_FORMAT: 'json' };
  for (const file of await filesBelow(dir)) {
    if (!/\.ya?ml$/.test(file.path)) continue;
    for (const match of file.text.matchAll(/^\s*env:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/gm)) env[match[1]!] = `value-${createHash('sha256').update(match[1]!).digest('hex').slice(0, 12)}`;
  }
  // The examples, live: an apply at a budget that does not wait.
  expectExit(await runCli([dir, '--yes', '--rate-limit', '1000/1s', '--state-dir', join(work, 'apply')], env), 0);
}, 300_000);

afterAll(async () => {
  await emulator?.close();
  if (dir) await rm(dirname(dir), { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs the built command until a log line matches, then stops it (SIGTERM) and returns that line. */
function untilLine(args: string[], extraEnv: NodeJS.ProcessEnv, match: (line: { msg?: string; [key: string]: unknown }) => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let buffer = '';
    let found: Record<string, unknown> | undefined;
    child.stderr.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let newline = buffer.indexOf('\n'); newline !== -1 && !found; newline = buffer.indexOf('\n')) {
        const text = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (match(line)) {
          found = line;
          child.kill('SIGTERM');
        }
      }
    });
    child.once('error', reject);
    child.once('close', (code) => (found ? resolve(found) : reject(new Error(`exited ${code} without the line; stderr ends: ${buffer.slice(-2000)}`))));
  });
}

describe('the budget, said before the wait', () => {
  it('forecasts the plan\'s reads at the one-shot default and says how a CI identity of its own runs at the full budget', async () => {
    const line = await untilLine([dir, '--dry-run', '--state-dir', join(work, 'default')], env, (l) => typeof l.msg === 'string' && l.msg.startsWith('planning the projects:'));
    const reads = line.reads as number;
    // One read or more per managed part of each of the three live projects (17 for the examples):
    // more than a minute at 15/60s, so the line says how to have more.
    expect(reads).toBeGreaterThanOrEqual(15);
    expect(line.rateLimit).toBe('15/60s');
    const minutes = Math.round((reads * 4) / 60);
    expect(line.msg).toBe(
      `planning the projects: ${reads} reads at 15/60s: about ${minutes} min; this run has the one-shot default budget (15/60s, so that a daemon on the same identity keeps 45/60s); ` +
        "a CI identity of its own (another user's token: the limit is per user) runs at the full budget with --rate-limit 50/60s",
    );
  });

  it('says how much of the window earlier runs with the same state directory spent when it waits', async () => {
    const stateDir = join(work, 'shared');
    // A first run spends the window of the state directory (15 requests at most per 60 s).
    const first = await untilLine([dir, '--dry-run', '--state-dir', stateDir], env, (l) => l.wait === 'budget');
    expect(first.msg).toMatch(/^waiting for the request budget \(15 per 60s\): \d+ queued, next slot in \d+s$/);
    const second = await untilLine([dir, '--dry-run', '--state-dir', stateDir], env, (l) => l.wait === 'budget');
    // The window the first run persisted: up to its 15 sends (claimed a few at a time).
    const earlier = second.earlierRuns as number;
    expect(earlier).toBeGreaterThan(0);
    expect(earlier).toBeLessThanOrEqual(15);
    expect(second.msg).toMatch(new RegExp(`^waiting for the request budget \\(15 per 60s\\): \\d+ queued, next slot in \\d+s \\(${earlier} of the requests of the last 60s were sent by earlier runs with this state directory, whose request window this run continues\\)$`));
  });

  it('puts the apply\'s forecast at the daemon\'s default budget in the pull request\'s plan', async () => {
    const file = join(dir, 'projects', 'shop-staging.yaml');
    const original = await readFile(file, 'utf8');
    await writeFile(file, original.replace(/site_url: (\S+)/, 'site_url: https://changed.example'));
    try {
      const run = await runCli([dir, '--dry-run', '--output', 'markdown', '--rate-limit', '1000/1s', '--state-dir', join(work, 'markdown')], env);
      expectExit(run, 0);
      const forecast = run.stdout.split('\n').find((l) => l.startsWith('Apply forecast: '));
      expect(forecast).toMatch(/^Apply forecast: \d+ requests \(1 write, \d+ reads\) at the daemon's default budget \(45\/60s\): (under a minute|about 1 min)\.$/);
      // Its reads: those the dry run made (an apply observes again), and one to verify the write.
      const finished = run.stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg?: string; requests?: number }).find((l) => l.msg === 'pass finished')!;
      expect(forecast).toContain(`(1 write, ${finished.requests! + 1} reads)`);
    } finally {
      await writeFile(file, original);
    }
  });
});
