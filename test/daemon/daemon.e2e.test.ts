// The built daemon against an emulator started here, watching a real git repository published
// git-sync style: a revision is applied once, a broken revision applies nothing, SIGTERM in the
// middle of a pass exits cleanly and the next start converges.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { DaemonProcess, assertBuilt, type LogLine } from './daemon-process.js';
import { GitSyncRepo } from './git-repo.js';

const CANARY_DB = 'canary-daemon-db-7c1e04b9';

const organization = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec: {}
`;

function project(name: string, maxRows: number, siteUrl?: string): string {
  const auth = siteUrl ? `  auth:\n    site_url: ${siteUrl}\n` : '';
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
spec:
  organization: acme
  region: eu-west-1
  db_pass:
    valueFrom:
      env: DAEMON_DB_PASS
  restapi:
    max_rows: ${maxRows}
${auth}`;
}

let emulator: RunningEmulator;
let api: ApiClient;
let git: GitSyncRepo;
let stateDir: string;
let env: NodeJS.ProcessEnv;
let daemon: DaemonProcess | undefined;
const commits: string[] = [];

const args = () => [git.link, '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *'];
const writes = (since: number) =>
  emulator
    .requests()
    .slice(since)
    .filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
const isPass = (line: LogLine) => line.msg === 'pass finished' || line.msg === 'pass finished with errors';

async function maxRows(name: string): Promise<number | undefined> {
  const ref = (await api.api.listAllProjects()).find((p) => p.name === name)?.ref;
  if (!ref) return undefined;
  return (await api.api.getRestapiServiceConfig(ref)).max_rows;
}

async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  git = await GitSyncRepo.create();
  stateDir = await mkdtemp(join(tmpdir(), 'reconciler-daemon-state-'));
  env = {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    DAEMON_DB_PASS: CANARY_DB,
  };
  commits.push(await git.commit({ 'organization.yaml': organization, 'blog.yaml': project('blog', 500), 'shop.yaml': project('shop', 500) }, 'first'));
  await git.publish(commits[0]!);
});

afterAll(async () => {
  await daemon?.stop();
  await api?.close();
  await emulator?.close();
  await git?.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('reconcile --watch (built command, real git, emulator)', () => {
  it('applies the first revision, then a git-sync link swap to a new commit exactly once', async () => {
    daemon = new DaemonProcess(args(), env);
    const metricsUrl = await daemon.metricsUrl();
    const first = await daemon.waitFor(isPass);
    expect(first).toMatchObject({ priority: 'write', projects: 'all', revision: commits[0], result: 'success' });
    expect(await maxRows('blog')).toBe(500);
    expect(await scrape(metricsUrl)).toContain(`reconciler_source_info{revision="${commits[0]}"} 1`);

    commits.push(await git.commit({ 'blog.yaml': project('blog', 700) }, 'blog: more rows'));
    const from = daemon.lines.length;
    const since = emulator.requests().length;
    await git.publish(commits[1]!, commits[0]);

    const applied = await daemon.waitFor((l) => isPass(l) && l.revision === commits[1], { from });
    expect(applied).toMatchObject({ priority: 'write', projects: ['blog'], result: 'success' });
    // Then the rest is re-checked in the background, at drift priority.
    const recheck = await daemon.waitFor((l) => isPass(l) && l.priority === 'drift', { from });
    expect(recheck).toMatchObject({ projects: ['shop'], result: 'success' });

    expect(await maxRows('blog')).toBe(700);
    expect(writes(since).map((r) => `${r.method} ${r.route}`)).toEqual(['PATCH /v1/projects/{ref}/restapi']);
    expect(daemon.lines.slice(from).filter((l) => isPass(l) && l.priority === 'write')).toHaveLength(1);
    const metrics = await scrape(metricsUrl);
    expect(metrics).toContain(`reconciler_source_info{revision="${commits[1]}"} 1`);
    expect(metrics).not.toContain(`revision="${commits[0]}"`);
    expect((await fetch(`${metricsUrl}/readyz`)).status).toBe(200);
  });

  it('a broken commit applies nothing, sets reconciler_manifest_errors and keeps the previous state', async () => {
    const metricsUrl = await daemon!.metricsUrl();
    // The broken revision also changes shop: nothing of it may be applied.
    commits.push(await git.commit({ 'blog.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata: [unclosed\n', 'shop.yaml': project('shop', 900) }, 'broken'));
    const from = daemon!.lines.length;
    const since = emulator.requests().length;
    await git.publish(commits[2]!, commits[1]);

    const located = await daemon!.waitFor((l) => l.msg === 'manifest error', { from });
    expect(located).toMatchObject({ file: 'blog.yaml', revision: commits[2] });
    expect(located.line).toEqual(expect.any(Number));
    await daemon!.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('the revision has manifest errors'), { from });

    const metrics = await scrape(metricsUrl);
    expect(Number(/^reconciler_manifest_errors (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    expect(metrics).toContain(`reconciler_source_info{revision="${commits[1]}"} 1`);
    expect(metrics).toMatch(/^reconciler_reconcile_total\{result="invalid"\} 1$/m);
    expect(writes(since)).toEqual([]);
    expect(daemon!.lines.slice(from).filter(isPass)).toEqual([]);
    expect(await maxRows('shop')).toBe(500);
    expect(await maxRows('blog')).toBe(700);
  });

  it('SIGTERM in the middle of a pass exits 0 cleanly, and the next start converges', async () => {
    // shop's auth write hangs for a while; blog's restapi write is quick. Once blog's change is
    // applied the pass is in the middle of its apply, with shop's change still to come.
    emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/config/auth', method: 'PATCH', latencyMs: 4_000 }] });
    commits.push(await git.commit({ 'blog.yaml': project('blog', 800), 'shop.yaml': project('shop', 500, 'https://shop.example') }, 'both'));
    const from = daemon!.lines.length;
    await git.publish(commits[3]!, commits[2]);
    await daemon!.waitFor((l) => l.msg === 'change applied' && String(l.entry ?? l.id).includes('blog'), { from });
    daemon!.signal('SIGTERM');
    const code = await daemon!.exited;
    expect(code).toBe(0);
    const during = daemon!.lines.slice(from);
    expect(during.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    // The signal came before the pass could finish shop's change.
    const shutdownAt = during.findIndex((l) => l.msg === 'shutting down');
    expect(during.slice(0, shutdownAt).some((l) => l.msg === 'change applied' && String(l.entry ?? l.id).includes('shop'))).toBe(false);
    expect(daemon!.stdout + daemon!.stderr).not.toContain(CANARY_DB);
    expect(daemon!.stdout + daemon!.stderr).not.toContain(emulator.token);

    emulator.setFaults({ rules: [] });
    daemon = new DaemonProcess(args(), env);
    const converged = await daemon.waitFor(isPass);
    expect(converged).toMatchObject({ priority: 'write', projects: 'all', revision: commits[3], result: 'success' });
    expect(await maxRows('blog')).toBe(800);
    expect(await maxRows('shop')).toBe(500);
    const shopRef = (await api.api.listAllProjects()).find((p) => p.name === 'shop')!.ref;
    expect((await api.api.getAuthServiceConfig(shopRef)).site_url).toBe('https://shop.example');
    // Nothing was created twice across the interrupted pass and the restart.
    const projects = (await api.api.listAllProjects()).map((p) => p.name).sort();
    expect(projects).toEqual(['blog', 'shop']);
    expect(await daemon.stop()).toBe(0);
    expect(daemon.stdout + daemon.stderr).not.toContain(CANARY_DB);
  });
});
