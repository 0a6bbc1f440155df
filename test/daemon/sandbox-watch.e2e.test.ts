// `reconcile examples --watch --sandbox`: the daemon against the emulator in its own process,
// as the quick start runs it. Ready once the examples are loaded and the API answered.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonProcess, REPO, assertBuilt } from './daemon-process.js';

let daemon: DaemonProcess | undefined;
let stateDir: string | undefined;

afterAll(async () => {
  await daemon?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('reconcile --watch --sandbox (built command)', () => {
  it('applies the examples against the in-process emulator, serves its endpoints, and stops on SIGINT with 0', async () => {
    assertBuilt();
    stateDir = await mkdtemp(join(tmpdir(), 'reconciler-sandbox-watch-'));
    daemon = new DaemonProcess([join(REPO, 'examples'), '--watch', '--sandbox', '--metrics-addr', '127.0.0.1:0', '--state-dir', stateDir], {});
    const url = await daemon.metricsUrl();
    const pass = await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'));
    expect(pass).toMatchObject({ priority: 'write', projects: 'all', dryRun: false });
    expect(pass.requests).toEqual(expect.any(Number));
    const ready = await fetch(`${url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    // The examples live in this repository's checkout: their revision is its HEAD.
    if (existsSync(join(REPO, '.git'))) expect(metrics).toMatch(/^reconciler_source_info\{revision="[0-9a-f]{40}"\} 1$/m);
    expect(metrics).toMatch(/^reconciler_api_requests_total\{method="POST",route="\/v1\/projects",code="201"\} 5$/m);
    daemon.signal('SIGINT');
    expect(await daemon.exited).toBe(0);
    expect(daemon.lines.at(-1)?.msg).toBe('stopped');
  });
});
