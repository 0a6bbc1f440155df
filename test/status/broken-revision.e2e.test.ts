// The status is the truth (built daemon, emulator): a commit with a manifest error turns
// `GET /status`, the page, `reconcile status` and `reconciler_revision_broken` to "broken
// revision", naming the file and the line, with the last good revision still named and
// applied; readiness stays about the daemon; the fix turns them back.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { converge, openFleetHarness, type FleetHarness } from '../../src/bench/harness.js';
import type { FleetView } from '../../src/status/fleet-view.js';
import { assertBuilt, DaemonProcess } from '../daemon/daemon-process.js';
import { runCli } from '../e2e/helpers/cli.js';

let harness: FleetHarness | undefined;
let daemon: DaemonProcess | undefined;
let work: string | undefined;

afterAll(async () => {
  await daemon?.stop();
  await harness?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Commits the checkout's working tree (the daemon names revisions by their commit). */
function commit(dir: string, message: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=ops@example.com', '-c', 'user.name=ops', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  if (message === 'init') git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', message);
  return git('rev-parse', 'HEAD');
}

/** Polls (the daemon reads the checkout after its debounce) until `check` holds or the deadline passes. */
async function until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(value).slice(0, 2000)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

describe('a broken revision, everywhere the status is shown (built daemon, emulator)', () => {
  it('turns status, page, reconcile status and the gauge to a broken revision naming file and line, and back when fixed', async () => {
    assertBuilt();
    harness = await openFleetHarness({ shape: { projects: 2, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: { limit: 100_000, windowMs: 60_000 }, clientRate: { limit: 100_000, windowMs: 60_000 } });
    await converge(harness);
    const goodRevision = commit(harness.fleet.dir, 'init');
    work = await mkdtemp(join(tmpdir(), 'reconcile-broken-'));
    const stateDir = join(work, 'state');
    const env = { MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env };
    daemon = new DaemonProcess([harness.fleet.dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--state-dir', stateDir, '--resync', '0 0 1 1 *', '--observe', 'none', '--rate-limit', '1000/1s'], env);
    const url = await daemon.metricsUrl();
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    const status = async () => (await (await fetch(`${url}/status`)).json()) as FleetView;
    const good = await status();
    expect(good.condition.state).toBe('in_sync');
    expect(good.revision).toBe(goodRevision);

    // A typo in one project's auth section.
    const file = join(harness.fleet.dir, 'projects', `${harness.fleet.projectNames[0]}.yaml`);
    const original = await readFile(file, 'utf8');
    const line = original.split('\n').findIndex((l) => l.includes('jwt_exp:')) + 1;
    expect(line).toBeGreaterThan(0);
    await writeFile(file, original.replace('jwt_exp:', 'jwt_expiry:'));
    const brokenRevision = commit(harness.fleet.dir, 'a typo');

    const broken = await until('the status says broken revision', status, (view) => view.condition.state === 'broken-revision');
    expect(broken.brokenRevision).toMatchObject({ revision: brokenRevision, errorCount: 1, lastGoodRevision: goodRevision });
    expect(broken.brokenRevision!.errors[0]).toMatchObject({ file: `projects/${harness.fleet.projectNames[0]}.yaml`, line });
    expect(broken.brokenRevision!.errors[0]!.field).toContain('jwt_expiry');
    expect(broken.condition.message).toContain(`projects/${harness.fleet.projectNames[0]}.yaml:${line}`);
    expect(broken.condition.message).toContain(`revision ${goodRevision.slice(0, 12)} stays applied`);
    // The last good revision is still the one applied and named.
    expect(broken.revision).toBe(goodRevision);
    expect(broken.projects.every((project) => project.revision === goodRevision)).toBe(true);

    const page = await (await fetch(`${url}/`)).text();
    expect(page).toContain('<title>Fleet status: broken revision');
    expect(page).toContain('id="broken"');
    expect(page).toContain(`<th scope="row">projects/${harness.fleet.projectNames[0]}.yaml</th><td>${line}:`);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^reconciler_revision_broken 1$/m);
    expect(metrics).toMatch(/^reconciler_manifest_errors 1$/m);
    // Readiness is about the daemon, not the manifests.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const cli = await runCli(['status', '--daemon-url', url], {});
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('Condition: BROKEN REVISION: broken revision');
    expect(cli.stdout).toContain(`  projects/${harness.fleet.projectNames[0]}.yaml:${line}`);
    // Recorded in the state directory as well: `reconcile status` without the daemon says the same.
    const fromDir = await until('the state directory records it', () => runCli(['status', '--state-dir', stateDir], {}), (run) => run.stdout.includes('BROKEN REVISION'));
    expect(fromDir.stdout).toContain(`projects/${harness.fleet.projectNames[0]}.yaml:${line}`);

    // The fix: back to the last good content.
    await writeFile(file, original);
    const fixedRevision = commit(harness.fleet.dir, 'the fix');
    const fixed = await until('the status is no longer broken', status, (view) => view.condition.state !== 'broken-revision');
    expect(fixed.brokenRevision).toBeUndefined();
    expect(fixed.condition.state).toBe('in_sync');
    await until('the fix is applied', status, (view) => view.revision === fixedRevision);
    expect(await (await fetch(`${url}/`)).text()).not.toContain('id="broken"');
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^reconciler_revision_broken 0$/m);
    for (const secret of Object.values(harness.fleet.env)) expect(daemon.stdout + daemon.stderr + JSON.stringify(broken) + page + cli.stdout).not.toContain(secret);
  }, 180_000);
});
