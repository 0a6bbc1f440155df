// A daemon stopped (SIGTERM) while a drift re-check retries a change that keeps failing with a
// 500: the change is interrupted, not failed. Its receiver hears nothing about the shutdown, the
// log says "interrupted" once at info level, and the next daemon on the same state directory
// retries the change (built command, emulator over HTTP, a local signed-webhook receiver).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient } from '../../src/api/client.js';
import { Daemon } from '../../src/daemon/controller.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { runPass } from '../../src/reconcile/engine.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { manualTrigger } from './fixtures.js';
import type { NotificationEvent } from '../../src/notify/events.js';
import { startReceiver, type TestReceiver } from '../notify/receiver.js';
import { DaemonProcess, assertBuilt, type LogLine } from './daemon-process.js';

const SHOP_REF = 'shopshopshopshopshop';
const AUTH_ROUTE = '/v1/projects/{ref}/config/auth';
const FAILING = { route: AUTH_ROUTE, method: 'PATCH', errorRate: 1, errorStatus: 500 };

let emulator: RunningEmulator;
let receiver: TestReceiver;
let work: string;
let daemon: DaemonProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: { organizations: [{ slug: 'acme', name: 'acme' }], projects: [{ ref: SHOP_REF, name: 'shop', organization: 'acme', region: 'eu-west-1' }] },
  });
  receiver = await startReceiver('ok');
  work = await mkdtemp(join(tmpdir(), 'reconciler-interrupted-e2e-'));
  await mkdir(join(work, 'manifests'));
  await writeFile(join(work, 'manifests', 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
  await writeFile(
    join(work, 'manifests', 'shop.yaml'),
    `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: acme\n  ref: ${SHOP_REF}\n  region: eu-west-1\n  auth:\n    site_url: https://shop.example\n`,
  );
});

afterAll(async () => {
  await daemon?.stop();
  await receiver?.close();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const start = () =>
  new DaemonProcess(
    // A drift re-check every second.
    [join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '* * * * * *', '--notify', `${receiver.url}/hook`],
    {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(work, 'state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      RECONCILE_NOTIFY_SECRET: 'interrupted-notify-secret',
    },
  );
const authPatches = (since: number) => emulator.requests().filter((r) => r.seq > since && r.method === 'PATCH' && r.route === AUTH_ROUTE);
const lastSeq = () => emulator.requests().at(-1)?.seq ?? 0;
const events = () => receiver.received.map((request) => (JSON.parse(request.body) as { event: NotificationEvent }).event);

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveTick) => setTimeout(resolveTick, 20));
  }
}

describe('a daemon stopped during a re-check of a failing change (built command)', () => {
  it('reports no failure for the shutdown, counts none, and the next daemon retries the change', async () => {
    emulator.setFaults({ rules: [FAILING] });
    daemon = start();
    const metricsUrl = await daemon.metricsUrl();
    // The first pass fails for real (500 after the client's retries): that is reported.
    await daemon.waitFor((l) => l.msg === 'pass finished with errors' && l.priority === 'write');
    await until(() => events().some((event) => event.type === 'resource_failed'), 'the real failure to be delivered');
    const failedBefore = /^reconciler_apply_total\{kind="ProjectAuth",action="update",result="failed"\} (\d+)$/m.exec(await (await fetch(`${metricsUrl}/metrics`)).text())?.[1];

    // Each attempt of the re-check now takes 3 s: SIGTERM lands while the re-check is retrying.
    emulator.setFaults({ rules: [{ ...FAILING, latencyMs: 3_000 }] });
    const since = lastSeq();
    await until(() => authPatches(since).length > 0, "a re-check's attempt of the change");
    const failedNow = /^reconciler_apply_total\{kind="ProjectAuth",action="update",result="failed"\} (\d+)$/m.exec(await (await fetch(`${metricsUrl}/metrics`)).text())?.[1];
    const stopAt = daemon.lines.length;
    daemon.signal('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const afterStop = daemon.lines.slice(stopAt);

    // Interrupted, once, at info level; never "failed".
    const interrupted = afterStop.filter((l: LogLine) => l.msg === 'change interrupted');
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]).toMatchObject({ level: 'info', entry: 'ProjectAuth/shop/auth', result: 'interrupted' });
    expect(afterStop.filter((l) => l.msg === 'change failed' || l.msg === 'pass finished with errors')).toEqual([]);
    // Nothing about the stop reads as a problem.
    expect(afterStop.filter((l) => l.level === 'error' || l.level === 'warn' || l.level === 'fatal').map((l) => l.msg)).toEqual([]);
    // The pass's line (what the metrics count: reconciler_apply_total takes the outcomes' results) has no failure.
    expect(afterStop.find((l) => l.msg === 'pass interrupted')).toMatchObject({ level: 'info', priority: 'drift', failed: 0, interrupted: 1 });
    // The counter of failed changes did not move while the re-check retried.
    expect(failedNow).toBe(failedBefore);

    // No event whose reason is the shutdown; the one real failure was reported once.
    const first = events();
    expect(first.filter((event) => /stopped|shutting down|abort|interrupt/i.test(event.reason ?? ''))).toEqual([]);
    expect(first.filter((event) => event.type === 'resource_failed')).toHaveLength(1);
    expect(first.filter((event) => event.type === 'revision_applied').map((event) => event.result)).toEqual(['failed']);

    // The next daemon on the same state directory plans the change again and applies it.
    emulator.setFaults({});
    const restartedAt = lastSeq();
    daemon = start();
    const pass = await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    expect(pass).toMatchObject({ result: 'success', applied: 1 });
    expect(authPatches(restartedAt).map((r) => r.status)).toEqual([200]);
    expect(await daemon.stop()).toBe(0);
  });

  it("in process: the stop's interrupted change moves no failed counter", async () => {
    emulator.setFaults({ rules: [FAILING] });
    // Its own manifests: a site URL the live project does not have yet.
    const manifests = join(work, 'manifests-in-process');
    await mkdir(manifests);
    await writeFile(join(manifests, 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
    await writeFile(
      join(manifests, 'shop.yaml'),
      `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: acme\n  ref: ${SHOP_REF}\n  region: eu-west-1\n  auth:\n    site_url: https://in-process.shop.example\n`,
    );
    const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 }, retry: { maxAttempts: 1 } });
    const metrics = createMetrics(undefined, { processMetrics: false });
    const trigger = manualTrigger(60_000);
    const daemon = new Daemon({
      manifestsPath: manifests,
      loadManifests: (dir) => loadManifests(dir),
      runPass: (request) =>
        runPass({
          manifests: request.manifests,
          client,
          stateDir: join(work, 'state-in-process'),
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
      minSliceSpacingMs: 0,
    });
    try {
      await daemon.start();
      await daemon.settled();
      const failed = /^reconciler_apply_total\{kind="ProjectAuth",action="update",result="failed"\} (\d+)$/m;
      expect(failed.exec(await metrics.render())?.[1]).toBe('1');
      // The re-check's attempt hangs (no answer) until the stop aborts it.
      emulator.setFaults({ rules: [{ route: AUTH_ROUTE, method: 'PATCH', timeoutRate: 1 }] });
      const since = lastSeq();
      trigger.tick();
      await until(() => authPatches(since).length > 0, "the re-check's attempt");
      expect(await daemon.stop(5_000)).toBe(true);
      const text = await metrics.render();
      expect(failed.exec(text)?.[1]).toBe('1');
      expect(text).toMatch(/^reconciler_apply_total\{kind="ProjectAuth",action="update",result="interrupted"\} 1$/m);
      expect(text).toMatch(/^reconciler_reconcile_total\{result="interrupted"\} 1$/m);
    } finally {
      await daemon.stop(1_000);
      await client.close();
      emulator.setFaults({});
    }
  });
});
