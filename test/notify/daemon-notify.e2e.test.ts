// Notifications of the built daemon (`reconcile --watch --notify URL`) against the emulator over
// HTTP, to a local signed-webhook receiver: a writing daemon says when a change was blocked, and
// what it sent is remembered in the state directory, so restarts do not send it again.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import type { NotificationEvent } from '../../src/notify/events.js';
import { DaemonProcess, assertBuilt } from '../daemon/daemon-process.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const SHOP_REF = 'shopshopshopshopshop';
const BLOG_REF = 'blogblogblogblogblog';

let emulator: RunningEmulator;
let work: string;
const receivers: TestReceiver[] = [];
let daemon: DaemonProcess | undefined;

const project = (name: string, ref: string, region: string, config = '') =>
  `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: acme\n  ref: ${ref}\n  region: ${region}\n${config}`;

beforeAll(async () => {
  assertBuilt();
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
  // Every auth update fails (only blog has one).
  emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/config/auth', method: 'PATCH', errorRate: 1, errorStatus: 500 }] });
  work = await mkdtemp(join(tmpdir(), 'reconciler-daemon-notify-e2e-'));
  await mkdir(join(work, 'manifests'));
  await writeFile(join(work, 'manifests', 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
  // shop asks for another region: an identity change the reconciler blocks.
  await writeFile(join(work, 'manifests', 'shop.yaml'), project('shop', SHOP_REF, 'us-east-1'));
  await writeFile(join(work, 'manifests', 'blog.yaml'), project('blog', BLOG_REF, 'eu-west-1', '  auth:\n    site_url: https://blog.example\n'));
});

afterAll(async () => {
  await daemon?.stop();
  for (const receiver of receivers) await receiver.close();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function start(receiver: TestReceiver, stateDir: string): DaemonProcess {
  return new DaemonProcess(
    [join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--notify', `${receiver.url}/hook`],
    {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: stateDir,
      RECONCILE_RATE_LIMIT: '1000/1s',
      RECONCILE_NOTIFY_SECRET: 'daemon-notify-secret-3c9d',
      RECONCILE_LOG_LEVEL: 'debug',
    },
  );
}

const eventsOf = (receiver: TestReceiver) => receiver.received.map((request) => (JSON.parse(request.body) as { event: NotificationEvent }).event);

/** Runs a daemon until its first pass's notifications are delivered (or deduplicated), then stops it. */
async function runOnce(receiver: TestReceiver, stateDir: string): Promise<void> {
  daemon = start(receiver, stateDir);
  await daemon.waitFor((l) => l.msg === 'pass finished with errors' && l.priority === 'write');
  const published = await daemon.waitFor((l) => l.msg === 'notifications published');
  const fresh = (published.events as number) - (published.deduplicated as number);
  const delivered = () => daemon!.lines.filter((l) => l.msg === 'notification sent' || l.msg === 'notification failed').length;
  await daemon.waitFor(() => delivered() >= fresh);
  expect(await daemon.stop()).toBe(0);
}

describe('notifications of the built daemon', () => {
  it('a writing daemon sends change_blocked for a blocked identity change', async () => {
    const receiver = await startReceiver('ok');
    receivers.push(receiver);
    daemon = start(receiver, join(work, 'state-blocked'));
    await daemon.waitFor((l) => l.msg === 'pass finished with errors' && l.priority === 'write');
    // revision_applied, resource_failed (blog) and change_blocked (shop), in that order.
    const deadline = Date.now() + 30_000;
    while (receiver.received.length < 3) {
      if (Date.now() > deadline) throw new Error(`only ${receiver.received.length} events: ${JSON.stringify(eventsOf(receiver).map((e) => e.type))}`);
      await new Promise((resolveTick) => setTimeout(resolveTick, 20));
    }
    expect(await daemon.stop()).toBe(0);
    const events = eventsOf(receiver);
    expect(events.find((event) => event.type === 'change_blocked')).toMatchObject({
      resource: 'Project/shop',
      dryRun: false,
      reason: 'the region of an existing project cannot change',
    });
    expect(events.find((event) => event.type === 'revision_applied')).toMatchObject({ result: 'failed', counts: { blocked: 1, failed: 1 } });
  });

  it('sends one notification per failure and revision across three daemon restarts', async () => {
    const receiver = await startReceiver('ok');
    receivers.push(receiver);
    const stateDir = join(work, 'state-restarts');
    for (let run = 0; run < 4; run++) await runOnce(receiver, stateDir);
    const summary = eventsOf(receiver).map((event) => [event.type, event.resource ?? event.result]);
    expect(summary.sort()).toEqual([
      ['change_blocked', 'Project/shop'],
      ['resource_failed', 'ProjectAuth/blog/auth'],
      ['revision_applied', 'failed'],
    ]);
    // The record holds digests and times only: no resource name, reason or URL.
    const record = await readFile(join(stateDir, 'notifications.json'), 'utf8');
    expect(JSON.parse(record)).toMatchObject({ version: 1 });
    expect(record).not.toMatch(/shop|blog|region|127\.0\.0\.1/);
  });
});
