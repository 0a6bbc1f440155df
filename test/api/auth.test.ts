import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import {
  AuthConfigError,
  oauthTokenSource,
  staticToken,
  tokenFile,
  tokenSourceFromEnvironment,
} from '../../src/api/auth.js';
import { createClient } from '../../src/api/client.js';
import { UnauthorizedError } from '../../src/api/errors.js';
import { json, startLocalServer } from './helpers/local-server.js';

const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'client-auth-'));
  dirs.push(dir);
  return dir;
}

describe('tokenFile', () => {
  it('re-reads the file when it changes, in place or by an atomic swap', async () => {
    const dir = await tempDir();
    const path = join(dir, 'token');
    await writeFile(path, 'first-token\n');
    const source = tokenFile(path);
    expect(await source.token()).toBe('first-token');
    await writeFile(path, 'second-token-longer\n');
    expect(await source.token()).toBe('second-token-longer');
    // A mounted secret is swapped by rename: same size, new inode.
    await writeFile(join(dir, 'token.new'), 'third-token-longer\n');
    await rename(join(dir, 'token.new'), path);
    expect(await source.token()).toBe('third-token-longer');
  });

  it('keeps the current token while the file is caught empty mid-rewrite', async () => {
    const dir = await tempDir();
    const path = join(dir, 'token');
    await writeFile(path, 'steady-token\n');
    const source = tokenFile(path);
    expect(await source.token()).toBe('steady-token');
    await writeFile(path, '');
    expect(await source.token()).toBe('steady-token');
    await writeFile(path, 'next-token\n');
    expect(await source.token()).toBe('next-token');
  });

  it('names the file, never its content, when it cannot be used', async () => {
    const dir = await tempDir();
    await expect(tokenFile(join(dir, 'missing')).token()).rejects.toThrow(`Cannot read the token file ${join(dir, 'missing')}: ENOENT`);
    await writeFile(join(dir, 'empty'), '  \n');
    await expect(tokenFile(join(dir, 'empty')).token()).rejects.toBeInstanceOf(AuthConfigError);
    await writeFile(join(dir, 'two'), 'secret-one secret-two\n');
    const error = await tokenFile(join(dir, 'two')).token().catch((e: Error) => e);
    expect(error.message).toBe(`The token file ${join(dir, 'two')} must hold one token and nothing else`);
    expect(error.message).not.toContain('secret-one');
  });
});

describe('tokenSourceFromEnvironment', () => {
  it('takes MANAGEMENT_API_TOKEN, or the token file, and refuses none or several', async () => {
    expect(await tokenSourceFromEnvironment({}, { MANAGEMENT_API_TOKEN: 'pat' }).token()).toBe('pat');
    const dir = await tempDir();
    await writeFile(join(dir, 't'), 'from-file');
    expect(await tokenSourceFromEnvironment({ 'token-file': join(dir, 't') }, {}).token()).toBe('from-file');
    expect(await tokenSourceFromEnvironment({}, { MANAGEMENT_API_TOKEN_FILE: join(dir, 't') }).token()).toBe('from-file');
    expect(() => tokenSourceFromEnvironment({}, {})).toThrow(/^No credentials: set MANAGEMENT_API_TOKEN/);
    expect(() => tokenSourceFromEnvironment({ 'token-file': join(dir, 't') }, { MANAGEMENT_API_TOKEN: 'pat' })).toThrow(
      'Configure one way to authenticate, not several: found MANAGEMENT_API_TOKEN and --token-file/MANAGEMENT_API_TOKEN_FILE',
    );
  });

  it('checks the OAuth variables up front', () => {
    expect(() => tokenSourceFromEnvironment({}, { MANAGEMENT_API_OAUTH_CLIENT_ID: 'cid' })).toThrow(
      'MANAGEMENT_API_OAUTH_CLIENT_ID is set but MANAGEMENT_API_OAUTH_CLIENT_SECRET is not',
    );
    expect(() => tokenSourceFromEnvironment({}, { MANAGEMENT_API_OAUTH_CLIENT_ID: 'cid', MANAGEMENT_API_OAUTH_CLIENT_SECRET: 's' })).toThrow(
      'OAuth2 needs the API URL for its token endpoint: set --api-url or MANAGEMENT_API_URL',
    );
    const source = tokenSourceFromEnvironment(
      { 'api-url': 'http://127.0.0.1:1', 'state-dir': '/tmp/x' },
      { MANAGEMENT_API_OAUTH_CLIENT_ID: 'cid', MANAGEMENT_API_OAUTH_CLIENT_SECRET: 's', MANAGEMENT_API_OAUTH_REFRESH_TOKEN: 'r' },
    );
    expect(typeof source.invalidate).toBe('function');
  });

  it('staticToken refuses an empty token', () => {
    expect(() => staticToken(' ')).toThrow('Expected `token` to be a non-empty string');
  });
});

/** A token endpoint that rotates refresh tokens, and an API that says which access token it saw. */
async function oauthServer(refreshTokenFile: string, options: { expiresIn?: number } = {}) {
  let generation = 0;
  let currentRefresh = 'refresh-0';
  const accessIssued = new Map<string, string>(); // access token -> refresh token issued with it
  const revoked = new Set<string>();
  const checks: Array<{ access: string; fileHeld: string; issuedWith: string }> = [];
  const server = await startLocalServer(async (req, res) => {
    if (req.url === '/v1/oauth/token') {
      const form = Object.fromEntries(new URLSearchParams(req.body.toString()));
      if (form.client_id !== 'cid' || form.client_secret !== 'csecret' || form.grant_type !== 'refresh_token') return json(res, 400, { message: 'invalid client' });
      if (form.refresh_token !== currentRefresh) return json(res, 400, { message: 'invalid_grant' });
      generation += 1;
      currentRefresh = `refresh-${generation}`;
      const access = `access-${generation}`;
      accessIssued.set(access, currentRefresh);
      return json(res, 201, { access_token: access, refresh_token: currentRefresh, expires_in: options.expiresIn ?? 3600, token_type: 'Bearer' });
    }
    const access = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!accessIssued.has(access) || revoked.has(access)) return json(res, 401, { message: 'Unauthorized' });
    checks.push({ access, fileHeld: (await readFile(refreshTokenFile, 'utf8')).trim(), issuedWith: accessIssued.get(access)! });
    return json(res, 200, []);
  });
  closers.push(() => server.close());
  return { server, checks, revoke: (access: string) => revoked.add(access), current: () => currentRefresh };
}

describe('oauthTokenSource', () => {
  it('stores each rotated refresh token before its access token is used, and refreshes before expiry', async () => {
    const dir = await tempDir();
    const file = join(dir, 'refresh-token');
    const { server, checks } = await oauthServer(file, { expiresIn: 600 });
    const clock = new ManualClock();
    const auth = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: file, clock });
    const client = await createClient({ baseUrl: server.url, auth, clock, rate: { limit: 100, windowMs: 1000 } });
    closers.push(() => client.close());
    await client.api.listAllProjects();
    await client.api.listAllProjects();
    // 600 s life, refreshed a tenth (60 s) before it ends.
    await clock.advance(539_000);
    await client.api.listAllProjects();
    await clock.advance(2_000);
    await client.api.listAllProjects();
    expect(checks.map((c) => c.access)).toEqual(['access-1', 'access-1', 'access-1', 'access-2']);
    for (const check of checks) expect(check.fileHeld).toBe(check.issuedWith);
    expect(await readFile(file, 'utf8')).toBe('refresh-2\n');
    // Refreshes are requests: they spend the budget like any other.
    expect(client.stats().byRoute).toMatchObject({ 'POST /v1/oauth/token': 2, 'GET /v1/projects': 4 });
  });

  it('never uses a new access token whose refresh token could not be stored', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'not-a-dir'), '');
    const file = join(dir, 'not-a-dir', 'refresh-token');
    const { server, checks } = await oauthServer(join(dir, 'unused'));
    const auth = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: file });
    const client = await createClient({ baseUrl: server.url, auth, rate: { limit: 100, windowMs: 1000 } });
    closers.push(() => client.close());
    const error = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthConfigError);
    expect((error as Error).message).toMatch(/^Cannot store the rotated refresh token in .*not-a-dir\/refresh-token: E[A-Z]+$/);
    expect(checks).toEqual([]);
    expect(server.received.map((r) => r.url)).toEqual(['/v1/oauth/token']);
  });

  it('prefers the stored refresh token over a stale initial one (a restart after rotation)', async () => {
    const dir = await tempDir();
    const file = join(dir, 'refresh-token');
    const { server } = await oauthServer(file);
    const first = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: file });
    expect(await first.token()).toBe('access-1');
    const restarted = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: file });
    expect(await restarted.token()).toBe('access-2');
  });

  it('refreshes once on a 401, then gives up with UnauthorizedError', async () => {
    const dir = await tempDir();
    const file = join(dir, 'refresh-token');
    const { server, revoke, checks } = await oauthServer(file);
    const auth = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: file });
    const client = await createClient({ baseUrl: server.url, auth, rate: { limit: 100, windowMs: 1000 } });
    closers.push(() => client.close());
    await client.api.listAllProjects();
    revoke('access-1');
    await client.api.listAllProjects();
    expect(checks.map((c) => c.access)).toEqual(['access-1', 'access-2']);

    const dead = oauthTokenSource({ baseUrl: server.url, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'refresh-0', refreshTokenFile: join(dir, 'other') });
    const deadClient = await createClient({ baseUrl: server.url, auth: dead, rate: { limit: 100, windowMs: 1000 } });
    closers.push(() => deadClient.close());
    const before = server.received.length;
    const error = await deadClient.api.listAllProjects().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    // One refused refresh, no second try with the same dead refresh token.
    expect(server.received.slice(before).map((r) => r.url)).toEqual(['/v1/oauth/token']);
    expect(String(error)).not.toContain('refresh-0');
    expect(String(error)).not.toContain('csecret');
  });
});
