// What the emulator guarantees to the people who run it (docs/emulator-security.md), over real
// HTTP with the variations an attacker would try.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call, rawRequest } from './helpers.js';

const PROJECT = 'securityprojectaaaaa';
const CLIENT_ID = '0b9d4c52-7a61-4f0e-9d1c-2e5a8b3f6c70';
const REGISTERED = ['http://127.0.0.1:*', 'http://localhost:*', 'http://[::1]:*', 'https://app.example.org/oauth/callback'];
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      users: [
        { id: 'owner', name: 'Owner', tokens: ['pat_owner_security'] },
        { id: 'reader', name: 'Reader', tokens: ['pat_reader_security'] },
        { id: 'developer', name: 'Developer', tokens: ['pat_developer_security'] },
      ],
      organizations: [{
        name: 'Security org',
        members: [{ user: 'owner', role: 'Owner' }, { user: 'reader', role: 'Read-only' }, { user: 'developer', role: 'Developer' }],
      }],
      projects: [{ ref: PROJECT, name: 'kept', organization: 'Security org' }],
      oauth_apps: [{ client_id: CLIENT_ID, client_secret: 'client-secret-value', redirect_uris: REGISTERED }],
    },
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

describe('OAuth redirect URIs are parsed and compared by origin, host and port', () => {
  const authorize = (redirectUri: string) =>
    call(emulator, 'GET', `/v1/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, response_type: 'code', redirect_uri: redirectUri, state: 's' })}`);

  const ACCEPTED: Array<[string, string]> = [
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080/cb'],
    ['http://127.0.0.1:65535/', 'http://127.0.0.1:65535/'],
    ['http://127.0.0.1/cb', 'http://127.0.0.1/cb'],
    ['http://localhost:3000/callback?from=cli', 'http://localhost:3000/callback'],
    ['HTTP://LOCALHOST:3000/cb', 'http://localhost:3000/cb'],
    ['http://[::1]:8080/cb', 'http://[::1]:8080/cb'],
    ['http://0x7f.0.0.1:8080/cb', 'http://127.0.0.1:8080/cb'],
    ['https://app.example.org/oauth/callback', 'https://app.example.org/oauth/callback'],
  ];

  it.each(ACCEPTED)('accepts %s and redirects to the host the URL parser sees', async (uri, destination) => {
    const answer = await authorize(uri);
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(destination);
    expect(location.searchParams.get('code')).toMatch(/^[0-9a-f]{40}$/);
    expect(location.searchParams.get('state')).toBe('s');
  });

  const REFUSED: Array<[string, RegExp]> = [
    ['http://127.0.0.1:9@evil.example/', /user information/],
    ['http://127.0.0.1@evil.example/', /user information/],
    ['http://user:pass@127.0.0.1:8080/', /user information/],
    ['http://@127.0.0.1:8080/', /user information/],
    ['http://[::1]@evil.example:8080/', /user information/],
    ['http://127.0.0.1:9\\@evil.example/', /backslashes/],
    ['http://127.0.0.1:8080\\cb', /backslashes/],
    ['http://127.0.0.1:9%40evil.example/', /port `9%40evil.example` is not a number/],
    ['http://127.0.0.1:0/cb', /port `0` is outside 1..65535/],
    ['http://127.0.0.1:65536/cb', /port `65536` is outside 1..65535/],
    ['http://127.0.0.1:99999/cb', /port `99999` is outside 1..65535/],
    ['http://127.0.0.1:abc/cb', /port `abc` is not a number/],
    ['http://127.0.0.1:-1/cb', /port `-1` is not a number/],
    ['http://[::1]:99999/cb', /port `99999` is outside 1..65535/],
    ['http://[::1]:abc/cb', /port `abc` is not a number/],
    ['http://127.0.0.1: 8080/cb', /printable ASCII/],
    ['http://127.0.0.1:80\t80/cb', /printable ASCII/],
    ['http://evil.example#@127.0.0.1:8080/', /fragment/],
    ['http://127.0.0.1:8080/cb#frag', /fragment/],
    ['//127.0.0.1:8080/cb', /absolute http or https URL/],
    ['javascript:alert(1)//127.0.0.1:8080', /absolute http or https URL/],
    ['ftp://127.0.0.1:8080/cb', /scheme must be http or https/],
    ['http://evil.example?@127.0.0.1:8080/', /not registered/],
    ['http://127.0.0.1.evil.example:8080/', /not registered/],
    ['http://127.0.0.1%2eevil.example:8080/', /not registered/],
    ['http://localhost.:3000/cb', /not registered/],
    ['http://[::ffff:127.0.0.1]:8080/', /not registered/],
    ['https://127.0.0.1:8080/cb', /not registered/],
    ['https://app.example.org.evil.example/oauth/callback', /not registered/],
    ['https://app.example.org/oauth/callback?next=https://evil.example', /not registered/],
    ['https://app.example.org/oauth/callback/../../evil', /not registered/],
    ['https://app.example.org:8443/oauth/callback', /not registered/],
    ['http://app.example.org/oauth/callback', /not registered/],
  ];

  it.each(REFUSED)('refuses %s with 400 and no redirect', async (uri, why) => {
    const answer = await authorize(uri);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.body.message).toMatch(/redirect_uri/);
    expect(answer.body.message).toMatch(why);
  });

  it('refuses a seed whose redirect URI pattern has a wildcard anywhere but the port, naming the entry', async () => {
    for (const pattern of ['https://*.example.org/cb', 'http://127.0.0.1:*@evil.example', 'http://127.0.0.1:*:8080', 'http://127.0.0.1:8*']) {
      const seed = { oauth_apps: [{ client_id: CLIENT_ID, client_secret: 'client-secret-value', redirect_uris: ['http://localhost:*', pattern] }] };
      const answer = await fetch(`${emulator.url}/_emulator/seed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(seed) });
      expect(answer.status).toBe(400);
      expect((await answer.json()).message).toContain('oauth_apps[0].redirect_uris[1]');
    }
    // Nothing was replaced: the registered URIs still work.
    expect((await authorize('https://app.example.org/oauth/callback')).status).toBe(303);
  });
});

describe('SQL through database/query: read-only members run only evidently read-only statements', () => {
  const query = (token: string, sql: string, extra: Record<string, unknown> = {}) =>
    call(emulator, 'POST', `/v1/projects/${PROJECT}/database/query`, { token, body: { query: sql, ...extra } });

  // The project's database has what the statements below name.
  beforeAll(async () => {
    const setup = await query('pat_owner_security', 'create table accounts (id int, name text); create table audit ("update" text, "insert" text); create sequence ids; create function cleanup() returns void language sql as $$ select 1 $$');
    expect(setup.status).toBe(201);
  }, 120_000);

  const READ_ONLY = [
    'select 1 as one',
    'SELECT now();',
    'show search_path',
    'explain select * from accounts',
    'with recent as (select id from accounts) select count(*) from recent',
    "select count(*) from pg_catalog.pg_tables where schemaname = 'public'",
    "select 'delete from accounts; drop table accounts' as text",
    'select "update", "insert" from audit',
    'select 1 -- ; delete from accounts',
    'select 1 /* ; delete /* nested */ from accounts */',
    'select $$ insert into accounts $$, $tag$ drop $tag$',
    "select E'\\'; delete from accounts; --' as one_string",
    'values (1), (2)',
  ];

  it.each(READ_ONLY)('a Read-only member may run: %s', async (sql) => {
    expect((await query('pat_reader_security', sql)).status).toBe(201);
  });

  const WRITING = [
    'insert into accounts values (1)',
    'update accounts set name = 1',
    'delete from accounts',
    'drop table accounts',
    'create table t (id int)',
    'truncate accounts',
    'grant all on accounts to public',
    'copy accounts to stdout',
    'vacuum',
    'lock table accounts',
    'call cleanup()',
    'do $$ begin delete from accounts; end $$',
    'set role postgres',
    'begin; select 1; commit',
    'select 1; delete from accounts',
    'SeLeCt 1; DeLeTe FROM accounts',
    'select 1; select 2',
    'select * into backup from accounts',
    'select * from accounts for update',
    'select * from accounts for no key update',
    'select * from accounts for share',
    'select * from accounts for key share',
    'with gone as (delete from accounts returning *) select * from gone',
    'explain analyze delete from accounts',
    'explain (analyze) select 1',
    "select nextval('ids')",
    "select setval('ids', 1)",
    "select pg_catalog.set_config('role', 'postgres', false)",
    'select pg_terminate_backend(42)',
    'select public.now()',
    'select "nextval"(\'ids\')',
    "select '\\'; delete from accounts; --'",
    "select E'\\\\'; delete from accounts",
    '/* comment */ delete from accounts',
    'refresh materialized view totals',
  ];

  it.each(WRITING)('a Read-only member gets 403 for: %s', async (sql) => {
    const answer = await query('pat_reader_security', sql);
    expect(answer.status).toBe(403);
    expect(answer.body.message).toMatch(/^Forbidden: your role in the organization \(Read-only\) can only run a single read-only statement/);
    expect(answer.body.message).toMatch(/counts as writing: .+/);
  });

  it('members with a writing role run them (and the read_only flag uses the same rule)', async () => {
    for (const token of ['pat_owner_security', 'pat_developer_security']) {
      expect((await query(token, 'delete from accounts')).status).toBe(201);
      expect((await query(token, "select nextval('ids')")).status).toBe(201);
    }
    const flagged = await query('pat_owner_security', "select nextval('ids')", { read_only: true });
    expect(flagged.status).toBe(400);
    expect(flagged.body.message).toMatch(/^ERROR: 25006: .*nextval/);
    expect((await query('pat_owner_security', 'select 1', { read_only: true })).status).toBe(201);
  });

  it('an unterminated quote, identifier, dollar quote or comment is a syntax error for everyone', async () => {
    for (const [sql, what] of [["select 'x", 'quoted string'], ['select "x', 'quoted identifier'], ['select $a$ x', 'dollar-quoted string'], ['select 1 /* x', 'comment']]) {
      // A Read-only member's query is refused before it reaches the database.
      const reader = await query('pat_reader_security', sql!);
      expect(reader.status).toBe(400);
      expect(reader.body.message).toBe(`ERROR: 42601: unterminated ${what}`);
      // Anyone else's is Postgres's own error, with its position.
      const owner = await query('pat_owner_security', sql!);
      expect(owner.status).toBe(400);
      expect(owner.body.message).toMatch(/^ERROR: 42601: unterminated .*\nLINE 1: /);
    }
  });
});
