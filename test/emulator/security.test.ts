// What the emulator guarantees to the people who run it (docs/emulator-security.md), over real
// HTTP with the variations an attacker would try.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call, rawRequest } from './helpers.js';

const PROJECT = 'securityprojectaaaaa';
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: { projects: [{ ref: PROJECT, name: 'kept', organization: 'Default Organization' }] },
  });
});

afterAll(async () => {
  await emulator.close();
});

describe('the admin API is reachable only under /_emulator/', () => {
  const REFUSED = [
    '/v1/../_emulator/info',
    '/v1/projects/../../_emulator/info',
    '/v1/%2e%2e/_emulator/info',
    '/v1/%2E%2E/_emulator/info',
    '/v1/.%2e/_emulator/info',
    '/v1/%2e./_emulator/info',
    '/v1/./../_emulator/info',
    '/./_emulator/info',
    '/_emulator/../_emulator/info',
    '/v1/..%2f_emulator/info',
    '/v1/..%2F_emulator/info',
    '/v1/%2e%2e%2f_emulator/info',
    '/v1%2f..%2f_emulator%2finfo',
    '/v1/..\\_emulator/info',
    '/v1\\..\\_emulator\\info',
    '/v1/..%5c_emulator/info',
    '/v1/%5C..%5C_emulator/info',
    '//_emulator/info',
    '/v1//../_emulator/info',
    '/v1//_emulator/info',
    '/v1/%c0%ae%c0%ae/_emulator/info',
    '/v1/%/_emulator/info',
    '/v1/%00/_emulator/info',
    'http://127.0.0.1/_emulator/info',
    '*',
  ];

  it.each(REFUSED)('refuses %s with 400 before routing, and leaks nothing', async (target) => {
    const answer = await rawRequest(emulator, 'GET', target);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).message).toMatch(/^Invalid request path/);
    expect(answer.body).not.toContain(emulator.token);
  });

  it('a target the HTTP parser itself refuses answers 400 too', async () => {
    const answer = await rawRequest(emulator, 'GET', '_emulator/info');
    expect(answer.status).toBe(400);
    expect(answer.body).not.toContain(emulator.token);
  });

  it('a refused admin write changes nothing', async () => {
    for (const target of ['/v1/../_emulator/reset', '/v1/%2e%2e/_emulator/seed', '/v1\\..\\_emulator\\faults']) {
      const answer = await rawRequest(emulator, 'POST', target, JSON.stringify({ rules: [{ errorRate: 1 }] }));
      expect(answer.status).toBe(400);
    }
    const projects = await call(emulator, 'GET', '/v1/projects');
    expect(projects.status).toBe(200);
    expect(projects.body.map((p: { id: string }) => p.id)).toContain(PROJECT);
  });

  it('look-alikes that are not dot segments are plain API paths: 404, never the admin API', async () => {
    for (const target of ['/%5Femulator/info', '/v1/..;/_emulator/info', '/v1/%252e%252e/_emulator/info', '/v1/...', '/_EMULATOR/info']) {
      const answer = await rawRequest(emulator, 'GET', target);
      expect(answer.status).toBe(404);
      expect(answer.body).not.toContain(emulator.token);
    }
  });

  it('serves the admin API at its own paths and the API with a trailing slash, as before', async () => {
    const info = await rawRequest(emulator, 'GET', '/_emulator/info');
    expect(info.status).toBe(200);
    expect(JSON.parse(info.body).token).toBe(emulator.token);
    expect((await rawRequest(emulator, 'GET', '/_emulator/info/')).status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/projects/')).status).toBe(200);
    expect((await call(emulator, 'GET', `/v1/projects/${PROJECT}?unused=%2e%2e%2f`)).status).toBe(200);
  });

  it('logs a refused request without routing it', async () => {
    await rawRequest(emulator, 'GET', '/v1/%2e%2e/_emulator/requests');
    const entry = emulator.requests().at(-1)!;
    expect(entry).toMatchObject({ method: 'GET', path: '/v1/%2e%2e/_emulator/requests', route: '(unmatched)', status: 400 });
  });
});
