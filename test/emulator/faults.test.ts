import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { UPGRADE_ERRORS } from '../../src/emulator/handlers/upgrades.js';
import { call, healthyProject, startWithManualClock, type Harness } from './helpers.js';

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function harness(options: Parameters<typeof startWithManualClock>[0] = {}): Promise<Harness> {
  const h = await startWithManualClock({ rateLimit: { limit: 10_000, windowMs: 60_000 }, ...options });
  running.push(h.emulator);
  return h;
}

async function postFaults(emulator: RunningEmulator, body: unknown) {
  const response = await fetch(`${emulator.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const userSecrets = async (emulator: RunningEmulator, ref: string) =>
  ((await call(emulator, 'GET', `/v1/projects/${ref}/secrets`)).body as Array<{ name: string }>).map((s) => s.name).filter((n) => !n.startsWith('PLATFORM_'));

describe('emulator faults', () => {
  it('a 5xx fault on one route answers {"message"} and applies nothing; other routes are untouched', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    expect((await postFaults(h.emulator, { rules: [{ route: '/v1/projects/{ref}/secrets', method: 'POST', errorRate: 1, errorStatus: 503 }] })).status).toBe(200);
    const failed = await call(h.emulator, 'POST', `/v1/projects/${ref}/secrets`, { body: [{ name: 'A', value: 'b' }] });
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ message: 'Internal server error' });
    expect(await userSecrets(h.emulator, ref)).toEqual([]);
    expect(h.emulator.requests().at(-2)).toMatchObject({ route: '/v1/projects/{ref}/secrets', status: 503, fault: 'error' });
  });

  it('is deterministic with a seed: the same requests meet the same faults', async () => {
    const h = await harness();
    const run = async () => {
      h.emulator.setFaults({ seed: 42, rules: [{ errorRate: 0.5 }] });
      const statuses: number[] = [];
      for (let i = 0; i < 24; i++) statuses.push((await call(h.emulator, 'GET', '/v1/organizations')).status);
      return statuses;
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    expect(first).toContain(500);
    expect(first).toContain(200);
  });

  it('a connection reset applies nothing; a lost answer applies the write and resets the connection', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    h.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/secrets', method: 'POST', resetRate: 1 }] });
    await expect(call(h.emulator, 'POST', `/v1/projects/${ref}/secrets`, { body: [{ name: 'RESET', value: 'x' }] })).rejects.toThrow();
    h.emulator.setFaults({});
    expect(await userSecrets(h.emulator, ref)).toEqual([]);
    h.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/secrets', method: 'POST', lostAnswerRate: 1 }] });
    await expect(call(h.emulator, 'POST', `/v1/projects/${ref}/secrets`, { body: [{ name: 'LOST', value: 'x' }] })).rejects.toThrow();
    h.emulator.setFaults({});
    expect(await userSecrets(h.emulator, ref)).toEqual(['LOST']);
    const faulted = h.emulator.requests().filter((e) => e.fault);
    expect(faulted.map((e) => [e.fault, e.status])).toEqual([['reset', 0], ['lost-answer', 201]]);
  });

  it('a lost answer to a project create leaves exactly one new project', async () => {
    const h = await harness();
    const org = (await call(h.emulator, 'GET', '/v1/organizations')).body[0].slug;
    h.emulator.setFaults({ rules: [{ route: '/v1/projects', method: 'POST', lostAnswerRate: 1, maxFaults: 1 }] });
    await expect(call(h.emulator, 'POST', '/v1/projects', { body: { name: 'once', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } })).rejects.toThrow();
    const projects = (await call(h.emulator, 'GET', '/v1/projects')).body;
    expect(projects.map((p: { name: string }) => p.name)).toEqual(['once']);
  });

  it('a timeout holds the socket: the client gets no answer until it gives up', async () => {
    const h = await harness();
    h.emulator.setFaults({ rules: [{ route: '/v1/organizations', timeoutRate: 1 }] });
    await expect(
      fetch(`${h.emulator.url}/v1/organizations`, { headers: { authorization: `Bearer ${h.emulator.token}` }, signal: AbortSignal.timeout(200) }),
    ).rejects.toThrow();
    expect(h.emulator.requests().at(-1)).toMatchObject({ status: 0, fault: 'timeout' });
    expect((await call(h.emulator, 'GET', '/v1/projects')).status).toBe(200);
  });

  it('added latency still answers; maxFaults stops injecting after that many', async () => {
    const h = await harness();
    h.emulator.setFaults({ rules: [{ latencyMs: 5 }, { route: '/v1/projects', errorRate: 1, maxFaults: 2 }] });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(h.emulator, 'GET', '/v1/projects')).status);
    expect(statuses).toEqual([500, 500, 200, 200]);
  });

  it('a forced 429 block refuses the user for a whole window, with the headers saying so', async () => {
    const wall = new ManualClock();
    const emulator = await startEmulator({ port: 0, wallClock: wall, rateLimit: { limit: 60, windowMs: 60_000 } });
    running.push(emulator);
    expect((await postFaults(emulator, { rateLimitBlock: {} })).status).toBe(200);
    const blocked = await call(emulator, 'GET', '/v1/projects');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(blocked.headers.get('x-ratelimit-reset')).toBe('60');
    await wall.advance(59_999);
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(429);
    await wall.advance(1);
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(200);
    emulator.setFaults({ rules: [{ route: '/v1/projects', rateLimitRate: 1, maxFaults: 1 }] });
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(429);
    expect((await call(emulator, 'GET', '/v1/organizations')).status).toBe(429);
  });

  it('lifecycle failures end in INIT_FAILED, PAUSE_FAILED, RESTORE_FAILED or an upgrade error', async () => {
    const h = await harness({ durations: { projectCreate: 1_000, pause: 1_000, restore: 1_000, upgradeStep: 1_000 } });
    const ref = await healthyProject(h);
    const org = (await call(h.emulator, 'GET', '/v1/organizations')).body[0].slug;
    h.emulator.setFaults({ seed: 3, lifecycleFailures: { create: 1, pause: 1, restore: 1, upgrade: 1 } });
    const failing = await call(h.emulator, 'POST', '/v1/projects', { body: { name: 'doomed', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    await h.clock.advance(1_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${failing.body.ref}`)).body.status).toBe('INIT_FAILED');

    const upgrade = await call(h.emulator, 'POST', `/v1/projects/${ref}/upgrade`, { body: { target_version: '17' } });
    await h.clock.advance(11_000);
    const status = (await call(h.emulator, 'GET', `/v1/projects/${ref}/upgrade/status?tracking_id=${upgrade.body.tracking_id}`)).body.databaseUpgradeStatus;
    expect(status.status).toBe(0);
    expect(status.error).toMatch(/^\d_/);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('ACTIVE_HEALTHY');

    await call(h.emulator, 'POST', `/v1/projects/${ref}/pause`);
    await h.clock.advance(1_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('PAUSE_FAILED');
    h.emulator.setFaults({ seed: 3, lifecycleFailures: { restore: 1 } });
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/pause`)).status).toBe(200);
    await h.clock.advance(1_000);
    await call(h.emulator, 'POST', `/v1/projects/${ref}/restore`);
    await h.clock.advance(1_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('RESTORE_FAILED');
    h.emulator.setFaults({});
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/restore`)).status).toBe(200);
    await h.clock.advance(1_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('ACTIVE_HEALTHY');
  });

  it('a failed upgrade keeps the old version whichever step fails', async () => {
    const h = await harness({ durations: { projectCreate: 1_000, upgradeStep: 1_000 } });
    const ref = await healthyProject(h);
    const errors = new Set<string>();
    // Seeds 1..16 draw every failing step; each failure leaves the project upgradable again.
    for (let seed = 1; seed <= 16; seed++) {
      h.emulator.setFaults({ seed, lifecycleFailures: { upgrade: 1 } });
      const upgrade = await call(h.emulator, 'POST', `/v1/projects/${ref}/upgrade`, { body: { target_version: '17' } });
      expect(upgrade.status).toBe(201);
      await h.clock.advance(11_000);
      const status = (await call(h.emulator, 'GET', `/v1/projects/${ref}/upgrade/status?tracking_id=${upgrade.body.tracking_id}`)).body.databaseUpgradeStatus;
      expect(status.status).toBe(0);
      errors.add(status.error);
      const project = (await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body;
      expect(project.status).toBe('ACTIVE_HEALTHY');
      expect(project.database.version.startsWith('15')).toBe(true);
    }
    expect([...errors].sort()).toEqual([...UPGRADE_ERRORS].sort());
  });

  it('refuses an invalid fault configuration, naming the field', async () => {
    const h = await harness();
    const bad = await postFaults(h.emulator, { rules: [{ errorRate: 2 }] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('rules[0].errorRate');
    expect((await postFaults(h.emulator, { rules: [{ bogus: 1 }] })).body.message).toContain('rules[0].bogus');
    expect((await postFaults(h.emulator, { lifecycleFailures: { delete: 0.5 } })).body.message).toContain('lifecycleFailures.delete');
  });
});
