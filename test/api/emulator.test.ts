// The client against the emulator over real loopback HTTP, with a scaled rate window
// (the emulator allows 60 per second, the client budgets 50 per second unless a test says otherwise).
import { mkdtemp, readFile, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator, type RequestLogEntry } from '../../src/emulator/index.js';
import { createClient, type ApiClient, type ClientOptions } from '../../src/api/client.js';
import { oauthTokenSource, staticToken, tokenFile } from '../../src/api/auth.js';
import { ManualClock } from '../../src/util/clock.js';
import { TransientError } from '../../src/api/errors.js';

const SEED = {
  users: [
    { id: 'alice', name: 'Alice', tokens: ['alice-token-0001', 'alice-token-0002'] },
    { id: 'bob', name: 'Bob', tokens: ['bob-token-0001'] },
  ],
  organizations: [{ name: 'Acme', slug: 'acme', members: [{ user: 'alice' }, { user: 'bob' }] }],
};

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function emulator(limit = 60): Promise<RunningEmulator> {
  const running = await startEmulator({ port: 0, seed: SEED, rateLimit: { limit, windowMs: 1_000 } });
  cleanup.push(() => running.close());
  return running;
}

async function client(emu: RunningEmulator, extra: Partial<ClientOptions> = {}): Promise<ApiClient> {
  const created = await createClient({
    baseUrl: emu.url,
    auth: staticToken('alice-token-0001'),
    rate: { limit: 50, windowMs: 1_000 },
    retry: { baseDelayMs: 20, maxDelayMs: 200 },
    ...extra,
  });
  cleanup.push(() => created.close());
  return created;
}

/** The largest number of log entries in any window [t, t + windowMs), by the emulator's arrival times. */
function maxInWindow(entries: RequestLogEntry[], windowMs: number): number {
  const times = entries.map((e) => e.time).sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

const apiEntries = (emu: RunningEmulator) => emu.requests().filter((e) => e.path.startsWith('/v1/'));

describe('client against the emulator', () => {
  it('a burst of 500 calls completes with zero 429 at the budget\'s pace', async () => {
    const emu = await emulator(120);
    const api = await client(emu, { rate: { limit: 100, windowMs: 1_000 }, concurrency: 6 });
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => api.api.listAllOrganizations({ project: `p${i % 7}`, priority: 'drift' })));
    expect(results.every((r) => Array.isArray(r) && r.length === 1)).toBe(true);
    const log = apiEntries(emu);
    expect(log).toHaveLength(500);
    expect(log.filter((e) => e.status === 429)).toHaveLength(0);
    expect(api.stats()).toMatchObject({ sent: 500, rateLimited: 0, retries: 0 });
    // As the service saw them arrive: within its limit. (Arrival times carry loopback and event
    // loop jitter of a few requests; the budget itself is exact at send time, see the property test.)
    expect(maxInWindow(log, 1_000)).toBeLessThanOrEqual(120);
    // And the burst really ran at the budget's pace, not faster: 500 at 100 per second.
    expect(log.at(-1)!.time - log[0]!.time).toBeGreaterThanOrEqual(4 * 1_000 - 100);
  });

  it('a forced 429 block is waited out and nothing is lost', async () => {
    const emu = await emulator();
    const api = await client(emu, { concurrency: 2, random: () => 0 });
    const first = await Promise.all(Array.from({ length: 10 }, () => api.api.listAllProjects()));
    expect(first).toHaveLength(10);
    const blockStart = Date.now();
    emu.setFaults({ rateLimitBlock: { ms: 800 } });
    const names = Array.from({ length: 20 }, (_, i) => `block-${i}`);
    const created = await Promise.all(names.map((name) => api.api.createAnOrganization({ name }).catch((e: unknown) => e)));
    expect(created.filter((c) => c instanceof Error)).toEqual([]);
    const log = apiEntries(emu);
    const refused = log.filter((e) => e.status === 429);
    // Only what was already in flight when the first 429 came back was refused (concurrency 2).
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(2);
    // Every refused request was sent again after the block: each organization exists once.
    const listed = await api.api.listAllOrganizations();
    for (const name of names) expect(listed.filter((o) => o.name === name)).toHaveLength(1);
    // Nothing more reached the service until the block was over (the log counts whole
    // milliseconds: the last call before the block may share its first one).
    const sentDuringBlock = log.filter((e) => e.time > blockStart && e.time < blockStart + 790 && e.status !== 429);
    expect(sentDuringBlock).toEqual([]);
    expect(api.stats().rateLimited).toBe(refused.length);
  });

  it('retries 5xx and resets for idempotent calls only; a POST is not resent', async () => {
    const emu = await emulator();
    const api = await client(emu);
    const [project] = await Promise.all([api.api.createAProject({ name: 'retry-me', organization_id: 'acme', db_pass: 'pw-canary-1', region: 'eu-west-1' })]);
    emu.setFaults({ rules: [{ route: '/v1/projects/{ref}', method: 'GET', errorRate: 1, maxFaults: 1 }, { route: '/v1/organizations/{slug}', method: 'GET', resetRate: 1, maxFaults: 2 }] });
    const fetched = await api.api.getProject(project!.ref);
    expect(fetched.ref).toBe(project!.ref);
    await api.api.getAnOrganization('acme');
    const gets = apiEntries(emu).filter((e) => e.method === 'GET');
    expect(gets.filter((e) => e.route === '/v1/projects/{ref}').map((e) => e.status)).toEqual([500, 200]);
    expect(gets.filter((e) => e.route === '/v1/organizations/{slug}').map((e) => e.status)).toEqual([0, 0, 200]);

    emu.setFaults({ rules: [{ route: '/v1/projects', method: 'POST', errorRate: 1, maxFaults: 1 }] });
    const error = await api.api.createAProject({ name: 'not-twice', organization_id: 'acme', db_pass: 'pw-canary-2', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(String(error)).not.toContain('pw-canary-2');
    expect(apiEntries(emu).filter((e) => e.method === 'POST' && e.route === '/v1/projects')).toHaveLength(2);

    emu.setFaults({ rules: [{ route: '/v1/organizations', method: 'POST', resetRate: 1, maxFaults: 1 }] });
    const reset = await api.api.createAnOrganization({ name: 'reset-once' }).catch((e: unknown) => e);
    expect(reset).toBeInstanceOf(TransientError);
    expect((reset as TransientError).mayHaveApplied).toBe(true);
    expect(apiEntries(emu).filter((e) => e.method === 'POST' && e.route === '/v1/organizations').map((e) => e.status)).toEqual([0]);
  });

  it('a lost answer to a project create surfaces mayHaveApplied, and listing finds the one project', async () => {
    const emu = await emulator();
    const api = await client(emu);
    emu.setFaults({ rules: [{ route: '/v1/projects', method: 'POST', lostAnswerRate: 1, maxFaults: 1 }] });
    const error = await api.api.createAProject({ name: 'lost-answer', organization_id: 'acme', db_pass: 'pw', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).mayHaveApplied).toBe(true);
    expect(apiEntries(emu).filter((e) => e.method === 'POST')).toHaveLength(1);
    // Observe before acting again: the create did apply, exactly once.
    const projects = await api.api.listAllProjects();
    expect(projects.filter((p) => p.name === 'lost-answer')).toHaveLength(1);
  });

  it('when someone else spends the same user\'s budget, lowers its effective limit, reports it, and loses nothing', async () => {
    const emu = await emulator();
    const budgets: number[] = [];
    const api = await client(emu, {
      concurrency: 2,
      telemetry: { requestFinished: () => undefined, rateLimited: () => undefined, queueDepth: () => undefined, budget: (_remaining, limit) => budgets.push(limit) },
    });
    const ours = Array.from({ length: 80 }, () => api.api.listAllOrganizations().then(() => 'ok', (e: unknown) => e));
    await Promise.all(ours.slice(0, 10));
    // Another process of the same user, with another of the user's tokens, spends past the limit.
    const other = Array.from({ length: 70 }, () =>
      fetch(`${emu.url}/v1/organizations`, { headers: { authorization: 'Bearer alice-token-0002' } }).then((r) => r.status),
    );
    expect((await Promise.all(other)).filter((status) => status === 429).length).toBeGreaterThan(0);
    const results = await Promise.all(ours);
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
    expect(api.stats().rateLimited).toBeGreaterThanOrEqual(1);
    expect(Math.min(...budgets)).toBeLessThanOrEqual(25);
    expect(api.budget().limit).toBe(50);
  });

  it('OAuth2: refreshes before expiry, and each rotated refresh token is stored and the old one dead', async () => {
    const clock = new ManualClock(Date.now());
    const emu = await startEmulator({ port: 0, seed: SEED, rateLimit: { limit: 60, windowMs: 1_000 }, wallClock: clock, oauthTokenTtlSeconds: 600 });
    cleanup.push(() => emu.close());
    const dir = await mkdtemp(join(tmpdir(), 'client-oauth-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const { clientId, clientSecret } = emu.oauthClient;
    // The one-time browser step: authorize (the default user approves), then exchange the code.
    const authorize = await fetch(`${emu.url}/v1/oauth/authorize?client_id=${clientId}&response_type=code&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&state=s1`, { redirect: 'manual' });
    const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
    const exchanged = await fetch(`${emu.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, client_secret: clientSecret, code, redirect_uri: 'http://127.0.0.1:9/cb' }),
    });
    const initial = ((await exchanged.json()) as { refresh_token: string }).refresh_token;
    const file = join(dir, 'refresh-token');
    const auth = oauthTokenSource({ baseUrl: emu.url, clientId, clientSecret, refreshToken: initial, refreshTokenFile: file, clock });
    const api = await client(emu, { auth, clock });

    await api.api.listAllProjects();
    const first = (await readFile(file, 'utf8')).trim();
    expect(first).not.toBe(initial);
    // The initial refresh token was rotated away: the service refuses it now.
    const reuse = await fetch(`${emu.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: initial }),
    });
    expect(reuse.status).toBe(400);

    // Within the last tenth of the access token's life: refreshed before the service would refuse it.
    await clock.advance(545_000);
    await api.api.listAllProjects();
    const second = (await readFile(file, 'utf8')).trim();
    expect(second).not.toBe(first);
    await clock.advance(100_000);
    await api.api.listAllProjects();
    const log = apiEntries(emu).map((e) => `${e.method} ${e.route} ${e.status}`);
    expect(log).toEqual([
      'GET /v1/oauth/authorize 303', 'POST /v1/oauth/token 201', // the browser step
      'POST /v1/oauth/token 201', 'GET /v1/projects 200', // the client's first refresh, then its call
      'POST /v1/oauth/token 400', // the initial refresh token presented again
      'POST /v1/oauth/token 201', 'GET /v1/projects 200', // refreshed 55 s before expiry
      'GET /v1/projects 200', // past the first token's expiry: the new one is in use, no 401
    ]);
  });

  it('picks up a token file rotated mid-run without a restart', async () => {
    const emu = await emulator();
    const dir = await mkdtemp(join(tmpdir(), 'client-token-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'token');
    await writeFile(path, 'alice-token-0001\n');
    const api = await client(emu, { auth: tokenFile(path) });
    await Promise.all(Array.from({ length: 5 }, () => api.api.listAllProjects()));
    await writeFile(join(dir, 'token.new'), 'bob-token-0001\n');
    await rename(join(dir, 'token.new'), path);
    await Promise.all(Array.from({ length: 5 }, () => api.api.listAllProjects()));
    expect(apiEntries(emu).map((e) => e.user)).toEqual([...Array(5).fill('alice'), ...Array(5).fill('bob')]);
  });

  it('serves priorities in order and projects in turn, as the emulator sees them arrive', async () => {
    const emu = await emulator();
    const api = await client(emu, { rate: { limit: 20, windowMs: 1_000 }, concurrency: 1 });
    const calls: Array<Promise<unknown>> = [];
    calls.push(api.api.listAllProjects({ priority: 'verify', project: 'warmup' }));
    for (const [slug, project, priority] of [
      ['d-a1', 'a', 'drift'], ['d-a2', 'a', 'drift'], ['d-b1', 'b', 'drift'],
      ['v-a1', 'a', 'verify'], ['w-a1', 'a', 'write'], ['w-a2', 'a', 'write'], ['w-b1', 'b', 'write'], ['v-b1', 'b', 'verify'],
    ] as const) {
      calls.push(api.api.getAnOrganization(slug, { priority, project }).catch(() => undefined));
    }
    await Promise.all(calls);
    const order = apiEntries(emu).map((e) => e.path.split('/')[3] ?? 'list');
    expect(order).toEqual(['list', 'w-a1', 'w-b1', 'w-a2', 'v-a1', 'v-b1', 'd-a1', 'd-b1', 'd-a2']);
  });

  it('the window survives a restart: a new client with the same state directory waits', async () => {
    const emu = await emulator();
    const stateDir = await mkdtemp(join(tmpdir(), 'client-state-'));
    cleanup.push(() => rm(stateDir, { recursive: true, force: true }));
    const first = await createClient({ baseUrl: emu.url, auth: staticToken('alice-token-0001'), rate: { limit: 10, windowMs: 1_000 }, stateDir });
    await Promise.all(Array.from({ length: 10 }, () => first.api.listAllProjects()));
    await first.close();
    const second = await createClient({ baseUrl: emu.url, auth: staticToken('alice-token-0001'), rate: { limit: 10, windowMs: 1_000 }, stateDir });
    expect(second.budget().remaining).toBe(0);
    await second.api.listAllProjects();
    await second.close();
    const saved = JSON.parse(await readFile(join(stateDir, 'request-window.json'), 'utf8')) as { sends: number[] };
    const log = apiEntries(emu);
    expect(log).toHaveLength(11);
    // The 11th send waited until the first of the previous run's ten had left the window.
    const firstRunStart = log[0]!.time;
    expect(saved.sends.at(-1)! - firstRunStart).toBeGreaterThanOrEqual(1_000 - 50);
    expect(log.filter((e) => e.status === 429)).toHaveLength(0);
  });
});
