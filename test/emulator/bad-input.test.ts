import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from './helpers.js';

let emulator: RunningEmulator;
let org: string;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0, rateLimit: { limit: 10_000, windowMs: 60_000 }, bodyLimitBytes: 2048, deployBodyLimitBytes: 4096,
    seed: { projects: [{ ref: 'badinputprojectaaaaa', name: 'p', organization: 'Default Organization' }] },
  });
  org = (await call(emulator, 'GET', '/v1/organizations')).body[0].slug;
});

afterAll(async () => {
  await emulator.close();
});

const projectCount = async () => (await call(emulator, 'GET', '/v1/projects')).body.length;
const createBody = () => ({ name: 'x', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' });

describe('emulator bad input', () => {
  it('malformed JSON answers 400 {"message"} and creates nothing', async () => {
    const before = await projectCount();
    const answer = await call(emulator, 'POST', '/v1/projects', { rawBody: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^Malformed JSON/);
    expect(await projectCount()).toBe(before);
  });

  it('a wrong content type answers 415 naming what the endpoint takes', async () => {
    const answer = await call(emulator, 'POST', '/v1/projects', { rawBody: JSON.stringify(createBody()), headers: { 'content-type': 'text/plain' } });
    expect(answer.status).toBe(415);
    expect(answer.body.message).toContain('application/json');
    const none = await call(emulator, 'POST', '/v1/projects', { rawBody: JSON.stringify(createBody()) });
    expect(none.status).toBe(415);
  });

  it('an oversized body answers 413 with the documented limit; the deploy endpoint has its own limit', async () => {
    const before = await projectCount();
    const big = await call(emulator, 'POST', '/v1/projects', { body: { ...createBody(), name: 'x'.repeat(5000) } });
    expect(big.status).toBe(413);
    expect(big.body.message).toContain('2048 bytes');
    expect(await projectCount()).toBe(before);
    const form = new FormData();
    form.set('metadata', JSON.stringify({ entrypoint_path: 'index.ts' }));
    form.append('file', new Blob(['x'.repeat(3000)]), 'index.ts');
    expect((await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/functions/deploy?slug=f', { rawBody: form })).status).toBe(201);
    const large = new FormData();
    large.set('metadata', JSON.stringify({ entrypoint_path: 'index.ts' }));
    large.append('file', new Blob(['x'.repeat(5000)]), 'index.ts');
    expect((await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/functions/deploy?slug=g', { rawBody: large })).status).toBe(413);
  });

  it('schema violations answer 400 naming the field: wrong type, unknown enum value, missing field', async () => {
    const wrongEnum = await call(emulator, 'POST', '/v1/projects', { body: { ...createBody(), region: 'mars-1' } });
    expect(wrongEnum.status).toBe(400);
    expect(wrongEnum.body.message).toContain('`region` must be one of');
    const wrongType = await call(emulator, 'PATCH', '/v1/projects/badinputprojectaaaaa/config/auth', { body: { jwt_exp: 'soon' } });
    expect(wrongType.body.message).toContain('`jwt_exp`');
    const missing = await call(emulator, 'POST', '/v1/organizations', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('`name` is required');
    const empty = await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/secrets', { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
    const extra = await call(emulator, 'POST', '/v1/projects', { body: { ...createBody(), colour: 'blue' } });
    expect(extra.body.message).toContain('`colour` is not an allowed field');
    const nested = await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/secrets', { body: [{ name: 'A' }] });
    expect(nested.body.message).toContain('`0.value` is required');
  });

  it('accepts null where OpenAPI 3.0 says nullable, and still checks the enum', async () => {
    const ok = await call(emulator, 'PATCH', '/v1/projects/badinputprojectaaaaa/config/auth', { body: { sms_provider: null, jwt_exp: null, site_url: null } });
    expect(ok.status).toBe(200);
    expect(ok.body.sms_provider).toBeNull();
    const bad = await call(emulator, 'PATCH', '/v1/projects/badinputprojectaaaaa/config/auth', { body: { sms_provider: 'smsZ' } });
    expect(bad.status).toBe(400);
    const notNullable = await call(emulator, 'PATCH', '/v1/projects/badinputprojectaaaaa/config/auth', { body: { mailer_otp_exp: null } });
    expect(notNullable.status).toBe(400);
  });

  it('checks query parameters', async () => {
    expect((await call(emulator, 'GET', '/v1/projects/badinputprojectaaaaa/health')).body.message).toContain('`services`');
    expect((await call(emulator, 'GET', '/v1/projects/badinputprojectaaaaa/health?services=dns')).status).toBe(400);
    expect((await call(emulator, 'GET', '/v1/projects/badinputprojectaaaaa/health?services=db&timeout_ms=soon')).status).toBe(400);
    expect((await call(emulator, 'GET', '/v1/projects/badinputprojectaaaaa/api-keys?reveal=maybe')).status).toBe(400);
  });

  it('unknown paths, methods and admin endpoints answer 404/405 with a message', async () => {
    expect((await call(emulator, 'GET', '/v2/projects')).status).toBe(404);
    const malformed = await call(emulator, 'GET', '/v1/projects/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain('malformed percent-encoding');
    expect((await call(emulator, 'DELETE', '/v1/organizations')).status).toBe(405);
    const admin = await fetch(`${emulator.url}/_emulator/nothing`);
    expect(admin.status).toBe(404);
    expect((await admin.json()).message).toMatch(/admin/);
    const badSeed = await fetch(`${emulator.url}/_emulator/seed`, { method: 'POST', body: '{not json' });
    expect(badSeed.status).toBe(400);
  });

  it('malformed multipart answers 400', async () => {
    const answer = await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/functions/deploy?slug=h', {
      rawBody: 'garbage', headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    expect(answer.status).toBe(400);
    const noBoundary = await call(emulator, 'POST', '/v1/projects/badinputprojectaaaaa/functions/deploy?slug=h', {
      rawBody: 'garbage', headers: { 'content-type': 'multipart/form-data' },
    });
    expect(noBoundary.status).toBe(400);
  });

  it('survives a malformed HTTP request and keeps serving', async () => {
    const url = new URL(emulator.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.write('NOT-HTTP \x00\x01\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1.1 400/);
    expect((await call(emulator, 'GET', '/v1/projects')).status).toBe(200);
  });
});
