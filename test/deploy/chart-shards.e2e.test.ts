// A sharded install as documented, run without a cluster: the chart rendered with the values of
// helm/examples/three-shards (three shards), the manifests repository holding that example's
// shard map, and each rendered reconciler container's arguments and environment applied to the
// built command, with its volumes as directories (each shard's token Secret projected as a
// file, the git volume as git-sync publishes it). Every shard pod must start, pass its probes
// and complete a pass against the emulator with its own user's token, on its own projects.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { renderObjects, type K8sObject } from './render.js';
import { NODE24, REPO_ROOT, freePort, helmTool, toolGate } from './tools.js';

const gate = toolGate(helmTool());
const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');
const EXAMPLE = join(REPO_ROOT, 'helm', 'examples', 'three-shards');
const COMMIT = '7ea5c0ffee7ea5c0ffee7ea5c0ffee7ea5c0ffee';
const TEAMS = ['a', 'b', 'c'] as const;
const tokenOf = (team: string) => `pat_chart_shard_${team}_0123456789`;

interface ShardPod {
  name: string;
  container: IContainer;
  work: string;
  child?: ChildProcess;
  exit?: Promise<number | null>;
  output: string;
  port: number;
}

/** The fleet: one organization, one project per team, labelled for its shard. */
function writeManifests(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec:\n  slug: acmeslug\n');
  for (const team of TEAMS) {
    writeFileSync(join(dir, `project-${team}.yaml`), `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop-${team}\n  labels: { team: ${team} }\nspec:\n  organization: acme\n  region: eu-west-1\n  restapi:\n    max_rows: 250\n`);
  }
  cpSync(join(EXAMPLE, 'shards.yaml'), join(dir, 'shards.yaml'));
}

/** Lays out the pod's volumes as directories; returns the container path -> host path mapping. */
function materialise(pod: IPodSpec, container: IContainer, work: string, secrets: Record<string, Record<string, string>>): (path: string) => string {
  const mounts: [string, string][] = [];
  for (const mount of container.volumeMounts!) {
    const dir = join(work, 'volumes', mount.name);
    mkdirSync(dir, { recursive: true });
    mounts.push([mount.mountPath, dir]);
    const volume = pod.volumes!.find((v) => v.name === mount.name)!;
    if (volume.secret) {
      const secret = secrets[volume.secret.secretName!];
      if (!secret) throw new Error(`the pod mounts the Secret ${volume.secret.secretName}, which the install does not create`);
      for (const item of volume.secret.items!) writeFileSync(join(dir, item.path), `${secret[item.key]}\n`);
    }
    if (mount.name === 'git') {
      writeManifests(join(dir, '.worktrees', COMMIT, 'manifests'));
      symlinkSync(join('.worktrees', COMMIT), join(dir, 'repo'));
    }
  }
  mounts.sort((a, b) => b[0].length - a[0].length);
  return (path: string) => {
    const mount = mounts.find(([inside]) => path === inside || path.startsWith(`${inside}/`));
    if (!mount) throw new Error(`${path} is on no volume: the container's root filesystem is read-only`);
    return mount[1] + path.slice(mount[0].length);
  };
}

const metrics = (pod: ShardPod) => fetch(`http://127.0.0.1:${pod.port}/metrics`).then((r) => r.text(), () => '');

async function until(pod: ShardPod, what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (pod.child!.exitCode !== null) throw new Error(`shard ${pod.name} exited with ${pod.child!.exitCode} before ${what}:\n${pod.output.slice(-3000)}`);
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`shard ${pod.name}: ${what} not reached after 600 polls\n${pod.output.slice(-3000)}`);
}

describe.skipIf(gate.skip)('a three-shard install of the chart, each pod run without a cluster', () => {
  let emulator: RunningEmulator;
  let deployments: K8sObject[];
  const pods: ShardPod[] = [];

  beforeAll(async () => {
    const helm = gate.assertPresent();
    emulator = await startEmulator({
      port: 0,
      speed: 600,
      rateLimit: { limit: 100_000, windowMs: 60_000 },
      seed: {
        users: TEAMS.map((t) => ({ name: `Team ${t}`, email: `${t}@example.test`, tokens: [tokenOf(t)] })),
        organizations: [{ name: 'Acme', slug: 'acmeslug', members: TEAMS.map((t) => ({ user: `${t}@example.test`, role: 'Owner' as const })) }],
      },
    });
    // The example's values, and what differs in this environment: the API's URL, where the
    // manifests are in the repository, and a budget and re-check schedule for a test.
    const objects = renderObjects(helm, {
      valuesFiles: [join(EXAMPLE, 'values.yaml')],
      set: [`api.url=${emulator.url}`, 'gitSync.subPath=manifests', 'reconcile.rateLimit=1000/1s', 'reconcile.resync=*/2 * * * * *'],
    });
    deployments = objects.filter((o) => o.kind === 'Deployment');
    // The Secrets the install creates (each shard's status token), as the kubelet would project them.
    const created = Object.fromEntries(
      objects
        .filter((o) => o.kind === 'Secret')
        .map((o) => [o.metadata.name, Object.fromEntries(Object.entries((o as unknown as { data?: Record<string, string> }).data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]))]),
    );
    // And the Secrets the example's values name, created before the install as its comment says.
    const secrets = { ...created, ...Object.fromEntries(TEAMS.map((t) => [`reconciler-team-${t}-token`, { token: tokenOf(t) }])) };
    for (const deployment of deployments) {
      const pod = (deployment as unknown as { spec: { template: { spec: IPodSpec } } }).spec.template.spec;
      const container = pod.containers.find((c) => c.name === 'reconciler')!;
      const work = mkdtempSync(join(tmpdir(), 'reconciler-shard-pod-'));
      const hostPath = materialise(pod, container, work, secrets);
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: '/nonexistent' };
      for (const variable of container.env!) {
        if (variable.valueFrom) throw new Error(`${variable.name}: a variable from a Secret or ConfigMap the test does not provide`);
        env[variable.name] = variable.value!.startsWith('/') ? hostPath(variable.value!) : variable.value;
      }
      const port = await freePort();
      env.RECONCILE_METRICS_ADDR = `127.0.0.1:${port}`;
      const args = container.args!.map((arg) => (arg.startsWith('/') ? hostPath(arg) : arg));
      const shard: ShardPod = { name: env.RECONCILE_SHARD ?? '(none)', container, work, output: '', port };
      const child = spawn(NODE24, [BIN, ...args], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (c: Buffer) => (shard.output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (shard.output += c.toString()));
      shard.child = child;
      shard.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
      pods.push(shard);
    }
  }, 120_000);

  afterAll(async () => {
    for (const pod of pods) {
      if (pod.child && pod.child.exitCode === null) {
        pod.child.kill('SIGKILL');
        await pod.exit;
      }
      rmSync(pod.work, { recursive: true, force: true });
    }
    await emulator?.close();
  });

  it('renders one Deployment per shard, each naming its shard and its own token file', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(TEAMS.map((t) => `reconciler-team-${t}`));
    expect(pods.map((p) => p.name).sort()).toEqual(TEAMS.map((t) => `team-${t}`));
    for (const pod of pods) {
      const env = Object.fromEntries(pod.container.env!.map((e) => [e.name, e.value]));
      expect(env.RECONCILE_SHARDS).toBe('/git/repo/manifests/shards.yaml');
      expect(env.MANAGEMENT_API_TOKEN_FILE).toBe('/var/run/secrets/reconciler/api/token');
    }
  });

  it('every shard pod starts, answers its probes and completes a pass', async () => {
    await Promise.all(
      pods.map(async (pod) => {
        const get = (path: string) => fetch(`http://127.0.0.1:${pod.port}${path}`).then((r) => r.status, () => 0);
        await until(pod, 'startup probe', async () => (await get(pod.container.startupProbe!.httpGet!.path!)) === 200);
        await until(pod, 'a successful pass', async () => /reconciler_reconcile_total\{result="success"\} [1-9]/.test(await metrics(pod)));
        expect(await metrics(pod)).toMatch(/reconciler_reconcile_total\{result="failed"\} 0\n/);
        await until(pod, 'readiness probe', async () => (await get(pod.container.readinessProbe!.httpGet!.path!)) === 200);
      }),
    );
  }, 120_000);

  it('each shard wrote its own project only, with its own user\'s token', async () => {
    const writes = emulator.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator') && r.route === '/v1/projects');
    expect(writes).toHaveLength(3);
    const projects = (await (await fetch(`${emulator.url}/v1/projects`, { headers: { authorization: `Bearer ${tokenOf('a')}` } })).json()) as { name: string }[];
    expect(projects.map((p) => p.name).sort()).toEqual(TEAMS.map((t) => `shop-${t}`));
    const users = new Set(writes.map((w) => w.user));
    expect(users.size).toBe(3);
    for (const pod of pods) for (const team of TEAMS) expect(pod.output).not.toContain(tokenOf(team));
  });

  it('every shard pod stops cleanly on SIGTERM', async () => {
    for (const pod of pods) pod.child!.kill('SIGTERM');
    for (const pod of pods) expect(await pod.exit, pod.output.slice(-2000)).toBe(0);
  }, 70_000);
});
