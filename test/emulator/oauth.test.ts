import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from './helpers.js';

const CLIENT_ID = '7d1c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const SECRET = 'client-secret-value';
const REDIRECT = 'https://app.example.org/oauth/callback';
let emulator: RunningEmulator;
const wall = new ManualClock();

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    wallClock: wall,
    rateLimit: { limit: 1000, windowMs: 60_000 },
    oauthTokenTtlSeconds: 600,
    seed: {
      users: [{ id: 'owner', name: 'Owner', tokens: ['pat_owner_personal'] }, { id: 'guest', name: 'Guest', tokens: ['pat_guest_personal'] }],
      organizations: [{ slug: 'owner-org', name: 'Owner org', members: [{ user: 'owner' }] }],
      oauth_apps: [{ client_id: CLIENT_ID, client_secret: SECRET, redirect_uris: [REDIRECT] }],
    },
  });
});

afterAll(async () => {
  await emulator.close();
});

async function authorize(params: Record<string, string>, token: string | null = 'pat_owner_personal') {
  const query = new URLSearchParams({ client_id: CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT, ...params });
  return call(emulator, 'GET', `/v1/oauth/authorize?${query}`, { token });
}

function exchange(fields: Record<string, string>) {
  return call(emulator, 'POST', '/v1/oauth/token', {
    token: null,
    rawBody: new URLSearchParams({ client_id: CLIENT_ID, client_secret: SECRET, ...fields }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

function codeOf(location: string | null): string {
  return new URL(location!).searchParams.get('code')!;
}

describe('emulator OAuth2', () => {
  it('authorize answers 303 to the redirect URI with a code and the state', async () => {
    const answer = await authorize({ state: 'opaque-state' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('opaque-state');
    expect(location.searchParams.get('code')).toMatch(/^[0-9a-f]{40}$/);
  });

  it('refuses unknown clients and unregistered redirect URIs without redirecting', async () => {
    expect((await authorize({ client_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(400);
    const wrong = await authorize({ redirect_uri: 'https://evil.example.com/cb' });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('location')).toBeNull();
  });

  it('PKCE S256: the right verifier gets tokens; a wrong one is refused; a code works once', async () => {
    const verifier = 'a'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = codeOf((await authorize({ code_challenge: challenge, code_challenge_method: 'S256' })).headers.get('location'));
    const wrong = await exchange({ grant_type: 'authorization_code', code, code_verifier: 'b'.repeat(50), redirect_uri: REDIRECT });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/code_verifier/);
    const missing = await exchange({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect(missing.status).toBe(400);
    const ok = await exchange({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 600, token_type: 'Bearer' });
    expect((await exchange({ grant_type: 'authorization_code', code, code_verifier: verifier })).status).toBe(400);
  });

  it('PKCE plain is checked too', async () => {
    const code = codeOf((await authorize({ code_challenge: 'plain-verifier-value-0123456789-abcdefghijk', code_challenge_method: 'plain' })).headers.get('location'));
    expect((await exchange({ grant_type: 'authorization_code', code, code_verifier: 'other' })).status).toBe(400);
    const code2 = codeOf((await authorize({ code_challenge: 'plain-verifier-value-0123456789-abcdefghijk', code_challenge_method: 'plain' })).headers.get('location'));
    expect((await exchange({ grant_type: 'authorization_code', code: code2, code_verifier: 'plain-verifier-value-0123456789-abcdefghijk' })).status).toBe(201);
  });

  it('wrong client credentials answer 401; the token endpoint takes form data only', async () => {
    const code = codeOf((await authorize({})).headers.get('location'));
    const bad = await call(emulator, 'POST', '/v1/oauth/token', {
      token: null, rawBody: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: CLIENT_ID, client_secret: 'nope' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(bad.status).toBe(401);
    const json = await call(emulator, 'POST', '/v1/oauth/token', { token: null, body: { grant_type: 'authorization_code', code, client_id: CLIENT_ID, client_secret: SECRET } });
    expect(json.status).toBe(415);
  });

  it('refresh tokens rotate: the new one works, the old one stops working; access tokens act as the approving user', async () => {
    await wall.advance(60_000);
    const code = codeOf((await authorize({})).headers.get('location'));
    const first = (await exchange({ grant_type: 'authorization_code', code })).body;
    const orgs = await call(emulator, 'GET', '/v1/organizations', { token: first.access_token });
    expect(orgs.status).toBe(200);
    expect(orgs.body.map((o: { slug: string }) => o.slug)).toEqual(['owner-org']);
    const second = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(second.status).toBe(201);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    const reuse = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reuse.status).toBe(400);
    expect(reuse.body.message).toMatch(/already used/);
    const third = await exchange({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token });
    expect(third.status).toBe(201);
  });

  it('OAuth access tokens count against the approving user\'s limit, together with their personal tokens', async () => {
    const small = await startEmulator({
      port: 0, rateLimit: { limit: 4, windowMs: 60_000 },
      seed: { users: [{ id: 'owner', name: 'Owner', tokens: ['pat_owner_personal'] }], oauth_apps: [{ client_id: CLIENT_ID, client_secret: SECRET, redirect_uris: [REDIRECT] }] },
    });
    try {
      const query = new URLSearchParams({ client_id: CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT });
      const location = (await call(small, 'GET', `/v1/oauth/authorize?${query}`, { token: 'pat_owner_personal' })).headers.get('location');
      const token = await call(small, 'POST', '/v1/oauth/token', {
        token: null, rawBody: new URLSearchParams({ grant_type: 'authorization_code', code: codeOf(location), client_id: CLIENT_ID, client_secret: SECRET }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const access = token.body.access_token as string;
      expect((await call(small, 'GET', '/v1/organizations', { token: 'pat_owner_personal' })).status).toBe(200);
      expect((await call(small, 'GET', '/v1/organizations', { token: access })).status).toBe(200);
      const last = await call(small, 'GET', '/v1/organizations', { token: 'pat_owner_personal' });
      expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
      expect((await call(small, 'GET', '/v1/organizations', { token: access })).status).toBe(429);
    } finally {
      await small.close();
    }
  });

  it('access tokens expire after expires_in', async () => {
    await wall.advance(120_000);
    const code = codeOf((await authorize({})).headers.get('location'));
    const token = (await exchange({ grant_type: 'authorization_code', code })).body;
    expect((await call(emulator, 'GET', '/v1/organizations', { token: token.access_token })).status).toBe(200);
    await wall.advance(600_000);
    expect((await call(emulator, 'GET', '/v1/organizations', { token: token.access_token })).status).toBe(401);
  });

  it('revoke answers 204 and ends the refresh token and its access tokens', async () => {
    await wall.advance(120_000);
    const code = codeOf((await authorize({}, 'pat_guest_personal')).headers.get('location'));
    const token = (await exchange({ grant_type: 'authorization_code', code })).body;
    expect((await call(emulator, 'GET', '/v1/organizations', { token: token.access_token })).body).toEqual([]);
    const revoked = await call(emulator, 'POST', '/v1/oauth/revoke', { token: null, body: { client_id: CLIENT_ID, client_secret: SECRET, refresh_token: token.refresh_token } });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    expect((await call(emulator, 'GET', '/v1/organizations', { token: token.access_token })).status).toBe(401);
    expect((await exchange({ grant_type: 'refresh_token', refresh_token: token.refresh_token })).status).toBe(400);
  });
});
