// `--observe` through the built command, as a user runs it: a bad list is refused up front with
// the exact message (flag or RECONCILE_OBSERVE), and `--watch --dry-run --observe all` exports
// the observed-only facts from its scheduled re-check while writing nothing.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, DaemonProcess, NODE, REPO, assertBuilt } from './daemon-process.js';

const REF = 'bansbansbansbansbans';
const BANNED = ['192.0.2.44', '203.0.113.200', '198.51.100.3'];

function run(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(NODE, [BIN, ...args], { cwd: REPO, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('--observe (built command): validation', () => {
  beforeAll(() => assertBuilt());

  it('refuses an unknown item before doing anything, naming the option and the item', () => {
    const result = run(['examples', '--watch', '--sandbox', '--metrics-addr', '127.0.0.1:0', '--observe', 'health,bogus']);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      'reconcile: Expected --observe to be a comma-separated list of health, bans, api_keys, backups, readonly, upgrade (or `all`, or `none`), got `health,bogus`: unknown item `bogus`',
    );
    expect(result.stdout).toBe('');
  });

  it('validates RECONCILE_OBSERVE the same way', () => {
    const result = run(['examples', '--watch', '--sandbox', '--metrics-addr', '127.0.0.1:0'], { RECONCILE_OBSERVE: 'all,none' });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      'reconcile: Expected --observe to be a comma-separated list of health, bans, api_keys, backups, readonly, upgrade (or `all`, or `none`), got `all,none`: `all` and `none` cannot be combined with other items',
    );
  });
});

describe('--watch --dry-run --observe all (built command)', () => {
  let emulator: RunningEmulator;
  let work: string;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    assertBuilt();
    emulator = await startEmulator({
      port: 0,
      rateLimit: { limit: 100_000, windowMs: 60_000 },
      seed: {
        organizations: [{ slug: 'acme', name: 'acme' }],
        projects: [{ ref: REF, name: 'edge', organization: 'acme', region: 'eu-west-1', pitr_enabled: true, config: { network_bans: BANNED } }],
      },
    });
    work = await mkdtemp(join(tmpdir(), 'reconciler-observe-cmd-'));
    await writeFile(join(work, 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
    await writeFile(join(work, 'edge.yaml'), `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: edge\nspec:\n  organization: acme\n  ref: ${REF}\n  region: eu-west-1\n`);
  });

  afterAll(async () => {
    await daemon?.stop();
    await emulator?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('exports the facts of its scheduled re-check and writes nothing', async () => {
    // A re-check every second: the test waits for the first one, not for a fixed time.
    daemon = new DaemonProcess([work, '--watch', '--dry-run', '--observe', 'all', '--resync', '* * * * * *', '--metrics-addr', '127.0.0.1:0'], {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(work, '.state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
    });
    const url = await daemon.metricsUrl();
    const started = await daemon.waitFor((l) => l.msg === 'daemon started');
    expect(started.observe).toEqual(['health', 'networkBans', 'apiKeys', 'backups', 'readOnly', 'upgrade']);
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'drift');
    // The observed-only reads follow the re-check's pass: poll until their series arrive.
    let metrics = '';
    for (let attempt = 0; !/^reconciler_observed_upgrade_failed\{/m.test(metrics); attempt++) {
      if (attempt > 300) throw new Error(`no observed-only facts on /metrics after the re-check\n${daemon.stdout.slice(-4000)}`);
      if (attempt > 0) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      metrics = await (await fetch(`${url}/metrics`)).text();
    }
    expect(metrics).toMatch(/^reconciler_observed_network_bans\{project="edge"\} 3$/m);
    expect(metrics).toMatch(/^reconciler_observed_api_keys\{project="edge",type="secret"\} 1$/m);
    expect(metrics).toMatch(/^reconciler_observed_pitr_enabled\{project="edge"\} 1$/m);
    expect(metrics).toMatch(/^reconciler_observed_readonly\{project="edge"\} 0$/m);
    expect(metrics).toMatch(/^reconciler_observed_upgrade_in_progress\{project="edge"\} 0$/m);
    expect(metrics).toMatch(/^reconciler_api_requests_total\{method="POST",route="\/v1\/projects\/\{ref\}\/network-bans\/retrieve",code="201"\} \d+$/m);
    for (const address of BANNED) expect(metrics).not.toContain(address);
    expect(metrics).not.toContain(REF);
    expect(await daemon.stop()).toBe(0);
    // A dry run: the bans read is the only request that is not a GET, and it changes nothing.
    const sent = emulator.requests().filter((r) => !r.path.startsWith('/_emulator'));
    expect(new Set(sent.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.route}`))).toEqual(new Set(['POST /v1/projects/{ref}/network-bans/retrieve']));
    expect(daemon.stdout + daemon.stderr).not.toContain(emulator.token);
  }, 90_000);
});
