// The state directory belongs to the manifests directory (built daemon, built command,
// emulator): a daemon and a dry run on the same checkout, neither naming a state directory and
// run from different working directories, share `DIR/.reconcile`; the dry run takes no writer
// lock and plans normally beside the running daemon, and their request windows merge in one file.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { converge, openFleetHarness, type FleetHarness } from '../../src/bench/harness.js';
import { assertBuilt, DaemonProcess } from '../daemon/daemon-process.js';
import { expectExit, runCli } from '../e2e/helpers/cli.js';

let harness: FleetHarness | undefined;
let daemon: DaemonProcess | undefined;
let elsewhere: string | undefined;

afterAll(async () => {
  await daemon?.stop();
  await harness?.close();
  if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
});

describe('a dry run beside a running daemon of the same checkout', () => {
  it('plans normally, takes no writer lock, and shares the state directory inside the manifests directory', async () => {
    assertBuilt();
    harness = await openFleetHarness({ shape: { projects: 2, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: { limit: 100_000, windowMs: 60_000 }, clientRate: { limit: 100_000, windowMs: 60_000 } });
    await converge(harness);
    const dir = harness.fleet.dir;
    const env = { MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_RATE_LIMIT: '1000/60s', ...harness.fleet.env };
    daemon = new DaemonProcess([dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--observe', 'none'], { ...env, RECONCILE_LOG_FORMAT: 'json' });
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    const stateDir = join(dir, '.reconcile');
    const lockBefore = JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8')) as { pid: number; id: string };
    expect(lockBefore.pid).toBe(daemon.pid);

    // From another working directory: the state directory follows the manifests directory, not the working directory.
    elsewhere = await mkdtemp(join(tmpdir(), 'reconcile-elsewhere-'));
    const dry = await runCli([dir, '--dry-run', '--detailed-exitcode'], env, elsewhere);
    expectExit(dry, 0);
    expect(dry.stdout).toContain('No changes. The live state matches the manifests.');
    expect(dry.stderr).not.toContain('locked by');
    // The daemon's lock is untouched, and it still holds it.
    const lockAfter = JSON.parse(await readFile(join(stateDir, 'state.lock'), 'utf8')) as { pid: number; id: string };
    expect(lockAfter.id).toBe(lockBefore.id);
    // Both clients' sends are in the one request window.
    // A part accounts for its sends as recorded send times or as a claim of places still open
    // (a claim's exact send times go with its writer's next claim).
    const window = JSON.parse(await readFile(join(stateDir, 'request-window.json'), 'utf8')) as { sends: number[]; writers: Record<string, { sends: number[]; claim?: { count: number } }> };
    const parts = Object.values(window.writers).filter((part) => part.sends.length > 0 || (part.claim?.count ?? 0) > 0);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(window.sends.length).toBe(parts.reduce((sum, part) => sum + part.sends.length, 0));
    // Nothing was written to the checkout outside its state directory, and the daemon keeps running.
    const { stdout: status } = await runCli(['status', dir], {}, elsewhere);
    expect(status).toContain('2 projects: 2 in sync');
    expect(daemon.lines.some((l) => (l.level ?? 0) >= 50)).toBe(false);
  }, 180_000);
});
