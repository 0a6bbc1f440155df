// /readyz through the built daemon: not ready while the API rejects the token, with the reason
// in JSON; /healthz alive all the same.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { DaemonProcess, REPO, assertBuilt } from './daemon-process.js';

let emulator: RunningEmulator;
let work: string;
let daemon: DaemonProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  work = await mkdtemp(join(tmpdir(), 'reconciler-readyz-'));
  await cp(join(REPO, 'test/fixtures/reconcile-e2e'), join(work, 'manifests'), { recursive: true });
});

afterAll(async () => {
  await daemon?.stop();
  await emulator?.close();
  await rm(work, { recursive: true, force: true });
});

describe('/readyz (built daemon)', () => {
  it('answers 503 with the reason while the API rejects the token, and never echoes the token', async () => {
    const wrongToken = 'sbp_wrong_token_0123456789abcdef0123456789abcdef';
    daemon = new DaemonProcess([join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0'], {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: wrongToken,
      RECONCILE_STATE_DIR: join(work, 'state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      E2E_DB_PASS: 'x',
      E2E_SMTP_PASS: 'y',
    });
    const url = await daemon.metricsUrl();
    await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'));
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { status: string; reasons: string[] };
    expect(body.status).toBe('not ready');
    expect(body.reasons.join(' ')).toMatch(/rejected the token \(401\)/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^reconciler_api_requests_total\{method="GET",route="\/v1\/projects",code="401"\} \d+$/m);
    // The daemon retries a failed pass after a backoff: by the time /metrics is read, a retry may have failed too.
    const failedPasses = Number(/^reconciler_reconcile_total\{result="failed"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(failedPasses).toBeGreaterThanOrEqual(1);
    expect(await daemon.stop()).toBe(0);
    expect(daemon.stdout + daemon.stderr + metrics).not.toContain(wrongToken);
  });
});
