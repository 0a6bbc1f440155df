// On-demand passes over real HTTP: POST /reconcile needs the bearer token, re-checks the named
// project at once; push webhooks need a valid signature and wait for the pushed commit.
import { createHmac } from 'node:crypto';
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
  let passes: Array<Pick<DaemonPassRequest, 'priority' | 'projects'> & { root: string }>;

  beforeEach(async () => {
    dir = await GitSyncDir.create();
    clock = new ManualClock();
    passes = [];
    await writeFile(join(dir.root, 'token'), `${TOKEN}\n`);
    await writeFile(join(dir.root, 'secret'), SECRET);
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    daemon = new Daemon({
      manifestsPath: dir.link,
      runPass: async (request) => {
        passes.push({ priority: request.priority, projects: request.projects, root: request.manifests.root });
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
    server = await startHttpServer(
      { host: '127.0.0.1', port: 0 },
      {
        metrics: async () => ({ contentType: 'text/plain', body: '' }),
        readiness: () => ({ ready: true, reasons: [] }),
        post: triggerRoutes(daemon, { tokenFile: join(dir.root, 'token'), webhookSecretFile: join(dir.root, 'secret') }, silentLogger),
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
    expect(await answer.json()).toEqual({ status: 'started', projects: ['b'], revision: commitId(1) });
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
    expect(await everything.json()).toEqual({ status: 'started', projects: 'all', revision: commitId(1) });
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
    expect((await post('/reconcile/webhook', body, { 'x-reconciler-signature-256': sign(`${body} `) })).status).toBe(403);
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
    // The same push again: the checkout has it, nothing more runs.
    const again = await post('/reconcile/webhook', body, { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) });
    expect([again.status, await again.json()]).toEqual([200, { status: 'current', revision: commitId(2) }]);
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
});
