// A fleet created from nothing, through the built command, twice on fresh emulators: once by a
// direct apply, once by a saved plan's apply. Both apply the one plan: the same writes and the
// same reads, the new projects' configuration written as planned, never planned a second time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, copyFixture, expectExit, runCli } from './helpers/cli.js';

const FIXTURE = 'test/fixtures/reconcile-e2e';
/** The readiness polls: how many depends on how long a project takes to come up. */
const POLLS = new Set(['GET /v1/projects/{ref}', 'GET /v1/projects/{ref}/health']);

interface Side {
  emulator: RunningEmulator;
  dir: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

const sides: Side[] = [];

async function side(): Promise<Side> {
  const emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  const dir = await copyFixture(FIXTURE);
  const work = await mkdtemp(join(tmpdir(), 'reconcile-plan-once-'));
  const env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: join(work, 'state'),
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: 'canary-plan-once-db-2b7d41',
    E2E_SMTP_PASS: 'canary-plan-once-smtp-90c3e5',
  };
  const created = { emulator, dir, work, env };
  sides.push(created);
  return created;
}

/** `METHOD route` of every API request after `from`, readiness polls left out, sorted. */
function requestsSince(s: Side, from: number): string[] {
  return s.emulator
    .requests()
    .slice(from)
    .filter((r) => !r.path.startsWith('/_emulator'))
    .map((r) => `${r.method} ${r.route}`)
    .filter((line) => !POLLS.has(line))
    .sort();
}

beforeAll(() => {
  assertBuilt();
});

afterAll(async () => {
  for (const s of sides) {
    await s.emulator.close();
    await rm(dirname(s.dir), { recursive: true, force: true });
    await rm(s.work, { recursive: true, force: true });
  }
});

describe('one plan, applied directly or from a file (built command)', () => {
  it('creates a fleet from nothing with the same requests either way, each new project read back once', async () => {
    const direct = await side();
    const fromDirect = direct.emulator.requests().length;
    const run = await runCli([direct.dir, '--output', 'json'], direct.env);
    expectExit(run, 0);
    const directRequests = requestsSince(direct, fromDirect);
    const doc = JSON.parse(run.stdout);
    const steps = doc.outcomes.filter((o: { action: string }) => o.action === 'wait' || o.action === 'verify');
    expect(steps.map((o: { entryId: string; result: string }) => `${o.entryId} ${o.result}`).sort()).toEqual(
      ['blog', 'shop', 'web'].flatMap((p) => [`Project/${p}#ready success`, `Project/${p}#verify success`]).sort(),
    );

    const saved = await side();
    const file = join(saved.work, 'plan.json');
    const plan = await runCli([saved.dir, '--dry-run', '--out', file], saved.env);
    expect([0, 2]).toContain(plan.code);
    const fromSaved = saved.emulator.requests().length;
    expectExit(await runCli(['apply', file, saved.dir], saved.env), 0);
    expect(requestsSince(saved, fromSaved)).toEqual(directRequests);

    // Nothing left to do on either side.
    expectExit(await runCli([direct.dir, '--dry-run', '--detailed-exitcode'], direct.env), 0);
    expectExit(await runCli([saved.dir, '--dry-run', '--detailed-exitcode'], saved.env), 0);
  });
});
