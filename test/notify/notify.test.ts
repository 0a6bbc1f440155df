// Notifications from a daemon driving the emulator over real HTTP: a local receiver gets exactly
// one signed event per failure and per revision, however many passes repeat them, and nothing
// that could be a secret.
import { createHmac } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { Daemon } from '../../src/daemon/controller.js';
import { createMetrics, createNotificationMetrics } from '../../src/daemon/metrics.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { eventsFromPass, type NotificationEvent } from '../../src/notify/events.js';
import { Notifier } from '../../src/notify/notifier.js';
import { runPass } from '../../src/reconcile/engine.js';
import { ManualClock, systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { manualTrigger } from '../daemon/fixtures.js';
import { GitSyncDir, commitId } from '../daemon/git-sync.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const SHOP_REF = 'shopshopshopshopshop';
const BLOG_REF = 'blogblogblogblogblog';
const SECRET = 'whsec-test-0123456789';

const ORGANIZATION = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec: {}
`;
const project = (name: string, ref: string, config: string) => `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
spec:
  organization: acme
  ref: ${ref}
  region: eu-west-1
${config}`;
const SHOP = project('shop', SHOP_REF, '  auth:\n    site_url: https://shop.example\n');

let emulator: RunningEmulator;
let client: ApiClient;
let source: GitSyncDir;
let receiver: TestReceiver;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      organizations: [{ slug: 'acme', name: 'acme' }],
      projects: [
        { ref: SHOP_REF, name: 'shop', organization: 'acme', region: 'eu-west-1' },
        { ref: BLOG_REF, name: 'blog', organization: 'acme', region: 'eu-west-1' },
      ],
    },
  });
  // Every auth update fails (only shop has one).
  emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/config/auth', method: 'PATCH', errorRate: 1, errorStatus: 503 }] });
  client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 }, retry: { maxAttempts: 1 } });
  source = await GitSyncDir.create();
  receiver = await startReceiver('ok');
});

afterAll(async () => {
  await receiver?.close();
  await client?.close();
  await emulator?.close();
  await source?.close();
});

function verified(body: string, signature: string | string[] | undefined): boolean {
  return signature === `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
}

describe('notifications from the daemon (emulator over HTTP)', () => {
  it('sends one signed event per failure and per revision despite repeated passes', async () => {
    const notifyClock = new ManualClock();
    const metrics = createMetrics(undefined, { processMetrics: false });
    const notifier = new Notifier({
      settings: {
        dedupWindowMs: 3_600_000,
        receivers: [{ name: 'ops', type: 'webhook', url: `${receiver.url}/hook`, secret: { env: 'HOOK_SECRET' }, rate: { limit: 1_000, windowMs: 60_000 }, timeoutMs: 10_000, retries: 0, queueSize: 100 }],
      },
      clock: notifyClock,
      log: silentLogger,
      env: { HOOK_SECRET: SECRET },
      metrics: createNotificationMetrics(metrics.registry, ['ops']),
    });
    const trigger = manualTrigger(1_000);
    const daemon = new Daemon({
      manifestsPath: source.link,
      loadManifests: (dir) => loadManifests(dir),
      runPass: (request) =>
        runPass({
          manifests: request.manifests,
          client,
          stateDir: join(source.root, 'state'),
          dryRun: false,
          env: {},
          log: silentLogger,
          signal: request.signal,
          priority: request.priority,
          ...(request.projects ? { projects: request.projects } : {}),
        }),
      metrics,
      log: silentLogger,
      clock: systemClock,
      trigger,
      budget: () => ({ limit: 100_000, windowMs: 60_000 }),
      minSliceSpacingMs: 1_000,
      onPass: (result, report) => notifier.publish(eventsFromPass(result, report, notifyClock.now())),
    });

    await source.worktree(commitId(1), {
      'organization.yaml': ORGANIZATION,
      'shop.yaml': SHOP,
      'blog.yaml': project('blog', BLOG_REF, ''),
    });
    await source.publish(commitId(1));
    await daemon.start();
    await daemon.idle();
    // The same failure again: two scheduled re-checks and an on-demand pass of the same revision.
    trigger.tick();
    await daemon.idle();
    trigger.tick();
    await daemon.idle();
    expect((await daemon.requestPass({})).status).toBe('started');
    await daemon.idle();
    await notifier.idle();

    // A new revision (blog changes): the shop failure is reported again, once, for it.
    await source.worktree(commitId(2), {
      'organization.yaml': ORGANIZATION,
      'shop.yaml': SHOP,
      'blog.yaml': project('blog', BLOG_REF, '  restapi:\n    max_rows: 500\n'),
    });
    await source.publish(commitId(2), { removePrevious: commitId(1) });
    await daemon.reload();
    await daemon.idle();
    trigger.tick();
    await daemon.idle();
    await notifier.idle();
    await daemon.stop(5_000);
    await notifier.close();

    for (const request of receiver.received) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hook');
      expect(request.headers['content-type']).toBe('application/json');
      expect(verified(request.body, request.headers['x-reconciler-signature-256']), 'signature').toBe(true);
    }
    const events = receiver.received.map((request) => (JSON.parse(request.body) as { event: NotificationEvent }).event);
    const summary = events.map((event) => [event.type, event.revision, event.resource ?? event.result]);
    expect(summary).toEqual([
      ['revision_applied', commitId(1), 'failed'],
      ['resource_failed', commitId(1), 'ProjectAuth/shop/auth'],
      // Drift re-checks of the first revision found nothing new; then the second revision.
      ['revision_applied', commitId(2), 'success'],
      ['resource_failed', commitId(2), 'ProjectAuth/shop/auth'],
    ]);
    // Revision 2 changed blog alone: its write pass covered blog; the re-check after it met shop's failure.
    // The blog's write applied only with revision 2 (a write pass, counted there, not as drift).
    expect(events[2]!.counts).toMatchObject({ updated: 1, failed: 0 });
    expect(events[2]!.projects).toEqual(['blog']);
    expect(events[1]!.reason).toMatch(/^TransientError|^[A-Za-z]+Error/);
    expect(JSON.stringify(events)).not.toContain(emulator.token);
    expect(JSON.stringify(events)).not.toContain('https://shop.example');
    expect(await metrics.render()).toMatch(/^reconciler_notifications_total\{receiver="ops",result="sent"\} 4$/m);
  });
});
