// On-demand passes over real HTTP: POST /reconcile needs the bearer token, re-checks the named
// project at once; push webhooks need a valid signature and wait for the pushed commit.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Daemon, type DaemonPassRequest } from '../../src/daemon/controller.js';
import { startHttpServer, type RunningHttpServer } from '../../src/daemon/http-server.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { triggerRoutes } from '../../src/daemon/trigger.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { manualTrigger, passResult } from './fixtures.js';
import { GitSyncDir, commitId, fakeLoadManifests } from './git-sync.js';

const TOKEN = 'trigger-token-0123456789';
const SECRET = 'webhook-secret-abcdef';

describe('POST /reconcile and push webhooks', () => {
  let dir: GitSyncDir;
  let clock: ManualClock;
  let daemon: Daemon;
  let server: RunningHttpServer;
  let routes: ReturnType<typeof triggerRoutes>;
  let passes: Array<Pick<DaemonPassRequest, 'priority' | 'projects'> & { root: string }>;
  /** Passes wait for it (a long pass); resolved unless a test holds it. */
  let gate: Promise<void>;

  beforeEach(async () => {
    dir = await GitSyncDir.create();
    clock = new ManualClock();
    passes = [];
    gate = Promise.resolve();
    await writeFile(join(dir.root, 'token'), `${TOKEN}\n`);
    await writeFile(join(dir.root, 'secret'), SECRET);
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    daemon = new Daemon({
      manifestsPath: dir.link,
      runPass: async (request) => {
        passes.push({ priority: request.priority, projects: request.projects, root: request.manifests.root });
        await gate;
        return passResult({ result: 'success', outcomes: [], resources: [], projects: [] });
      },
      loadManifests: fakeLoadManifests,
      metrics: createMetrics(undefined, { clock, processMetrics: false }),
      log: silentLogger,
      clock,
      trigger: manualTrigger(60_000),
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      settleMs: 10,
    });
    await daemon.start();
    await daemon.idle();
    routes = triggerRoutes(daemon, { tokenFile: join(dir.root, 'token'), webhookSecretFile: join(dir.root, 'secret'), now: () => clock.now() }, silentLogger);
    server = await startHttpServer(
      { host: '127.0.0.1', port: 0 },
      {
        metrics: async () => ({ contentType: 'text/plain', body: '' }),
        readiness: () => ({ ready: true, reasons: [] }),
        post: routes,
      },
      silentLogger,
    );
  });

  afterEach(async () => {
    await server.close();
    await daemon.stop(1_000);
    await dir.close();
  });

  /** Waits for the daemon to be idle, moving the clock (re-checks after a scoped pass are paced). */
  async function settle(): Promise<void> {
    let done = false;
    void daemon.idle().finally(() => (done = true));
    while (!done) await clock.advance(1_000);
  }
  const writes = () => passes.filter((p) => p.priority === 'write');

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  it('answers 401 without the token or with a wrong one, and runs nothing', async () => {
    const none = await post('/reconcile', '{"projects":["b"]}');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post('/reconcile', '{}', { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await post('/reconcile', '{}', { authorization: TOKEN })).status).toBe(401);
    await daemon.idle();
    expect(passes).toHaveLength(1);
    expect((await fetch(`${server.url}/reconcile`)).status).toBe(405);
  });

  it('with the token, re-checks the named project at once (no clock moves), at write priority', async () => {
    const answer = await post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` });
    expect(answer.status).toBe(202);
    expect(await answer.json()).toEqual({ status: 'started', projects: ['b'], revision: commitId(1), pass: 1, queued: false, joined: false });
    await daemon.idle();
    expect(passes.map((p) => [p.priority, p.projects])).toEqual([
      ['write', undefined],
      ['write', ['b']],
    ]);
    const query = await post('/reconcile?project=a', '', { authorization: `Bearer ${TOKEN}` });
    expect(query.status).toBe(202);
    const unknown = await post('/reconcile', '{"projects":["nope"]}', { authorization: `Bearer ${TOKEN}` });
    expect([unknown.status, ((await unknown.json()) as { message: string }).message]).toEqual([404, 'no Project manifest named `nope`']);
    const near = await post('/reconcile', '{"projects":["nope","bb"]}', { authorization: `Bearer ${TOKEN}` });
    expect(await near.json()).toEqual({ status: 'unknown-projects', message: 'no Project manifest named `nope`, `bb` (did you mean `b`?)', projects: ['nope', 'bb'] });
    expect((await post('/reconcile', '{"projects":"b"}', { authorization: `Bearer ${TOKEN}` })).status).toBe(400);
    const everything = await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` });
    expect(await everything.json()).toMatchObject({ status: 'started', projects: 'all', revision: commitId(1), joined: false });
    await daemon.idle();
    expect(passes.map((p) => p.projects)).toEqual([undefined, ['b'], ['a'], undefined]);
  });

  it('refuses a body over the bound with 413', async () => {
    const big = JSON.stringify({ projects: Array.from({ length: 4_000 }, (_, i) => `p${i}`) });
    expect((await post('/reconcile', big, { authorization: `Bearer ${TOKEN}` })).status).toBe(413);
  });

  it('refuses webhooks with a wrong or missing signature (GitHub, GitLab, generic)', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: commitId(2) });
    expect((await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body, 'wrong') })).status).toBe(403);
    expect((await post('/reconcile/webhook', body, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong' })).status).toBe(403);
    const timestamp = String(Math.floor(clock.now() / 1000));
    expect((await post('/reconcile/webhook', body, { 'x-reconciler-timestamp': timestamp, 'x-reconciler-signature-256': sign(`${timestamp}.${body} `) })).status).toBe(403);
    // The generic form signs a timestamp with the body: the body alone is not accepted.
    expect((await post('/reconcile/webhook', body, { 'x-reconciler-signature-256': sign(body) })).status).toBe(401);
    expect((await post('/reconcile/webhook', body)).status).toBe(401);
    // A valid signature of another body.
    expect((await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign('{}') })).status).toBe(403);
    await daemon.idle();
    expect(passes).toHaveLength(1);
  });

  it('a signed GitHub push of a commit the checkout does not have yet is waited for, then applied', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: commitId(2) });
    const answer = await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) });
    expect(answer.status).toBe(202);
    expect(await answer.json()).toEqual({ status: 'waiting', revision: commitId(2), current: commitId(1) });
    await dir.worktree(commitId(2), { 'a.yaml': 'a', 'b.yaml': 'b changed' });
    await dir.publish(commitId(2));
    // The daemon has no file watcher here: the re-read after the first backoff (1 s) finds it.
    await clock.advance(1_000);
    await settle();
    expect(writes().map((p) => [p.priority, p.projects])).toEqual([
      ['write', undefined],
      ['write', ['b']],
    ]);
    expect(writes()[1]!.root).toBe(join(dir.root, '.worktrees', commitId(2)));
    // The same push again is a replay: recognised, nothing more runs.
    const again = await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) });
    expect([again.status, ((await again.json()) as { status: string }).status]).toEqual([200, 'duplicate']);
    const ping = await post('/reconcile/webhook', '{}', { 'x-github-event': 'ping', 'x-hub-signature-256': sign('{}') });
    expect(ping.status).toBe(200);
  });

  it('a GitLab push with the right token reads the checkout at once', async () => {
    await dir.worktree(commitId(3), { 'a.yaml': 'a changed', 'b.yaml': 'b' });
    await dir.publish(commitId(3));
    const body = JSON.stringify({ object_kind: 'push', after: commitId(3) });
    const answer = await post('/reconcile/webhook', body, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': SECRET });
    expect([answer.status, await answer.json()]).toEqual([200, { status: 'current', revision: commitId(3) }]);
    await settle();
    expect(writes().map((p) => p.projects)).toEqual([undefined, ['a']]);
  });

  it("git-sync's webhook (Gitsync-Hash) makes the daemon read the checkout now", async () => {
    await dir.worktree(commitId(4), { 'a.yaml': 'a', 'b.yaml': 'b', 'c.yaml': 'c' });
    await dir.publish(commitId(4));
    const answer = await fetch(`${server.url}/reconcile/source`, { method: 'POST', headers: { 'gitsync-hash': commitId(4) } });
    expect(answer.status).toBe(200);
    await settle();
    expect(writes().map((p) => p.projects)).toEqual([undefined, ['c']]);
  });

  /** A generic webhook signed as documented: HMAC-SHA256 of `<timestamp>.<body>`. */
  const signedGeneric = (body: string, at = clock.now()) => {
    const timestamp = String(Math.floor(at / 1000));
    return { 'x-reconciler-timestamp': timestamp, 'x-reconciler-signature-256': sign(`${timestamp}.${body}`) };
  };

  it('coalesces on-demand passes: twenty requests while one runs start at most two passes, and each answer names its pass', async () => {
    // The next pass holds until released, as a long pass would.
    let release!: () => void;
    gate = new Promise<void>((resolveHeld) => (release = resolveHeld));
    const first = await post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` });
    expect(await first.json()).toMatchObject({ status: 'started', pass: 1, queued: false, joined: false });
    const before = passes.length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` }).then((r) => r.json() as Promise<{ pass: number; queued: boolean; joined: boolean }>)),
    );
    release();
    await daemon.idle();
    // The running pass (1) and one queued pass (2) that every later request joined.
    expect(new Set(answers.map((a) => a.pass))).toEqual(new Set([2]));
    expect(answers.filter((a) => !a.joined)).toHaveLength(1);
    expect(answers.every((a) => a.queued)).toBe(true);
    expect(passes.length - before).toBeLessThanOrEqual(2);
    expect(writes().filter((p) => p.projects?.[0] === 'b')).toHaveLength(2);
    // Once they ran, a request within the trigger interval (default 30 s), with no new
    // revision, is answered with the last pass and starts nothing.
    const soon = await post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` });
    expect(soon.status).toBe(200);
    expect(soon.headers.get('retry-after')).toBe('30');
    expect(await soon.json()).toMatchObject({ status: 'recent', projects: ['b'], pass: 2, result: 'success', nextPassAt: new Date(clock.now() + 30_000).toISOString() });
    await clock.advance(29_999);
    expect(await (await post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` })).json()).toMatchObject({ status: 'recent', pass: 2 });
    expect(writes().filter((p) => p.projects?.[0] === 'b')).toHaveLength(2);
    // Past the interval, a new request starts a new pass.
    await clock.advance(1);
    const later = await post('/reconcile', '{"projects":["b"]}', { authorization: `Bearer ${TOKEN}` });
    expect(await later.json()).toMatchObject({ status: 'started', pass: 3, queued: false, joined: false });
  });

  it('a pass over everything that finished within the interval answers a request for one project; a new revision starts one', async () => {
    const all = await (await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` })).json();
    expect(all).toMatchObject({ status: 'started', pass: 1 });
    await daemon.idle();
    expect(await (await post('/reconcile', '{"projects":["a"]}', { authorization: `Bearer ${TOKEN}` })).json()).toMatchObject({ status: 'recent', projects: ['a'], pass: 1 });
    expect(await (await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` })).json()).toMatchObject({ status: 'recent', projects: 'all', pass: 1 });
    // A new revision: the request reads it (its own pass), then the next one starts a pass.
    await dir.worktree(commitId(7), { 'a.yaml': 'a2', 'b.yaml': 'b' });
    await dir.publish(commitId(7), commitId(1));
    await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` });
    await settle();
    expect(await (await post('/reconcile', '{"projects":["a"]}', { authorization: `Bearer ${TOKEN}` })).json()).toMatchObject({ status: 'started', projects: ['a'] });
  });

  it('within the interval, another combination of recently passed projects starts no pass', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect(await (await post('/reconcile', '{"projects":["a"]}', auth)).json()).toMatchObject({ status: 'started', pass: 1 });
    await daemon.idle();
    await clock.advance(5_000);
    expect(await (await post('/reconcile', '{"projects":["b"]}', auth)).json()).toMatchObject({ status: 'started', pass: 2 });
    await daemon.idle();
    await clock.advance(10_000);
    const before = writes().length;
    // Each of a and b had its own pass: `a,b`, `b,a`, `a` and `b` are all answered from them,
    // by the pass whose interval ends first (a's, 15 s from now).
    for (const projects of ['["a","b"]', '["b","a"]', '["a","a"]', '["b"]']) {
      const answer = await post('/reconcile', `{"projects":${projects}}`, auth);
      expect(await answer.json()).toMatchObject({ status: 'recent' });
    }
    expect(await (await post('/reconcile', '{"projects":["b","a"]}', auth)).json()).toMatchObject({ status: 'recent', pass: 1, nextPassAt: new Date(clock.now() + 15_000).toISOString() });
    await daemon.idle();
    expect(writes().length).toBe(before);
    // Once a's pass is older than the interval, a request that holds a starts a pass.
    await clock.advance(15_000);
    expect(await (await post('/reconcile', '{"projects":["b","a"]}', auth)).json()).toMatchObject({ status: 'started' });
  });

  it('a queued pass over everything covers a later request for one project', async () => {
    let release!: () => void;
    gate = new Promise<void>((resolveHeld) => (release = resolveHeld));
    const all1 = await (await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` })).json();
    const all2 = await (await post('/reconcile', '', { authorization: `Bearer ${TOKEN}` })).json();
    const one = await (await post('/reconcile', '{"projects":["a"]}', { authorization: `Bearer ${TOKEN}` })).json();
    expect([all1, all2, one]).toMatchObject([
      { pass: 1, queued: false },
      { pass: 2, queued: true, joined: false },
      { pass: 2, queued: true, joined: true },
    ]);
    release();
    await daemon.idle();
    expect(writes().map((p) => p.projects)).toEqual([undefined, undefined, undefined]);
  });

  it('a replayed signed webhook starts no pass; a timestamp outside the tolerance is refused', async () => {
    await dir.worktree(commitId(5), { 'a.yaml': 'a', 'b.yaml': 'b' });
    const body = JSON.stringify({ projects: ['a'] });
    const headers = signedGeneric(body);
    const answer = await post('/reconcile/webhook', body, headers);
    expect([answer.status, ((await answer.json()) as { status: string }).status]).toEqual([202, 'started']);
    await daemon.idle();
    const after = passes.length;
    for (let i = 0; i < 20; i++) {
      const replay = await post('/reconcile/webhook', body, headers);
      expect([replay.status, ((await replay.json()) as { status: string }).status]).toEqual([200, 'duplicate']);
    }
    await daemon.idle();
    expect(passes.length).toBe(after);
    // Signed six minutes ago, or six minutes ahead: refused before the body is read.
    const old = await post('/reconcile/webhook', body, signedGeneric(body, clock.now() - 6 * 60_000));
    expect([old.status, ((await old.json()) as { message: string }).message]).toEqual([403, "the timestamp is more than 5 minutes away from the daemon's clock"]);
    expect((await post('/reconcile/webhook', body, signedGeneric(body, clock.now() + 6 * 60_000))).status).toBe(403);
    // GitHub: the same delivery id again is a replay, even with a body signed anew.
    const push = JSON.stringify({ ref: 'refs/heads/main', after: commitId(1), n: 1 });
    const github = { 'x-github-event': 'push', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' };
    expect(((await (await post('/reconcile/webhook', push, { ...github, 'x-hub-signature-256': sign(push) })).json()) as { status: string }).status).toBe('current');
    const resent = JSON.stringify({ ref: 'refs/heads/main', after: commitId(1), n: 2 });
    expect(((await (await post('/reconcile/webhook', resent, { ...github, 'x-hub-signature-256': sign(resent) })).json()) as { status: string }).status).toBe('duplicate');
    await daemon.idle();
    expect(passes.length).toBe(after);
  });

  it('refuses an unauthenticated body before reading it: no signature, a declared length over 5 MiB, a bearer route without its token', async () => {
    const huge = { 'content-length': String(5 * 1024 * 1024 + 1) };
    const request = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolveStatus, reject) => {
        const url = new URL(`${server.url}${path}`);
        // Only the headers are sent: the daemon answers without waiting for the body.
        const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers });
        req.on('response', (response) => {
          response.resume();
          resolveStatus(response.statusCode ?? 0);
        });
        req.on('error', reject);
        req.flushHeaders();
      });
    expect(await request('/reconcile/webhook', { ...huge, 'x-hub-signature-256': 'sha256=00' })).toBe(413);
    expect(await request('/reconcile/webhook', { 'content-length': '1000000' })).toBe(401);
    expect(await request('/reconcile', { 'content-length': '10000' })).toBe(401);
    expect(await request('/reconcile/webhook', { 'content-length': '1000000', ...signedGeneric('x', clock.now() - 3_600_000) })).toBe(403);
  });

  it('reads at most four webhook bodies at once: the fifth is refused with 503 before it is read', async () => {
    const url = new URL(`${server.url}/reconcile/webhook`);
    const clients: http.ClientRequest[] = [];
    const statuses: number[] = [];
    const start = () =>
      new Promise<void>((resolveSent) => {
        const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-length': '100000', 'x-hub-signature-256': 'sha256=00' } });
        req.on('response', (response) => {
          statuses.push(response.statusCode ?? 0);
          response.resume();
        });
        req.on('error', () => undefined);
        req.write(Buffer.alloc(10), () => resolveSent());
        clients.push(req);
      });
    // Counts the bodies the daemon has started reading.
    const route = routes['/reconcile/webhook']!;
    const open = route.open!.bind(route);
    let reading = 0;
    let fourth!: () => void;
    const four = new Promise<void>((resolveFour) => (fourth = resolveFour));
    route.open = async (request) => {
      const opened = await open(request);
      if (++reading === 4) fourth();
      return opened;
    };
    for (let i = 0; i < 4; i++) await start();
    // The four are being read (their bodies are not complete): the next one is refused unread.
    await four;
    const fifth = await new Promise<number>((resolveStatus) => {
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-length': '100000', 'x-hub-signature-256': 'sha256=00' } });
      req.on('response', (response) => {
        response.resume();
        resolveStatus(response.statusCode ?? 0);
      });
      req.on('error', () => undefined);
      req.flushHeaders();
    });
    expect(fifth).toBe(503);
    // Clients that go away mid-body free their places at once.
    for (const req of clients) req.destroy();
    let status = 503;
    while (status === 503) {
      const body = JSON.stringify({ ref: 'refs/heads/main', after: commitId(1) });
      status = (await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body, 'wrong') })).status;
    }
    expect(status).toBe(403);
  });

  it('reads the commit of a signed push longer than what is kept (many commits) from its head', async () => {
    const commits = Array.from({ length: 3_000 }, (_, i) => ({ id: commitId(1), message: `commit ${i} ${'x'.repeat(300)}` }));
    const body = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after: commitId(1), created: false, commits });
    expect(body.length).toBeGreaterThan(512 * 1024);
    const answer = await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) });
    expect([answer.status, await answer.json()]).toEqual([200, { status: 'current', revision: commitId(1) }]);
    // Signed wrongly, the same long body is refused.
    const wrong = await post('/reconcile/webhook', `${body} `, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) });
    expect(wrong.status).toBe(403);
  });
});
