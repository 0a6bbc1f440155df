import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { ManualClock } from '../../src/util/clock.js';
import { call, defaultOrg, startWithManualClock, type Harness } from './helpers.js';

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function harness(options: Parameters<typeof startWithManualClock>[0] = {}): Promise<Harness> {
  const h = await startWithManualClock(options);
  running.push(h.emulator);
  return h;
}

describe('emulator core', () => {
  it('answers 401 {"message":"Unauthorized"} without a token or with an unknown one', async () => {
    const { emulator } = await harness();
    const none = await call(emulator, 'GET', '/v1/projects', { token: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ message: 'Unauthorized' });
    const wrong = await call(emulator, 'GET', '/v1/projects', { token: 'pat_not-a-real-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ message: 'Unauthorized' });
    expect(wrong.headers.get('x-ratelimit-limit')).toBe('60');
  });

  it('accepts the --token value as the default user token', async () => {
    const { emulator } = await harness({ token: 'pat_fixed_token_for_tests' });
    expect(emulator.token).toBe('pat_fixed_token_for_tests');
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(200);
  });

  it('answers 404 for unknown paths and 405 with Allow for unknown methods', async () => {
    const { emulator } = await harness();
    const missing = await call(emulator, 'GET', '/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/no endpoint/);
    const wrongMethod = await call(emulator, 'PUT', '/v1/projects');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
    expect(wrongMethod.body.message).toMatch(/not allowed/);
  });

  it('logs each request with its route template, status and user', async () => {
    const { emulator } = await harness();
    await call(emulator, 'GET', '/v1/projects/abcdefghijklmnopqrst');
    const log = emulator.requests();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ method: 'GET', path: '/v1/projects/abcdefghijklmnopqrst', route: '/v1/projects/{ref}', status: 404 });
    expect(log[0]!.user).toBeTruthy();
    const viaHttp = await fetch(`${emulator.url}/_emulator/requests`).then((r) => r.json());
    expect(viaHttp).toEqual(log);
  });

  it('creates a project: COMING_UP, then ACTIVE_HEALTHY, then services healthy, on the clock', async () => {
    const h = await harness({ durations: { projectCreate: 60_000, servicesHealthy: 20_000 } });
    const org = await defaultOrg(h.emulator);
    const created = await call(h.emulator, 'POST', '/v1/projects', { body: { name: 'web', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    expect(created.status).toBe(201);
    expect(created.body.ref).toMatch(/^[a-z]{20}$/);
    expect(created.body.status).toBe('COMING_UP');
    expect(created.body.database).toBeUndefined();
    const ref = created.body.ref;
    const list = await call(h.emulator, 'GET', '/v1/projects');
    expect(list.body.map((p: { ref: string }) => p.ref)).toContain(ref);

    const authWhileComingUp = await call(h.emulator, 'PATCH', `/v1/projects/${ref}/config/auth`, { body: { site_url: 'https://x.test' } });
    expect(authWhileComingUp.status).toBe(500);

    await h.clock.advance(59_999);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('COMING_UP');
    await h.clock.advance(1);
    const active = await call(h.emulator, 'GET', `/v1/projects/${ref}`);
    expect(active.body.status).toBe('ACTIVE_HEALTHY');
    expect(active.body.database.version).toMatch(/^15\./);
    const early = await call(h.emulator, 'GET', `/v1/projects/${ref}/health?services=auth,db`);
    expect(early.body.map((s: { status: string }) => s.status)).toEqual(['COMING_UP', 'COMING_UP']);
    await h.clock.advance(20_000);
    const later = await call(h.emulator, 'GET', `/v1/projects/${ref}/health?services=auth&services=db`);
    expect(later.body).toEqual([
      expect.objectContaining({ name: 'auth', status: 'ACTIVE_HEALTHY', healthy: true }),
      expect.objectContaining({ name: 'db', status: 'ACTIVE_HEALTHY', healthy: true }),
    ]);
  });

  it('pauses (PAUSING -> INACTIVE), refuses a second pause and config writes, restores (RESTORING -> ACTIVE_HEALTHY)', async () => {
    const h = await harness({ durations: { pause: 30_000, restore: 40_000 } });
    const org = await defaultOrg(h.emulator);
    const { body } = await call(h.emulator, 'POST', '/v1/projects', { body: { name: 'p', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    await h.clock.advance(10 * 60_000);
    const ref = body.ref;
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/pause`)).status).toBe(200);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('PAUSING');
    const again = await call(h.emulator, 'POST', `/v1/projects/${ref}/pause`);
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/already pausing/);
    await h.clock.advance(30_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('INACTIVE');
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/pause`)).status).toBe(400);
    const versions = await call(h.emulator, 'GET', `/v1/projects/${ref}/restore`);
    expect(versions.body.available_versions).toHaveLength(1);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/restore`)).status).toBe(200);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('RESTORING');
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/restore`)).status).toBe(400);
    await h.clock.advance(40_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('ACTIVE_HEALTHY');
  });

  it('cancels a restore back to INACTIVE, and refuses a cancel with no restore', async () => {
    const h = await harness({ seed: { projects: [{ name: 'paused', organization: 'Default Organization', status: 'INACTIVE', ref: 'pausedpausedpausedpa' }] } });
    expect((await call(h.emulator, 'POST', '/v1/projects/pausedpausedpausedpa/restore/cancel')).status).toBe(400);
    await call(h.emulator, 'POST', '/v1/projects/pausedpausedpausedpa/restore');
    expect((await call(h.emulator, 'POST', '/v1/projects/pausedpausedpausedpa/restore/cancel')).status).toBe(200);
    await h.clock.advance(60 * 60_000);
    expect((await call(h.emulator, 'GET', '/v1/projects/pausedpausedpausedpa')).body.status).toBe('INACTIVE');
  });

  it('deletes a project: every sub-resource answers 404 afterwards', async () => {
    const h = await harness();
    const org = await defaultOrg(h.emulator);
    const { body } = await call(h.emulator, 'POST', '/v1/projects', { body: { name: 'gone', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    const deleted = await call(h.emulator, 'DELETE', `/v1/projects/${body.ref}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: expect.any(Number), ref: body.ref, name: 'gone' });
    for (const path of ['', '/health?services=db', '/restore']) {
      expect((await call(h.emulator, 'GET', `/v1/projects/${body.ref}${path}`)).status).toBe(404);
    }
    await h.clock.advance(10 * 60_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${body.ref}`)).status).toBe(404);
  });

  it('answers 403 to a user who is not a member of the project organization', async () => {
    const h = await harness({
      seed: {
        users: [
          { id: 'u-alice', name: 'Alice', tokens: ['pat_alice_token_1'] },
          { id: 'u-bob', name: 'Bob', tokens: ['pat_bob_token_1'] },
        ],
        organizations: [
          { slug: 'alice-org', name: 'Alice Org', members: [{ user: 'u-alice', role: 'Owner' }] },
          { slug: 'bob-org', name: 'Bob Org', members: [{ user: 'u-bob', role: 'Owner' }] },
        ],
        projects: [{ ref: 'aliceprojectaliceprx', name: 'a', organization: 'alice-org' }],
      },
    });
    const asBob = await call(h.emulator, 'GET', '/v1/projects/aliceprojectaliceprx', { token: 'pat_bob_token_1' });
    expect(asBob.status).toBe(403);
    expect(asBob.body.message).toMatch(/not a member/);
    expect((await call(h.emulator, 'GET', '/v1/organizations/alice-org', { token: 'pat_bob_token_1' })).status).toBe(403);
    const bobCreates = await call(h.emulator, 'POST', '/v1/projects', {
      token: 'pat_bob_token_1', body: { name: 'x', organization_id: 'alice-org', region: 'us-east-1', db_pass: 'pw-123456' },
    });
    expect(bobCreates.status).toBe(403);
    expect((await call(h.emulator, 'GET', '/v1/projects', { token: 'pat_bob_token_1' })).body).toEqual([]);
    expect((await call(h.emulator, 'GET', '/v1/projects/aliceprojectaliceprx', { token: 'pat_alice_token_1' })).status).toBe(200);
  });

  it('creates organizations and lists their members', async () => {
    const { emulator } = await harness();
    const org = await call(emulator, 'POST', '/v1/organizations', { body: { name: 'Acme' } });
    expect(org.status).toBe(201);
    expect(org.body.slug).toMatch(/^[a-z]{20}$/);
    const detail = await call(emulator, 'GET', `/v1/organizations/${org.body.slug}`);
    expect(detail.body).toMatchObject({ name: 'Acme', plan: 'free' });
    const members = await call(emulator, 'GET', `/v1/organizations/${org.body.slug}/members`);
    expect(members.body).toEqual([expect.objectContaining({ role_name: 'Owner', user_name: 'Emulator User' })]);
    expect((await call(emulator, 'GET', '/v1/organizations/nosuchorg')).status).toBe(404);
  });
});

describe('emulator rate limit', () => {
  it('counts across all tokens of one user; the request past the limit and the following window get 429', async () => {
    const wall = new ManualClock();
    const emulator = await startEmulator({
      port: 0, wallClock: wall, rateLimit: { limit: 5, windowMs: 1_000 },
      seed: { users: [{ id: 'u1', name: 'One', tokens: ['pat_token_one_a', 'pat_token_one_b'] }, { id: 'u2', name: 'Two', tokens: ['pat_token_two_a'] }] },
    });
    running.push(emulator);
    const seen: Array<[number, string | null, string | null]> = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(emulator, 'GET', '/v1/projects', { token: i % 2 ? 'pat_token_one_a' : 'pat_token_one_b' });
      seen.push([r.status, r.headers.get('x-ratelimit-remaining'), r.headers.get('x-ratelimit-limit')]);
    }
    expect(seen).toEqual([4, 3, 2, 1, 0].map((remaining) => [200, String(remaining), '5']));
    const past = await call(emulator, 'GET', '/v1/projects', { token: 'pat_token_one_a' });
    expect(past.status).toBe(429);
    expect(past.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(past.headers.get('x-ratelimit-reset')).toBe('1');
    expect(past.body.message).toMatch(/rate limit/);
    // Another user is not affected.
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_token_two_a' })).status).toBe(200);
    // The block lasts a whole window from the refused request, even once the first requests age out.
    await wall.advance(999);
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_token_one_b' })).status).toBe(429);
    await wall.advance(1);
    const after = await call(emulator, 'GET', '/v1/projects', { token: 'pat_token_one_b' });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('is a rolling window: a request is counted until one window after it', async () => {
    const wall = new ManualClock();
    const emulator = await startEmulator({ port: 0, wallClock: wall, rateLimit: { limit: 2, windowMs: 1_000 } });
    running.push(emulator);
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(200);
    await wall.advance(600);
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(200);
    await wall.advance(400);
    const third = await call(emulator, 'GET', '/v1/projects');
    expect(third.status).toBe(200);
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(third.headers.get('x-ratelimit-reset-ms')).toBe('600');
  });
});
