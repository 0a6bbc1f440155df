// The built daemon's on-demand doors under a burst, against the emulator over HTTP: twenty
// authenticated `POST /reconcile` requests start at most two passes and every answer names its
// pass; a captured signed generic webhook replayed twenty times starts none, and one signed too
// long ago is refused.
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { DaemonProcess, assertBuilt, type LogLine } from '../daemon/daemon-process.js';

const TOKEN = 'on-demand-e2e-token-41d7';
const SECRET = 'on-demand-e2e-webhook-secret-92ac';
const SHOP_REF = 'shopshopshopshopshop';

let emulator: RunningEmulator;
let work: string;
let daemon: DaemonProcess | undefined;
let url: string;

const manualPasses = (lines: LogLine[]) => lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished') && l.trigger === 'manual');

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: { organizations: [{ slug: 'acme', name: 'acme' }], projects: [{ ref: SHOP_REF, name: 'shop', organization: 'acme', region: 'eu-west-1' }] },
  });
  work = await mkdtemp(join(tmpdir(), 'reconciler-on-demand-e2e-'));
  await mkdir(join(work, 'manifests'));
  await writeFile(join(work, 'manifests', 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
  await writeFile(
    join(work, 'manifests', 'shop.yaml'),
    `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: acme\n  ref: ${SHOP_REF}\n  region: eu-west-1\n  restapi:\n    max_rows: 500\n`,
  );
  await writeFile(join(work, 'token'), `${TOKEN}\n`);
  await writeFile(join(work, 'secret'), `${SECRET}\n`);
  daemon = new DaemonProcess(
    // No rate limit between passes here (--trigger-interval 0s): this test is about concurrent
    // requests and replays; test/e2e/trigger-interval.e2e.test.ts covers the interval.
    [join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--trigger-interval', '0s', '--trigger-token-file', join(work, 'token'), '--webhook-secret-file', join(work, 'secret')],
    { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(work, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' },
  );
  url = await daemon.metricsUrl();
  await daemon.waitFor((l) => l.msg === 'pass finished' && l.trigger === 'revision');
  // Every pass now takes at least 2 s (its project list answers late): a burst meets a running pass.
  emulator.setFaults({ rules: [{ route: '/v1/projects', method: 'GET', latencyMs: 2_000 }] });
});

afterAll(async () => {
  await daemon?.stop();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('on-demand doors of the built daemon', () => {
  it('twenty authenticated POST /reconcile requests start at most two passes, and each answer names its pass', async () => {
    const from = daemon!.lines.length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const response = await fetch(`${url}/reconcile`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"projects":["shop"]}' });
        return { status: response.status, body: (await response.json()) as { status: string; pass: number; queued: boolean; joined: boolean } };
      }),
    );
    expect(answers.every((answer) => answer.status === 202 && answer.body.status === 'started')).toBe(true);
    const passes = [...new Set(answers.map((answer) => answer.body.pass))].sort((a, b) => a - b);
    expect(passes.length).toBeLessThanOrEqual(2);
    expect(answers.filter((answer) => !answer.body.joined)).toHaveLength(passes.length);
    // The passes named ran; then nothing else comes from the burst.
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= passes.length);
    const after = await fetch(`${url}/reconcile`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"projects":["shop"]}' });
    const next = ((await after.json()) as { pass: number }).pass;
    expect(next).toBe(passes.at(-1)! + 1);
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= passes.length + 1);
    expect(manualPasses(daemon!.lines.slice(from))).toHaveLength(passes.length + 1);
  });

  it('a replayed signed generic webhook starts no pass; an old timestamp is refused', async () => {
    const body = JSON.stringify({ projects: ['shop'] });
    const signed = (at: number) => {
      const timestamp = String(Math.floor(at / 1000));
      return { 'content-type': 'application/json', 'x-reconciler-timestamp': timestamp, 'x-reconciler-signature-256': `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}` };
    };
    const headers = signed(Date.now());
    const from = daemon!.lines.length;
    const first = await fetch(`${url}/reconcile/webhook`, { method: 'POST', headers, body });
    expect([first.status, ((await first.json()) as { status: string }).status]).toEqual([202, 'started']);
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length === 1);
    const replays: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      const replay = await fetch(`${url}/reconcile/webhook`, { method: 'POST', headers, body });
      replays.push([replay.status, ((await replay.json()) as { status: string }).status]);
    }
    expect(replays).toEqual(Array.from({ length: 20 }, () => [200, 'duplicate']));
    const old = await fetch(`${url}/reconcile/webhook`, { method: 'POST', headers: signed(Date.now() - 10 * 60_000), body });
    expect(old.status).toBe(403);
    // A marker pass after them: had a replay started one, it would have come first.
    const marker = await fetch(`${url}/reconcile`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"projects":["shop"]}' });
    const pass = ((await marker.json()) as { pass: number; joined: boolean; queued: boolean });
    expect(pass).toMatchObject({ joined: false, queued: false });
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= 2);
    expect(manualPasses(daemon!.lines.slice(from))).toHaveLength(2);
    expect(daemon!.lines.filter((l) => l.msg === 'webhook replayed: a delivery already received; nothing runs')).toHaveLength(20);
    expect(daemon!.stdout).not.toContain(SECRET);
    expect(daemon!.stdout).not.toContain(TOKEN);
  });
});
