// The chart's pod, run for real without a cluster: the reconciler container's rendered
// arguments, environment, volume mounts and probes are applied to the built command, with each
// volume a directory, each Secret a file or a value as the kubelet projects it, and the git
// volume laid out as git-sync publishes it (a worktree named by its commit and a `repo` link).
// It must become ready, apply the manifests to the API (the emulator), keep its state on the
// state volume, report the commit it used, and stop cleanly on SIGTERM. With OAuth, the rotated
// refresh token must land on the state volume, so a restarted pod still gets in.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
const COMMON_VALUES = ['gitSync.subPath=manifests', 'reconcile.rateLimit=1000/1s', 'reconcile.resync=*/2 * * * * *', 'extraEnv[0].name=MONITORING_DB_PASS', 'extraEnv[0].value=chart-pod-db-pass'];

type Secrets = Record<string, Record<string, string>>;

/** One run of the reconciler container on a set of volume directories. */
class PodRun {
  readonly exit: Promise<number | null>;
  output = '';
  readonly #child: ChildProcess;

  constructor(
    readonly container: IContainer,
    readonly port: number,
    private readonly hostPath: (path: string) => string,
    secrets: Secrets,
    cwd: string,
  ) {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: '/nonexistent' };
    for (const variable of container.env!) {
      const ref = variable.valueFrom?.secretKeyRef;
      if (ref) env[variable.name] = secrets[ref.name!]![ref.key]!;
      else env[variable.name] = variable.value!.startsWith('/') ? hostPath(variable.value!) : variable.value;
    }
    // The pod binds all interfaces of its own network; here, loopback only.
    expect(env.RECONCILE_METRICS_ADDR).toBe(`0.0.0.0:${container.ports![0]!.containerPort}`);
    env.RECONCILE_METRICS_ADDR = `127.0.0.1:${port}`;
    const args = container.args!.map((arg) => (arg.startsWith('/') ? hostPath(arg) : arg));
    this.#child = spawn(NODE24, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child.stdout!.on('data', (c: Buffer) => (this.output += c.toString()));
    this.#child.stderr!.on('data', (c: Buffer) => (this.output += c.toString()));
    this.exit = new Promise((resolve) => this.#child.once('exit', (code) => resolve(code)));
  }

  get(path: string) {
    return fetch(`http://127.0.0.1:${this.port}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }), () => ({ status: 0, body: '' }));
  }

  async until(what: string, probe: () => Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < 600; attempt++) {
      if (this.#child.exitCode !== null) throw new Error(`the reconciler exited with ${this.#child.exitCode} before ${what}:\n${this.output.slice(-3000)}`);
      if (await probe()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${what}: not reached after 600 polls\n${this.output.slice(-3000)}`);
  }

  /** The kubelet's probes, in order: startup and liveness, then readiness. */
  async probesPass(): Promise<void> {
    const { startupProbe, livenessProbe, readinessProbe, ports } = this.container;
    expect(ports!.find((p) => p.name === startupProbe!.httpGet!.port)).toBeDefined();
    await this.until('startup probe', async () => (await this.get(startupProbe!.httpGet!.path!)).status === 200);
    expect((await this.get(livenessProbe!.httpGet!.path!)).status).toBe(200);
    await this.until('readiness probe', async () => (await this.get(readinessProbe!.httpGet!.path!)).status === 200);
  }

  /** A pass finished successfully, and none failed: the API accepted the credentials. */
  async passSucceeded(): Promise<void> {
    await this.until('a successful pass', async () => /reconciler_reconcile_total\{result="success"\} [1-9]/.test((await this.get('/metrics')).body));
    expect((await this.get('/metrics')).body).toMatch(/reconciler_reconcile_total\{result="failed"\} 0\n/);
  }

  signal(signal: NodeJS.Signals): void {
    this.#child.kill(signal);
  }

  async kill(): Promise<void> {
    if (this.#child.exitCode === null) {
      this.#child.kill('SIGKILL');
      await this.exit;
    }
  }
}

/** Renders the chart, lays its volumes out as directories, and starts pods on them. */
class ChartPod {
  readonly container: IContainer;
  readonly pod: IPodSpec;
  readonly work: string;
  /** Container path -> host directory, longest first. */
  readonly mounts: [string, string][] = [];

  constructor(helm: string, set: string[], secrets: Secrets) {
    this.pod = findObject<{ spec: { template: { spec: IPodSpec } } }>(renderObjects(helm, { set }), 'Deployment').spec.template.spec;
    this.container = this.pod.containers.find((c) => c.name === 'reconciler')!;
    this.work = mkdtempSync(join(tmpdir(), 'reconciler-pod-'));
    for (const mount of this.container.volumeMounts!) {
      const dir = join(this.work, 'volumes', mount.name);
      mkdirSync(dir, { recursive: true });
      this.mounts.push([mount.mountPath, dir]);
      const volume = this.pod.volumes!.find((v) => v.name === mount.name)!;
      if (volume.secret) {
        for (const item of volume.secret.items!) writeFileSync(join(dir, item.path), `${secrets[volume.secret.secretName!]![item.key]}\n`);
      }
      if (mount.name === 'git') {
        cpSync(FIXTURE, join(dir, '.worktrees', COMMIT, 'manifests'), { recursive: true });
        symlinkSync(join('.worktrees', COMMIT), join(dir, 'repo'));
      }
    }
    this.mounts.sort((a, b) => b[0].length - a[0].length);
  }

  hostPath = (path: string): string => {
    const mount = this.mounts.find(([inside]) => path === inside || path.startsWith(`${inside}/`));
    if (!mount) throw new Error(`${path} is on no volume: the container's root filesystem is read-only`);
    return mount[1] + path.slice(mount[0].length);
  };

  async start(secrets: Secrets): Promise<PodRun> {
    return new PodRun(this.container, await freePort(), this.hostPath, secrets, this.work);
  }

  envValue(name: string): string {
    return this.container.env!.find((e) => e.name === name)!.value!;
  }

  close(): void {
    rmSync(this.work, { recursive: true, force: true });
  }
}

describe.skipIf(gate.skip)('the chart pod, run without a cluster', () => {
  let emulator: RunningEmulator;
  let api: ApiClient;

  beforeAll(async () => {
    gate.assertPresent();
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
    api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  });

  afterAll(async () => {
    await api?.close();
    await emulator?.close();
  });

  describe('with an API token Secret', () => {
    let chart: ChartPod;
    let run: PodRun;
    // The chart generates the status view's token Secret; the kubelet would project it like any other.
    const secrets = (): Secrets => ({ 'reconciler-api-token': { token: emulator.token }, 'reconciler-status-token': { token: 'chart-pod-status-token-5d1c' } });

    beforeAll(async () => {
      chart = new ChartPod(gate.assertPresent(), [`api.url=${emulator.url}`, ...COMMON_VALUES], secrets());
      run = await chart.start(secrets());
    });
    afterAll(async () => {
      await run?.kill();
      chart?.close();
    });

    it('answers its startup and liveness probes, then its readiness probe', async () => {
      await run.probesPass();
      await run.passSucceeded();
    }, 90_000);

    it('applies the manifests from the git-sync checkout, and reports the commit it used', async () => {
      await run.until('projects created', async () => {
        const names = (await api.api.listAllProjects()).map((p) => p.name);
        return names.includes('orders') && names.includes('invoices');
      });
      await run.until('source revision exported', async () => (await run.get('/metrics')).body.includes(`reconciler_source_info{revision="${COMMIT}"} 1`));
    }, 90_000);

    it('keeps its state on the state volume, and writes nowhere else', () => {
      expect(readdirSync(chart.hostPath(chart.envValue('RECONCILE_STATE_DIR'))).length).toBeGreaterThan(0);
      // Nothing appeared in the working directory, which stands for the read-only root.
      expect(readdirSync(chart.work)).toEqual(['volumes']);
      expect(existsSync(join(chart.work, 'volumes', 'git', 'repo', 'manifests', 'orders.yaml'))).toBe(true);
    });

    it('stops cleanly on SIGTERM, as the kubelet stops it', async () => {
      run.signal('SIGTERM');
      expect(await run.exit, run.output.slice(-2000)).toBe(0);
    }, 70_000);
  });

  describe('with OAuth and a persistent state volume', () => {
    let chart: ChartPod;
    let secrets: Secrets;
    let initial: string;

    beforeAll(async () => {
      // The one-time browser step that gives the operator a refresh token for the Secret.
      const { clientId, clientSecret } = emulator.oauthClient;
      const redirect = 'http://127.0.0.1:9/callback';
      const authorize = await fetch(`${emulator.url}/v1/oauth/authorize?client_id=${clientId}&response_type=code&redirect_uri=${encodeURIComponent(redirect)}&state=chart`, { redirect: 'manual' });
      const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
      const token = await fetch(`${emulator.url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, client_secret: clientSecret, code, redirect_uri: redirect }),
      });
      initial = ((await token.json()) as { refresh_token: string }).refresh_token;
      secrets = { 'reconciler-oauth': { 'client-id': clientId, 'client-secret': clientSecret, 'refresh-token': initial }, 'reconciler-status-token': { token: 'chart-pod-status-token-5d1c' } };
      chart = new ChartPod(gate.assertPresent(), [`api.url=${emulator.url}`, 'api.auth=oauth', 'api.oauth.existingSecret=reconciler-oauth', 'persistence.enabled=true', ...COMMON_VALUES], secrets);
    });
    afterAll(() => chart?.close());

    it('gets in with the Secret, stores the rotated refresh token on the state volume, and a restarted pod gets in with it', async () => {
      const first = await chart.start(secrets);
      try {
        await first.probesPass();
        await first.passSucceeded();
      } finally {
        first.signal('SIGTERM');
        expect(await first.exit, first.output.slice(-2000)).toBe(0);
      }
      const stored = readFileSync(chart.hostPath(chart.envValue('MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE')), 'utf8').trim();
      expect(stored).not.toBe('');
      expect(stored).not.toBe(initial);
      // The Secret's refresh token has been rotated away: only the stored one works now.
      const reuse = await fetch(`${emulator.url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: secrets['reconciler-oauth']!['client-id']!, client_secret: secrets['reconciler-oauth']!['client-secret']!, refresh_token: initial }),
      });
      expect(reuse.status).toBe(400);
      // The pod restarts on the same (persistent) state volume and still gets in.
      const second = await chart.start(secrets);
      try {
        await second.probesPass();
        await second.passSucceeded();
      } finally {
        second.signal('SIGTERM');
        expect(await second.exit, second.output.slice(-2000)).toBe(0);
      }
      // No token or secret in anything the pod wrote to its logs.
      for (const value of [initial, stored, secrets['reconciler-oauth']!['client-secret']!]) {
        expect(first.output).not.toContain(value);
        expect(second.output).not.toContain(value);
      }
    }, 120_000);

    /** A pod on a new, empty state volume: it has only the Secret's refresh token, rotated away by now. */
    const freshPod = async () => {
      const fresh = new ChartPod(gate.assertPresent(), [`api.url=${emulator.url}`, 'api.auth=oauth', 'api.oauth.existingSecret=reconciler-oauth', ...COMMON_VALUES], secrets);
      const run = await fresh.start(secrets);
      await run.until('a pass recorded', async () => /reconciler_reconcile_duration_seconds_count [1-9]/.test((await run.get('/metrics')).body));
      return { run, close: async () => (await run.kill(), fresh.close()) };
    };

    it('without its state volume (an emptyDir lost to rescheduling) the pod cannot get in: why NOTES asks for persistence', async () => {
      const { run, close } = await freshPod();
      try {
        expect((await run.get('/metrics')).body).toMatch(/reconciler_reconcile_total\{result="failed"\} [1-9]/);
        expect(run.output).toContain('the refresh token was refused');
        expect((await run.get(run.container.livenessProbe!.httpGet!.path!)).status).toBe(200);
      } finally {
        await close();
      }
    }, 90_000);

    // A refused OAuth refresh reaches the telemetry as `POST /v1/oauth/token 400`: readiness
    // must count it as no valid token, not as an answer from the API.
    it('without its state volume the pod is not ready (readiness probe)', async () => {
      const { run, close } = await freshPod();
      try {
        expect((await run.get(run.container.readinessProbe!.httpGet!.path!)).status).not.toBe(200);
      } finally {
        await close();
      }
    }, 90_000);
  });
});
