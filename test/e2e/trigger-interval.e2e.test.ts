// On-demand passes are bounded in rate, not only in concurrency (the built daemon against the
// emulator): twenty authenticated `POST /reconcile` requests sent one after another, each a few
// milliseconds apart and each answered before the next, run at most two passes; the others are
// answered with the pass that finished (its number and result), start nothing, and say when the
// next pass may start (`--trigger-interval`, default 30 s). `reconcile trigger` prints that answer.
// A new revision lifts it: the next request starts a pass at once.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { DaemonProcess, assertBuilt, type LogLine } from '../daemon/daemon-process.js';
import { expectExit, runCli } from './helpers/cli.js';

const TOKEN = 'trigger-interval-e2e-token-0b3e';
const SHOP_REF = 'shopshopshopshopshop';

let emulator: RunningEmulator;
let work: string;
let daemon: DaemonProcess | undefined;
let url: string;

const manualPasses = (lines: LogLine[]) => lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished') && l.trigger === 'manual');
const project = (maxRows: number) =>
  `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: acme\n  ref: ${SHOP_REF}\n  region: eu-west-1\n  restapi:\n    max_rows: ${maxRows}\n`;

interface Answer {
  status: string;
  pass?: number;
  result?: string;
  finishedAt?: string;
  nextPassAt?: string;
}

async function post(): Promise<{ status: number; retryAfter: string | null; body: Answer }> {
  const response = await fetch(`${url}/reconcile`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"projects":["shop"]}' });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Answer };
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: { organizations: [{ slug: 'acme', name: 'acme' }], projects: [{ ref: SHOP_REF, name: 'shop', organization: 'acme', region: 'eu-west-1' }] },
  });
  work = await mkdtemp(join(tmpdir(), 'reconciler-trigger-interval-e2e-'));
  await mkdir(join(work, 'manifests'));
  await writeFile(join(work, 'manifests', 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
  await writeFile(join(work, 'manifests', 'shop.yaml'), project(500));
  await writeFile(join(work, 'token'), `${TOKEN}\n`);
  // The default interval (30 s): no --trigger-interval.
  daemon = new DaemonProcess(
    [join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--observe', 'none', '--trigger-token-file', join(work, 'token')],
    { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(work, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' },
  );
  url = await daemon.metricsUrl();
  await daemon.waitFor((l) => l.msg === 'pass finished' && l.trigger === 'revision');
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the rate of on-demand passes', () => {
  it('twenty requests one after another run at most two passes; the rest are answered with the pass that finished', async () => {
    const from = daemon!.lines.length;
    const since = emulator.requests().length;
    const answers: Array<Awaited<ReturnType<typeof post>>> = [];
    for (let i = 0; i < 20; i++) {
      answers.push(await post());
      // A few milliseconds apart; a pass over one project can end in between.
      if (answers.at(-1)!.body.status === 'started') await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= 1);
      await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    }
    const started = answers.filter((answer) => answer.body.status === 'started');
    const recent = answers.filter((answer) => answer.body.status === 'recent');
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(started.length).toBeLessThanOrEqual(2);
    expect(started.length + recent.length).toBe(20);
    const passes = [...new Set(started.map((answer) => answer.body.pass))];
    for (const answer of recent) {
      expect(answer.status).toBe(200);
      expect(passes).toContain(answer.body.pass);
      expect(answer.body.result).toBe('success');
      const next = Date.parse(answer.body.nextPassAt!);
      expect(next - Date.parse(answer.body.finishedAt!)).toBe(30_000);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(30);
    }
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= passes.length);
    expect(manualPasses(daemon!.lines.slice(from))).toHaveLength(passes.length);
    // A no-change pass over one project is a handful of reads: two at most, not twenty.
    expect(emulator.requests().length - since).toBeLessThanOrEqual(passes.length * 10);
  }, 120_000);

  it('`reconcile trigger` prints the pass that answered and when the next may start', async () => {
    // A pass of this revision finished just now (started here if the last one is older than the interval).
    const from = daemon!.lines.length;
    if ((await post()).body.status === 'started') await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= 1);
    const run = await runCli(['trigger', '--project', 'shop', '--daemon-url', url], { RECONCILE_TRIGGER_TOKEN_FILE: join(work, 'token') });
    expectExit(run, 0);
    expect(run.stdout).toMatch(/^pass \d+ covered shop and finished at \S+ \(success\), with no new revision since: no pass started; the next may start at \S+Z$/m);
  }, 60_000);

  it('a new revision lifts the interval: the next request starts a pass', async () => {
    const from = daemon!.lines.length;
    await writeFile(join(work, 'manifests', 'shop.yaml'), project(700));
    await daemon!.waitFor((l) => l.msg === 'pass finished' && l.trigger === 'revision', { from });
    const answer = await post();
    expect(answer).toMatchObject({ status: 202, body: { status: 'started' } });
    await daemon!.waitFor(() => manualPasses(daemon!.lines.slice(from)).length >= 1);
  }, 120_000);
});
