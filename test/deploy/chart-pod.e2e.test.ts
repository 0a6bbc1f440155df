// The chart's pod, run for real without a cluster: the reconciler container's rendered
// arguments, environment, volume mounts and probes are applied to the built command, with each
// volume a directory, the token Secret a file, and the git volume laid out as git-sync
// publishes it (a worktree named by its commit and a `repo` link). It must become ready,
// apply the manifests to the API (the emulator), keep its state on the state volume, report
// the commit it used, and stop cleanly on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { findObject, renderObjects } from './render.js';
import { NODE24, REPO_ROOT, freePort, helmTool, toolGate } from './tools.js';

const gate = toolGate(helmTool());
const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');
const FIXTURE = join(import.meta.dirname, 'fixtures', 'fleet');
const COMMIT = '5e1f0c0ffee5e1f0c0ffee5e1f0c0ffee5e1f0c0';

describe.skipIf(gate.skip)('the chart pod, run without a cluster', () => {
  let emulator: RunningEmulator;
  let api: ApiClient;
  let work: string;
  let pod: IPodSpec;
  let reconciler: IContainer;
  let daemon: ChildProcess;
  let exit: Promise<number | null>;
  let port: number;
  let output = '';
  /** Container path -> host directory, one per volume mount. */
  const mounts: [string, string][] = [];

  const hostPath = (path: string) => {
    const mount = mounts.find(([inside]) => path === inside || path.startsWith(`${inside}/`));
    if (!mount) throw new Error(`${path} is on no volume: the container's root filesystem is read-only`);
    return mount[1] + path.slice(mount[0].length);
  };

  const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }), () => ({ status: 0, body: '' }));

  const until = async (what: string, probe: () => Promise<boolean>) => {
    for (let attempt = 0; attempt < 600; attempt++) {
      if (daemon.exitCode !== null) throw new Error(`the reconciler exited with ${daemon.exitCode} before ${what}:\n${output.slice(-3000)}`);
      if (await probe()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${what}: not reached after 600 polls\n${output.slice(-3000)}`);
  };

  beforeAll(async () => {
    const helm = gate.assertPresent();
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
    const objects = renderObjects(helm, {
      set: [
        `api.url=${emulator.url}`,
        'gitSync.subPath=manifests',
        'reconcile.rateLimit=1000/1s',
        'reconcile.resync=*/2 * * * * *',
        'extraEnv[0].name=MONITORING_DB_PASS',
        'extraEnv[0].value=chart-pod-db-pass',
      ],
    });
    pod = findObject<{ spec: { template: { spec: IPodSpec } } }>(objects, 'Deployment').spec.template.spec;
    reconciler = pod.containers.find((c) => c.name === 'reconciler')!;
    work = mkdtempSync(join(tmpdir(), 'reconciler-pod-'));

    // Volumes as directories, with what Kubernetes and git-sync would put in them.
    for (const mount of reconciler.volumeMounts!) {
      const dir = join(work, 'volumes', mount.name);
      mkdirSync(dir, { recursive: true });
      mounts.push([mount.mountPath, dir]);
      const volume = pod.volumes!.find((v) => v.name === mount.name)!;
      if (volume.secret) {
        // The Secret the NOTES tell the user to create, projected as the volume's items say.
        expect(volume.secret.secretName).toBe('reconciler-api-token');
        for (const item of volume.secret.items!) writeFileSync(join(dir, item.path), `${emulator.token}\n`);
      }
      if (mount.name === 'git') {
        cpSync(FIXTURE, join(dir, '.worktrees', COMMIT, 'manifests'), { recursive: true });
        symlinkSync(join('.worktrees', COMMIT), join(dir, 'repo'));
      }
    }
    mounts.sort((a, b) => b[0].length - a[0].length);

    port = await freePort();
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: '/nonexistent' };
    for (const variable of reconciler.env!) {
      if (variable.valueFrom) throw new Error(`${variable.name}: only plain values are expected in token mode`);
      env[variable.name] = variable.value!.startsWith('/') ? hostPath(variable.value!) : variable.value;
    }
    // Bind the rendered port on loopback only (the pod binds all interfaces of its own network).
    expect(env.RECONCILE_METRICS_ADDR).toBe(`0.0.0.0:${reconciler.ports![0]!.containerPort}`);
    env.RECONCILE_METRICS_ADDR = `127.0.0.1:${port}`;
    const args = reconciler.args!.map((arg) => (arg.startsWith('/') ? hostPath(arg) : arg));
    daemon = spawn(NODE24, [BIN, ...args], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    daemon.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    exit = new Promise((resolve) => daemon.once('exit', (code) => resolve(code)));
  }, 60_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGKILL');
      await exit;
    }
    await api?.close();
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('answers its startup and liveness probes, then its readiness probe', async () => {
    const startup = reconciler.startupProbe!.httpGet!;
    const liveness = reconciler.livenessProbe!.httpGet!;
    const readiness = reconciler.readinessProbe!.httpGet!;
    expect(reconciler.ports!.find((p) => p.name === startup.port)).toBeDefined();
    await until('startup probe', async () => (await get(startup.path!)).status === 200);
    expect((await get(liveness.path!)).status).toBe(200);
    await until('readiness probe', async () => (await get(readiness.path!)).status === 200);
  }, 90_000);

  it('applies the manifests from the git-sync checkout, and reports the commit it used', async () => {
    await until('projects created', async () => {
      const names = (await api.api.listAllProjects()).map((p) => p.name).sort();
      return names.includes('orders') && names.includes('invoices');
    });
    await until('source revision exported', async () => (await get('/metrics')).body.includes(`reconciler_source_info{revision="${COMMIT}"} 1`));
  }, 90_000);

  it('keeps its state on the state volume, and writes nowhere else', () => {
    const stateDir = hostPath(reconciler.env!.find((e) => e.name === 'RECONCILE_STATE_DIR')!.value!);
    expect(readdirSync(stateDir).length).toBeGreaterThan(0);
    // Nothing appeared in the working directory, which stands for the read-only root.
    expect(readdirSync(work).sort()).toEqual(['volumes']);
    expect(existsSync(join(work, 'volumes', 'git', 'repo', 'manifests', 'orders.yaml'))).toBe(true);
  });

  it('stops cleanly on SIGTERM, as the kubelet stops it', async () => {
    daemon.kill('SIGTERM');
    expect(await exit, output.slice(-2000)).toBe(0);
  }, 70_000);
});
