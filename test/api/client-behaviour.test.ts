import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { createClient, type ClientOptions } from '../../src/api/client.js';
import { staticToken, type TokenSource } from '../../src/api/auth.js';
import { RateLimitedError, TransientError, UnauthorizedError } from '../../src/api/errors.js';
import { TransportFailure } from '../../src/api/transport.js';
import type { ApiTelemetry } from '../../src/api/telemetry.js';
import { fakeTransport, reply, runUntil, track } from './helpers/fake-transport.js';

const BODY = { name: 'x', organization_id: 'o', db_pass: 'pw', region: 'eu-west-1' };
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function setup(extra: Partial<ClientOptions> = {}) {
  const clock = new ManualClock();
  const fake = fakeTransport(clock, { latencyMs: 10 });
  // Lists answer arrays, everything else an object: the shapes the spec documents.
  fake.setDefault((request) => reply(200, request.path.split('?')[0] === '/v1/projects' ? [] : {}));
  const events: Array<[string, ...unknown[]]> = [];
  const telemetry: ApiTelemetry = {
    requestFinished: (e) => events.push(['finished', e.method, e.route, e.code]),
    rateLimited: () => events.push(['rateLimited']),
    budget: (remaining, limit) => events.push(['budget', remaining, limit]),
    queueDepth: (priority, depth) => events.push(['depth', priority, depth]),
  };
  const options: ClientOptions = {
    baseUrl: 'http://api.test',
    auth: staticToken('tok'),
    clock,
    transport: fake.transport,
    telemetry,
    random: () => 0.5,
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 },
    ...extra,
  };
  return { clock, fake, events, options };
}

describe('priority queue', () => {
  it('serves write before verify before drift, and takes turns across projects within a priority', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 1, windowMs: 1_000 }, concurrency: 1 });
    const client = await createClient(options);
    const calls = [
      client.api.getProject('warmup', { priority: 'verify', project: 'z' }),
      client.api.getProject('a1', { priority: 'drift', project: 'a' }),
      client.api.getProject('a2', { priority: 'drift', project: 'a' }),
      client.api.getProject('a3', { priority: 'drift', project: 'a' }),
      client.api.getProject('e1', { priority: 'drift', project: 'e' }),
      client.api.getProject('b1', { priority: 'verify', project: 'b' }),
      client.api.updateAuthServiceConfig('c1', {}, { priority: 'write', project: 'c' }),
      client.api.updateAuthServiceConfig('c2', {}, { priority: 'write', project: 'c' }),
      client.api.updateAuthServiceConfig('d1', {}, { priority: 'write', project: 'd' }),
      client.api.getProject('b2', { priority: 'verify', project: 'b' }),
    ].map(track);
    await runUntil(clock, () => calls.every((c) => c.settled));
    const order = fake.sent.map((s) => s.path.split('/')[3]);
    expect(order).toEqual(['warmup', 'c1', 'd1', 'c2', 'b1', 'b2', 'a1', 'e1', 'a2', 'a3']);
    // One per window after the previous answer (10 ms of latency, plus the budget's 10 ms
    // guard): the budget, not the queue, sets the pace.
    expect(fake.sent.map((s) => s.at - fake.sent[0]!.at)).toEqual([0, 1020, 2040, 3060, 4080, 5100, 6120, 7140, 8160, 9180]);
    await client.close();
  });

  it('reports the queue depth per priority', async () => {
    const { clock, events, options } = setup({ rate: { limit: 1, windowMs: 1_000 }, concurrency: 1 });
    const client = await createClient(options);
    const calls = [client.api.listAllProjects(), client.api.listAllProjects({ priority: 'drift' }), client.api.listAllProjects({ priority: 'drift' })].map(track);
    expect(events.filter((e) => e[0] === 'depth' && e[1] === 'drift').map((e) => e[2])).toEqual([1, 2]);
    await runUntil(clock, () => calls.every((c) => c.settled));
    expect(events.filter((e) => e[0] === 'depth' && e[1] === 'drift').map((e) => e[2])).toEqual([1, 2, 1, 0]);
    await client.close();
  });
});

describe('retries', () => {
  it('retries an idempotent call on 5xx and resets with backoff on the clock, and counts every attempt', async () => {
    const { clock, fake, options } = setup();
    fake.script('GET', '/v1/projects', reply(503, { message: 'down' }), new TransportFailure('reset', true, 'reset'), reply(200, [{ ref: 'r' }]));
    const client = await createClient(options);
    const call = track(client.api.listAllProjects());
    await runUntil(clock, () => call.settled);
    expect(call.value).toEqual([{ ref: 'r' }]);
    expect(fake.sent).toHaveLength(3);
    // Full jitter with random() = 0.5: half of 100, then half of 200, after each 10 ms answer.
    expect(fake.sent.map((s) => s.at - fake.sent[0]!.at)).toEqual([0, 60, 170]);
    expect(client.stats()).toMatchObject({ sent: 3, retries: 2 });
    await client.close();
  });

  it('never sends a POST twice when it may have applied: the caller gets mayHaveApplied', async () => {
    const { clock, fake, options } = setup();
    fake.script('POST', '/v1/projects', new TransportFailure('reset', true, 'reset'), reply(201, { ref: 'dup' }));
    const client = await createClient(options);
    const call = track(client.api.createAProject(BODY));
    await runUntil(clock, () => call.settled);
    expect(call.error).toBeInstanceOf(TransientError);
    expect((call.error as TransientError).mayHaveApplied).toBe(true);
    expect(fake.sent).toHaveLength(1);
    const second = track(client.api.createAProject(BODY));
    fake.script('POST', '/v1/projects', reply(502, { message: 'bad gateway' }));
    await runUntil(clock, () => second.settled);
    expect(fake.sent).toHaveLength(2);
    await client.close();
  });

  it('repeats a POST that cannot have reached the service (connection refused)', async () => {
    const { clock, fake, options } = setup();
    fake.script('POST', '/v1/projects', new TransportFailure('connect', false, 'refused'), reply(201, { ref: 'new' }));
    const client = await createClient(options);
    const call = track(client.api.createAProject(BODY));
    await runUntil(clock, () => call.settled);
    expect(call.value).toEqual({ ref: 'new' });
    expect(fake.sent).toHaveLength(2);
    await client.close();
  });

  it('gives up after maxAttempts with the last TransientError', async () => {
    const { clock, fake, options } = setup({ retry: { maxAttempts: 2, baseDelayMs: 10 } });
    fake.setDefault(reply(500, { message: 'boom' }));
    const client = await createClient(options);
    const call = track(client.api.getProject('abc'));
    await runUntil(clock, () => call.settled);
    expect(call.error).toBeInstanceOf(TransientError);
    expect(fake.sent).toHaveLength(2);
    await client.close();
  });

  it('on a 401 fetches a fresh token once, then gives up with UnauthorizedError', async () => {
    const { clock, fake, options } = setup();
    let n = 0;
    let invalidated = 0;
    const auth: TokenSource = { token: async () => `tok-${++n}`, invalidate: async () => void invalidated++ };
    fake.setDefault(reply(401, { message: 'Unauthorized' }));
    fake.script('GET', '/v1/projects/ok', reply(401, { message: 'Unauthorized' }), reply(200, { ref: 'ok' }));
    const client = await createClient({ ...options, auth });
    const ok = track(client.api.getProject('ok'));
    await runUntil(clock, () => ok.settled);
    expect(ok.value).toEqual({ ref: 'ok' });
    expect(fake.sent.map((s) => s.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    const bad = track(client.api.getProject('bad'));
    await runUntil(clock, () => bad.settled);
    expect(bad.error).toBeInstanceOf(UnauthorizedError);
    expect(fake.sent).toHaveLength(4);
    expect(invalidated).toBe(2);
    await client.close();
  });
});

describe('rate limiting', () => {
  it('stops every request for the announced block plus jitter, then resends what was refused', async () => {
    const { clock, fake, events, options } = setup({ rate: { limit: 10, windowMs: 1_000 }, random: () => 0 });
    fake.script('GET', '/v1/projects/p0', reply(429, { message: 'Too many' }, { 'x-ratelimit-reset': '5', 'x-ratelimit-remaining': '0' }));
    const client = await createClient(options);
    const calls = Array.from({ length: 5 }, (_, i) => track(client.api.getProject(`p${i}`)));
    await runUntil(clock, () => calls.every((c) => c.settled));
    expect(calls.every((c) => c.error === undefined)).toBe(true);
    const start = fake.sent[0]!.at;
    const p0 = fake.sent.filter((s) => s.path.endsWith('/p0'));
    expect(p0).toHaveLength(2);
    // The 429 answer arrived at +10 ms: nothing at all was sent for the following 5 s.
    const after = fake.sent.filter((s) => s.at > start + 10);
    expect(after.every((s) => s.at >= start + 10 + 5_000)).toBe(true);
    expect(client.stats().rateLimited).toBe(1);
    expect(events.some((e) => e[0] === 'rateLimited')).toBe(true);
    await client.close();
  });

  it('fails with RateLimitedError once a call has waited out maxRateLimitRetries blocks', async () => {
    const { clock, fake, options } = setup({ retry: { maxRateLimitRetries: 1 } });
    fake.setDefault(reply(429, { message: 'Too many' }, { 'x-ratelimit-reset': '1' }));
    const client = await createClient(options);
    const call = track(client.api.listAllProjects());
    await runUntil(clock, () => call.settled);
    expect(call.error).toBeInstanceOf(RateLimitedError);
    expect(fake.sent).toHaveLength(2);
    await client.close();
  });

  it('halves the effective limit after an unexpected 429, reports it, and recovers step by step', async () => {
    const { clock, fake, events, options } = setup({ rate: { limit: 20, windowMs: 1_000 }, random: () => 0 });
    fake.script('GET', '/v1/projects', reply(429, { message: 'Too many' }, { 'x-ratelimit-reset': '1' }));
    const client = await createClient(options);
    const call = track(client.api.listAllProjects());
    await runUntil(clock, () => call.settled);
    expect(client.budget()).toMatchObject({ limit: 20, effectiveLimit: 10 });
    expect(events.some((e) => e[0] === 'budget' && e[2] === 10)).toBe(true);
    // Recovery: +2 (a tenth of the limit) per window once the block (until +1010 ms) is over.
    await clock.advance(3_000);
    expect(client.budget().effectiveLimit).toBe(16);
    await clock.advance(10_000);
    expect(client.budget().effectiveLimit).toBe(20);
    await client.close();
  });

  it('never plans beyond what the service says remains', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 50, windowMs: 10_000 }, concurrency: 1 });
    fake.script('GET', '/v1/projects/a', reply(200, {}, { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '3' }));
    const client = await createClient(options);
    const calls = ['a', 'b', 'c'].map((ref) => track(client.api.getProject(ref)));
    await runUntil(clock, () => calls.every((c) => c.settled));
    const start = fake.sent[0]!.at;
    // a answered at +10 saying one remains for 3 s: b goes at once, c waits for the reset.
    expect(fake.sent.map((s) => s.at - start)).toEqual([0, 10, 3_010]);
    await client.close();
  });
});

describe('persisted window', () => {
  it('a new client with the same state directory waits for the previous run\'s window', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'client-window-'));
    dirs.push(stateDir);
    const first = setup({ rate: { limit: 3, windowMs: 60_000 }, stateDir });
    const clientA = await createClient(first.options);
    const calls = [1, 2, 3].map(() => track(clientA.api.listAllProjects()));
    await runUntil(first.clock, () => calls.every((c) => c.settled));
    await clientA.close();
    const saved = JSON.parse(await readFile(join(stateDir, 'request-window.json'), 'utf8')) as { sends: number[] };
    expect(saved.sends).toHaveLength(3);

    // A restart 5 s later (same clock time base): the window is still full until +60 s.
    const second = setup({ rate: { limit: 3, windowMs: 60_000 }, stateDir });
    await second.clock.advance(first.clock.now() - second.clock.now() + 5_000);
    const clientB = await createClient(second.options);
    expect(clientB.budget().remaining).toBe(0);
    const call = track(clientB.api.listAllProjects());
    await runUntil(second.clock, () => call.settled);
    expect(second.fake.sent[0]!.at).toBeGreaterThanOrEqual(first.fake.sent[0]!.at + 60_000);
    await clientB.close();
  });

  it('refuses a corrupt window file instead of starting empty', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'client-window-'));
    dirs.push(stateDir);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(stateDir, 'request-window.json'), '{"sends": [1, "x"]}');
    await expect(createClient(setup({ stateDir }).options)).rejects.toThrow(/request-window\.json: expected `sends` to be an array of numbers/);
  });
});

describe('lifecycle', () => {
  it('onIdle waits for calls backing off; close fails waiting calls and refuses new ones', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 1, windowMs: 1_000 }, concurrency: 1 });
    fake.script('GET', '/v1/projects', reply(503, {}), reply(200, []));
    const client = await createClient(options);
    const first = track(client.api.listAllProjects());
    const idle = track(client.onIdle());
    await runUntil(clock, () => first.settled);
    await idle.promise;
    expect(idle.settled).toBe(true);
    const queued = [track(client.api.listAllProjects()), track(client.api.listAllProjects())];
    await clock.advance(0);
    await client.close();
    await Promise.all(queued.map((q) => q.promise));
    expect(queued.filter((q) => q.error !== undefined).length).toBeGreaterThanOrEqual(1);
    await expect(client.api.listAllProjects()).rejects.toThrow('the API client is closed');
  });

  it('a call aborted while waiting leaves the queue and never sends', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 1, windowMs: 1_000 }, concurrency: 1 });
    const client = await createClient(options);
    const controller = new AbortController();
    const first = track(client.api.getProject('first'));
    const second = track(client.api.getProject('second', { signal: controller.signal }));
    controller.abort(new Error('no longer needed'));
    await runUntil(clock, () => first.settled && second.settled);
    expect((second.error as Error).message).toBe('no longer needed');
    expect(fake.sent.map((s) => s.path)).toEqual(['/v1/projects/first']);
    await client.close();
  });

  it('aborting a signal many waiting calls share fails every one of them, and a new signal works after it', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 1, windowMs: 1_000 }, concurrency: 1 });
    const client = await createClient(options);
    const controller = new AbortController();
    const first = track(client.api.getProject('first'));
    const waiting = Array.from({ length: 5 }, (_, i) => track(client.api.getProject(`w${i}`, { signal: controller.signal })));
    controller.abort(new Error('pass stopped'));
    await runUntil(clock, () => first.settled && waiting.every((w) => w.settled));
    expect(waiting.map((w) => (w.error as Error).message)).toEqual(Array(5).fill('pass stopped'));
    const next = new AbortController();
    const after = track(client.api.getProject('after', { signal: next.signal }));
    await runUntil(clock, () => after.settled);
    expect(after.error).toBeUndefined();
    expect(fake.sent.map((s) => s.path)).toEqual(['/v1/projects/first', '/v1/projects/after']);
    await client.close();
  });
});

describe('close during a block', () => {
  it('does not wait out a 429 block: calls waiting for the budget fail with ClientClosedError', async () => {
    const { clock, fake, options } = setup({ random: () => 0 });
    fake.script('GET', '/v1/projects', reply(429, { message: 'Too many' }, { 'x-ratelimit-reset': '60' }));
    const client = await createClient(options);
    const call = track(client.api.listAllProjects());
    await clock.advance(100);
    expect(fake.sent).toHaveLength(1);
    expect(call.settled).toBe(false);
    await client.close();
    await call.promise;
    expect((call.error as Error).name).toBe('ClientClosedError');
    expect(fake.sent).toHaveLength(1);
  });
});

describe('telemetry', () => {
  it('reports each exchange with the route template and its status, or `error` when no answer came', async () => {
    const { clock, fake, events, options } = setup();
    fake.script('GET', '/v1/projects/abcdefghij', new TransportFailure('reset', true, 'reset'), reply(200, { ref: 'abcdefghij' }));
    const client = await createClient(options);
    const call = track(client.api.getProject('abcdefghij'));
    await runUntil(clock, () => call.settled);
    expect(events.filter((e) => e[0] === 'finished')).toEqual([
      ['finished', 'GET', '/v1/projects/{ref}', 'error'],
      ['finished', 'GET', '/v1/projects/{ref}', '200'],
    ]);
    expect(JSON.stringify(events)).not.toContain('abcdefghij');
    expect(client.stats().byRoute).toEqual({ 'GET /v1/projects/{ref}': 2 });
    await client.close();
  });
});

describe('robustness', () => {
  it('fails a call with a bad description instead of leaving it hanging', async () => {
    const { clock, options } = setup();
    const client = await createClient(options);
    const call = track(client.api.getProject(''));
    await runUntil(clock, () => call.settled);
    expect((call.error as Error).message).toBe('Missing path parameter `ref` for /v1/projects/{ref}');
    await client.close();
  });

  it('fails a call whose signal aborts while it is out of the queue (getting a fresh token after a 401) without queueing it again', async () => {
    const { clock, fake, options } = setup({ rate: { limit: 2, windowMs: 60_000 } });
    fake.script('GET', '/v1/projects/r1', reply(401, { message: 'Unauthorized' }));
    let n = 0;
    // Re-reading a token file takes a while: the abort comes while the call is out of the queue.
    const auth: TokenSource = { token: async () => `t${++n}`, invalidate: () => clock.sleep(200) };
    const client = await createClient({ ...options, auth });
    const controller = new AbortController();
    const call = track(client.api.getProject('r1', { signal: controller.signal }));
    const other = track(client.api.getProject('other'));
    await clock.advance(100);
    controller.abort(new Error('pass stopped'));
    await clock.advance(1_000);
    // Not a whole window later, behind the budget: at once.
    expect(call.settled).toBe(true);
    expect((call.error as Error).message).toBe('pass stopped');
    await runUntil(clock, () => other.settled);
    expect(fake.sent.map((s) => s.path)).toEqual(['/v1/projects/r1', '/v1/projects/other']);
    await client.close();
  });

  it('fails a call backing off with its signal\'s reason when the signal aborts and the client closes in the same turn', async () => {
    const { clock, fake, options } = setup();
    fake.script('GET', '/v1/projects/b', reply(503, {}), reply(200, {}));
    const client = await createClient(options);
    const controller = new AbortController();
    const backingOff = track(client.api.getProject('b', { signal: controller.signal }));
    await clock.advance(15);
    controller.abort(new Error('pass stopped'));
    const closing = client.close();
    await clock.advance(0);
    await closing;
    expect((backingOff.error as Error).message).toBe('pass stopped');
  });

  it('sends the call behind an aborted head of the queue at once, when the head waited for its own budget (scoped rate model)', async () => {
    const { clock, fake, options } = setup({ rateModel: 'scoped', rate: { limit: 60, windowMs: 60_000 } });
    const client = await createClient(options);
    // A fresh scoped key allows 10 a window: spend project aaa's.
    const warm = Array.from({ length: 10 }, () => track(client.api.getProject('aaa')));
    await runUntil(clock, () => warm.every((w) => w.settled));
    const controller = new AbortController();
    const head = track(client.api.getProject('aaa', { priority: 'write', signal: controller.signal }));
    const behind = track(client.api.getProject('bbb', { priority: 'verify' }));
    await clock.advance(100);
    expect(behind.settled).toBe(false);
    controller.abort(new Error('stopped'));
    await clock.advance(1_000);
    expect((head.error as Error).message).toBe('stopped');
    expect(behind.settled).toBe(true);
    expect(behind.error).toBeUndefined();
    await client.close();
  });

  it('ends a call that cannot be queued (a priority the scheduler does not know) with nothing left watched or counted', async () => {
    const { clock, options } = setup();
    const client = await createClient(options);
    const controller = new AbortController();
    const call = track(client.api.getProject('r', { signal: controller.signal, priority: 'urgent' as never }));
    await clock.advance(0);
    expect(call.error).toBeInstanceOf(TypeError);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await client.onIdle();
    await client.close();
  });

  it('adds one abort listener to a long-lived signal however many calls share it, and leaves none behind', async () => {
    const { clock, options } = setup();
    const client = await createClient(options);
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => { added += 1; return add(...args); }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => { removed += 1; return remove(...args); }) as typeof remove;
    const calls = Array.from({ length: 20 }, () => track(client.api.listAllProjects({ signal: controller.signal })));
    await runUntil(clock, () => calls.every((c) => c.settled));
    // One listener for the 20 calls: a listener per call costs a scan of the signal's list on every add.
    expect(added).toBe(1);
    expect(removed).toBe(added);
    await client.close();
  });
});

describe('logs', () => {
  it('never carry the token or a request body, through 401s, 429s and retries', async () => {
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../../src/util/logger.js');
    let output = '';
    const destination = new Writable({ write(chunk: Buffer, _encoding, done) { output += chunk.toString(); done(); } });
    const log = createLogger({ level: 'trace', destination });
    const { clock, fake, options } = setup({ log, random: () => 0 });
    let n = 0;
    const auth: TokenSource = { token: async () => `canary-token-${++n}`, invalidate: async () => undefined };
    fake.script('POST', '/v1/projects', reply(401, { message: 'Unauthorized' }), reply(429, { message: 'Too many' }, { 'x-ratelimit-reset': '1' }), reply(201, { ref: 'r' }));
    fake.script('GET', '/v1/projects', reply(503, {}), reply(200, []));
    const client = await createClient({ ...options, auth });
    const calls = [track(client.api.createAProject({ ...BODY, db_pass: 'canary-db-pass' })), track(client.api.listAllProjects())];
    await runUntil(clock, () => calls.every((c) => c.settled));
    await client.close();
    expect(output).toContain('unauthorized: fetching a fresh token');
    expect(output).toContain('transient failure: retrying');
    expect(output).toMatch(/429|rate limited/);
    expect(output).not.toContain('canary-token');
    expect(output).not.toContain('canary-db-pass');
  });
});
