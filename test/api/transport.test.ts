import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import {
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  TransientError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import type { BinaryBody } from '../../src/api/request.js';
import { endpointOf } from '../../src/api/transport.js';
import { json, startLocalServer, type Handler } from './helpers/local-server.js';

const TOKEN = 'pat-canary-7f3a9c';
let cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function setup(handler: Handler, extra: Partial<Parameters<typeof createClient>[0]> = {}) {
  const server = await startLocalServer(handler);
  const client: ApiClient = await createClient({
    baseUrl: server.url,
    auth: staticToken(TOKEN),
    rate: { limit: 1000, windowMs: 1000 },
    retry: { maxAttempts: 1, maxRateLimitRetries: 0 },
    ...extra,
  });
  cleanup.push(() => server.close(), () => client.close());
  return { server, client };
}

function expectNoSecret(error: unknown): void {
  const text = `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;
  expect(text).not.toContain(TOKEN);
  expect(text).not.toContain('hunter2');
}

describe('client transport', () => {
  it('sends JSON with the bearer token and parses the JSON answer', async () => {
    const { server, client } = await setup((_req, res) => json(res, 201, { id: '1', ref: 'abc', name: 'x' }));
    const project = await client.api.createAProject({ name: 'x', organization_id: 'o', db_pass: 'hunter2', region: 'eu-west-1' });
    expect(project).toEqual({ id: '1', ref: 'abc', name: 'x' });
    const [sent] = server.received;
    expect(sent!.method).toBe('POST');
    expect(sent!.url).toBe('/v1/projects');
    expect(sent!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent!.body.toString())).toMatchObject({ name: 'x', db_pass: 'hunter2' });
  });

  it('keeps a base path and repeats array query parameters', async () => {
    const server = await startLocalServer((_req, res) => json(res, 200, []));
    const client = await createClient({ baseUrl: `${server.url}/api/`, auth: staticToken(TOKEN) });
    cleanup.push(() => server.close(), () => client.close());
    await client.api.getServicesHealth('ref1', { query: { services: ['auth', 'db'], timeout_ms: 100 } });
    expect(server.received[0]!.url).toBe('/api/v1/projects/ref1/health?services=auth&services=db&timeout_ms=100');
  });

  it('sends form-urlencoded bodies', async () => {
    const { server, client } = await setup((_req, res) => json(res, 201, { access_token: 'a', refresh_token: 'r', expires_in: 60, token_type: 'Bearer' }));
    await client.api.exchangeOauthToken({ grant_type: 'refresh_token', client_id: 'cid', refresh_token: 'r0' });
    const sent = server.received[0]!;
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent.body.toString()))).toEqual({ grant_type: 'refresh_token', client_id: 'cid', refresh_token: 'r0' });
  });

  it('sends multipart FormData with a boundary and the file parts', async () => {
    const { server, client } = await setup((_req, res) => json(res, 201, { id: 'f', slug: 'hello', version: 1 }));
    const form = new FormData();
    form.append('metadata', JSON.stringify({ entrypoint_path: 'index.ts' }));
    form.append('file', new Blob(['export default 1;\n']), 'index.ts');
    await client.api.deployAFunction('ref1', form, { query: { slug: 'hello' } });
    const sent = server.received[0]!;
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const text = sent.body.toString();
    expect(text).toContain('name="metadata"');
    expect(text).toContain('filename="index.ts"');
    expect(text).toContain('export default 1;');
  });

  it('returns other media types as a BinaryBody where the operation allows them', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from([0, 1, 2, 255]));
    });
    const body = (await client.api.getAFunctionBody('ref1', 'hello')) as BinaryBody;
    expect(body.contentType).toBe('application/octet-stream');
    expect([...body.bytes]).toEqual([0, 1, 2, 255]);
  });

  it('treats a malformed or non-JSON answer where JSON is expected as transient', async () => {
    let n = 0;
    const { client } = await setup((_req, res) => {
      n += 1;
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"truncated":');
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>proxy</html>');
      }
    });
    const first = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(first).toBeInstanceOf(TransientError);
    expect((first as TransientError).mayHaveApplied).toBe(true);
    const second = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(second).toBeInstanceOf(TransientError);
  });

  it.each([
    [401, UnauthorizedError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [400, InvalidRequestError],
    [422, InvalidRequestError],
    [500, TransientError],
    [503, TransientError],
  ])('maps %i to its error class, with method, route template and status, never the token', async (status, type) => {
    const { client } = await setup((_req, res) => json(res, status, { message: `service says ${status}` }));
    const error = await client.api.getProject('abcdef').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ method: 'GET', route: '/v1/projects/{ref}', status, serviceMessage: `service says ${status}` });
    expectNoSecret(error);
  });

  it('maps 429 to RateLimitedError with the announced wait', async () => {
    const { client } = await setup((_req, res) => json(res, 429, { message: 'Too many requests' }, { 'x-ratelimit-reset': '7', 'x-ratelimit-remaining': '0' }));
    const error = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).waitMs).toBe(7000);
    expect(client.stats().rateLimited).toBe(1);
  });

  it('maps a reset connection to a TransientError that may have applied', async () => {
    const { client } = await setup((_req, _res, socket) => {
      socket.destroy();
    });
    const error = await client.api.createAProject({ name: 'x', organization_id: 'o', db_pass: 'hunter2', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).mayHaveApplied).toBe(true);
    expect((error as TransientError).message).toMatch(/^POST \/v1\/projects: connection to 127\.0\.0\.1:\d+ reset \((ECONNRESET|SOCKET_CLOSED)\)$/);
    expectNoSecret(error);
  });

  it('maps a refused connection to a TransientError that cannot have applied', async () => {
    const server = await startLocalServer(() => undefined);
    const url = server.url;
    await server.close();
    const client = await createClient({ baseUrl: url, auth: staticToken(TOKEN), retry: { maxAttempts: 1 } });
    cleanup.push(() => client.close());
    const error = await client.api.createAProject({ name: 'x', organization_id: 'o', db_pass: 'hunter2', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).mayHaveApplied).toBe(false);
    expect((error as TransientError).message).toBe(`POST /v1/projects: cannot reach 127.0.0.1:${new URL(url).port} (ECONNREFUSED)`);
  });

  it('names the host and port it could not reach, never the credentials of the URL', async () => {
    const server = await startLocalServer(() => undefined);
    const port = new URL(server.url).port;
    await server.close();
    const client = await createClient({ baseUrl: `http://operator:hunter2@127.0.0.1:${port}/base`, auth: staticToken(TOKEN), retry: { maxAttempts: 1 } });
    cleanup.push(() => client.close());
    const error = await client.api.listAllProjects().catch((e: unknown) => e);
    expect((error as TransientError).message).toBe(`GET /v1/projects: cannot reach 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(String(error)).not.toContain('operator');
    expectNoSecret(error);
  });

  it('gives up on an answer that does not come within the headers timeout', async () => {
    const { client } = await setup(() => undefined, { timeouts: { headersMs: 150 } });
    const error = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).mayHaveApplied).toBe(true);
  });

  it('gives up on a body that stops coming within the body timeout', async () => {
    const { server, client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('[');
    }, { timeouts: { bodyMs: 150 } });
    const error = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    const port = new URL(server.url).port;
    expect((error as TransientError).message).toBe(`GET /v1/projects: timed out waiting for 127.0.0.1:${port} (BODY_TIMEOUT)`);
  });

  it('aborts a call in flight with the signal', async () => {
    const { client } = await setup(() => undefined);
    const controller = new AbortController();
    const call = client.api.listAllProjects({ signal: controller.signal });
    setImmediate(() => controller.abort(new Error('stop')));
    await expect(call).rejects.toThrow('stop');
  });

  it('validates its options with exact messages', async () => {
    await expect(createClient({ baseUrl: 'ftp://x', auth: staticToken('t') })).rejects.toThrow('Expected `baseUrl` to be an absolute http(s) URL, got `ftp://x`');
    await expect(createClient({ baseUrl: 'http://x', auth: staticToken('t'), concurrency: 0 })).rejects.toThrow('Expected `concurrency` to be a whole number > 0, got `0` (number)');
    await expect(createClient({ baseUrl: 'http://x', auth: staticToken('t'), rate: { limit: 0, windowMs: 1 } })).rejects.toThrow('Expected `rate.limit` to be a whole number >= 1, got `0` (number)');
  });
});

describe('endpointOf', () => {
  it('spells out the port, keeps IPv6 brackets and drops the user name and password', () => {
    expect(endpointOf('https://api.example.com')).toBe('api.example.com:443');
    expect(endpointOf('http://api.example.com')).toBe('api.example.com:80');
    expect(endpointOf('http://[::1]:8787')).toBe('[::1]:8787');
    expect(endpointOf('https://me:hunter2@api.example.com:8443/v1?x=1')).toBe('api.example.com:8443');
  });
});

describe('answers checked at the boundary', () => {
  it('refuses a JSON answer whose top-level shape is not the documented one', async () => {
    const { client } = await setup((req, res) => (req.url === '/v1/projects' ? json(res, 200, { projects: [] }) : json(res, 200, [])));
    const list = await client.api.listAllProjects().catch((e: unknown) => e);
    expect(list).toBeInstanceOf(TransientError);
    expect((list as TransientError).message).toBe('GET /v1/projects: 200 the answer does not have the documented shape');
    const single = await client.api.getProject('abc').catch((e: unknown) => e);
    expect(single).toBeInstanceOf(TransientError);
  });
});
