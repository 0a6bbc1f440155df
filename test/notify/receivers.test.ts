// Receivers that fail never slow the daemon, and GitHub commit statuses match GitHub's own
// published API description (@octokit/openapi) for success and failure.
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Daemon, type DaemonPassRequest } from '../../src/daemon/controller.js';
import { createMetrics, createNotificationMetrics } from '../../src/daemon/metrics.js';
import type { ReceiverSpec } from '../../src/notify/config.js';
import { eventsFromPass } from '../../src/notify/events.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { PassResult } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { manualTrigger, passResult } from '../daemon/fixtures.js';
import { GitSyncDir, commitId, fakeLoadManifests } from '../daemon/git-sync.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const LIMITS = { rate: { limit: 100, windowMs: 60_000 }, timeoutMs: 10_000, retries: 2, queueSize: 3 };

function webhook(name: string, url: string): ReceiverSpec {
  return { name, type: 'webhook', url, secret: { env: 'HOOK_SECRET' }, ...LIMITS };
}

describe('a failing receiver does not delay the daemon', () => {
  let dir: GitSyncDir;
  let hanging: TestReceiver;
  let failing: TestReceiver;

  beforeEach(async () => {
    dir = await GitSyncDir.create();
    hanging = await startReceiver('hang');
    failing = await startReceiver('error');
  });

  afterEach(async () => {
    await hanging.close();
    await failing.close();
    await dir.close();
  });

  it('runs the next pass while one receiver hangs and another answers 500; retries, then counts failures and drops', async () => {
    const clock = new ManualClock();
    const metrics = createMetrics(undefined, { clock, processMetrics: false });
    const notifier = new Notifier({
      settings: { dedupWindowMs: 3_600_000, receivers: [webhook('hangs', hanging.url), webhook('fails', failing.url)] },
      clock,
      log: silentLogger,
      env: { HOOK_SECRET: 'k' },
      metrics: createNotificationMetrics(metrics.registry, ['hangs', 'fails']),
    });
    const passes: DaemonPassRequest[] = [];
    let n = 0;
    const daemon = new Daemon({
      manifestsPath: dir.link,
      // Every pass fails a different resource: new events each time.
      runPass: async (request): Promise<PassResult> => {
        passes.push(request);
        n += 1;
        return passResult({ revision: commitId(1), outcomes: [{ entryId: `Secret/a/K${n}`, kind: 'Secret', action: 'create', result: 'failed', error: { type: 'TransientError', message: 'answered 503' } }] });
      },
      loadManifests: fakeLoadManifests,
      metrics,
      log: silentLogger,
      clock,
      trigger: manualTrigger(60_000),
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      settleMs: 10,
      // On-demand passes back to back: no interval between passes for one project here.
      triggerIntervalMs: 0,
      onPass: (result, report) => notifier.publish(eventsFromPass(result, report, clock.now())),
    });
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    const start = clock.now();
    let lastRender = '';
    const until = async (manual: ManualClock, done: () => boolean) => {
      // Real sockets need event-loop turns between clock steps; bounded, never a timed sleep.
      for (let step = 0; step < 2_000 && !done(); step++) {
        await manual.advance(step % 50 === 0 ? 1_000 : 0);
        await new Promise<void>((resolve) => setImmediate(resolve));
        lastRender = (await metrics.render()).split('\n').filter((line) => line.includes('receiver="fails",result="failed"')).join('\n');
      }
      expect(done()).toBe(true);
    };
    await daemon.start();
    await daemon.idle();
    await hanging.waitFor(1);
    await failing.waitFor(1);
    // Both receivers hold their first delivery; the clock has not moved: the next passes run at once.
    for (let i = 0; i < 4; i++) {
      expect((await daemon.requestPass({ projects: ['a'] })).status).toBe('started');
      await daemon.idle();
    }
    expect(passes).toHaveLength(5);
    expect(hanging.received).toHaveLength(1);
    // Seven distinct events (the four on-demand passes repeat one revision_applied, deduplicated):
    // one in flight, three queued, three dropped and counted, per receiver.
    const text = await metrics.render();
    expect(text).toMatch(/^reconciler_notifications_dropped_total\{receiver="hangs"\} 3$/m);
    expect(text).toMatch(/^reconciler_notifications_dropped_total\{receiver="fails"\} 3$/m);
    // The timeout (10 s) and the retries (1 s, 2 s) run on the injected clock: the hanging
    // receiver is asked again only once its attempt timed out and the backoff passed.
    await clock.advance(9_999);
    expect(hanging.received).toHaveLength(1);
    await until(clock, () => hanging.received.length >= 2);
    expect(clock.now() - start).toBeGreaterThanOrEqual(10_000 + 1_000);
    await until(clock, () => failing.received.length >= 12 && /result="failed"\} 4$/m.test(lastRender));
    await notifier.close();
    const after = await metrics.render();
    // Each of the four kept events: three attempts (one plus two retries), then counted as failed.
    expect(after).toMatch(/^reconciler_notifications_total\{receiver="fails",result="failed"\} 4$/m);
    expect(after).toMatch(/^reconciler_notifications_total\{receiver="fails",result="sent"\} 0$/m);
    expect(failing.received).toHaveLength(12);
    await daemon.stop(1_000);
  });
});

interface Operation {
  parameters: Array<{ $ref?: string; name?: string; in?: string; schema?: object }>;
  requestBody: { content: { 'application/json': { schema: object } } };
}

function githubOperation(): { path: string; operation: Operation; spec: { components: { parameters: Record<string, { name: string; in: string; schema: object }> } } } {
  const require = createRequire(import.meta.url);
  const spec = require('@octokit/openapi/generated/api.github.com.json') as { paths: Record<string, Record<string, { operationId?: string }>>; components: { parameters: Record<string, { name: string; in: string; schema: object }> } };
  for (const [path, operations] of Object.entries(spec.paths)) {
    for (const operation of Object.values(operations)) {
      if (operation.operationId === 'repos/create-commit-status') return { path, operation: operation as unknown as Operation, spec };
    }
  }
  throw new Error('repos/create-commit-status is not in the description');
}

describe('GitHub commit statuses', () => {
  let github: TestReceiver;

  beforeEach(async () => {
    github = await startReceiver('ok');
  });

  afterEach(async () => {
    await github.close();
  });

  it('posts to repos/create-commit-status with a body and path valid against GitHub’s OpenAPI description, success and failure', async () => {
    const { path: template, operation, spec } = githubOperation();
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validateBody = ajv.compile(operation.requestBody.content['application/json'].schema);
    const clock = new ManualClock();
    const token = 'ghp_TESTTOKEN0123456789abcdefghij';
    const real = new Notifier({
      settings: {
        dedupWindowMs: 3_600_000,
        receivers: [{ name: 'commits', type: 'github', repository: 'acme/fleet', apiUrl: `${github.url}/api/v3`, token: { env: 'GH_TOKEN' }, context: 'fleet-reconciler', ...LIMITS }],
      },
      clock,
      log: silentLogger,
      env: { GH_TOKEN: token },
    });
    const failed = passResult({ revision: commitId(7) });
    const succeeded = passResult({ revision: commitId(8), result: 'success', outcomes: [{ entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'success' }] });
    real.publish(eventsFromPass(failed, { priority: 'write', trigger: 'revision', revision: commitId(7) }, clock.now()));
    real.publish(eventsFromPass(succeeded, { priority: 'write', trigger: 'revision', revision: commitId(8) }, clock.now()));
    // Drift re-checks and repeats give no further status.
    real.publish(eventsFromPass(failed, { priority: 'drift', trigger: 'resync', revision: commitId(7) }, clock.now()));
    real.publish(eventsFromPass(succeeded, { priority: 'write', trigger: 'manual', revision: commitId(8) }, clock.now()));
    await github.waitFor(2);
    await real.idle();
    await real.close();
    expect(github.received).toHaveLength(2);

    const pattern = new RegExp(`^/api/v3${template.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);
    const states: string[] = [];
    for (const request of github.received) {
      expect(request.method).toBe('POST');
      const match = pattern.exec(request.path);
      expect(match, request.path).not.toBeNull();
      for (const parameter of operation.parameters) {
        const resolved = parameter.$ref ? spec.components.parameters[parameter.$ref.split('/').pop()!]! : (parameter as { name: string; in: string; schema: object });
        if (resolved.in !== 'path') continue;
        const value = decodeURIComponent(match!.groups![resolved.name]!);
        expect(ajv.validate(resolved.schema, value), `${resolved.name}: ${ajv.errorsText()}`).toBe(true);
      }
      const body = JSON.parse(request.body) as { state: string; description: string; context: string };
      expect(validateBody(body), ajv.errorsText(validateBody.errors)).toBe(true);
      expect(body.description.length).toBeLessThanOrEqual(140);
      expect(body.context).toBe('fleet-reconciler');
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
      expect(request.headers.accept).toBe('application/vnd.github+json');
      states.push(`${match!.groups!.sha}:${body.state}`);
      expect(request.body).not.toContain(token);
    }
    expect(states).toEqual([`${commitId(7)}:failure`, `${commitId(8)}:success`]);
    expect(github.received.map((r) => match(r.path))).toEqual(['acme/fleet', 'acme/fleet']);
  });
});

function match(path: string): string {
  return /\/repos\/([^/]+)\/([^/]+)\//.exec(path)!.slice(1).join('/');
}
