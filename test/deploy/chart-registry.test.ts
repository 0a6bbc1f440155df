// The chart as a release publishes it: packaged by scripts/package-chart.mjs (the release
// workflow's step), pushed to a real OCI registry (Debian's docker-registry, on 127.0.0.1, with
// its storage and configuration in a temporary directory) with `helm push`, then installed
// from there as a team would (`helm template oci://...`): the rendered image is the one the
// release workflow pushes, tagged with the package's version, and no image value is needed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, freePort, helmTool, registryTool, toolGate } from './tools.js';

const helmGate = toolGate(helmTool());
const registryGate = toolGate(registryTool());
const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGE = 'ghcr.io/acme/fleet-reconciler';

describe.skipIf(helmGate.skip || registryGate.skip)('the released chart, from an OCI registry', () => {
  let helm: string;
  let work: string;
  let registry: ChildProcess | undefined;
  let address: string;
  let registryLog = '';

  /** helm with its configuration, cache and registry logins in the temporary directory. */
  const runHelm = (args: string[]) => {
    const out = spawnSync(helm, args, {
      cwd: work,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: work, HELM_CONFIG_HOME: join(work, 'helm-config'), HELM_CACHE_HOME: join(work, 'helm-cache'), HELM_DATA_HOME: join(work, 'helm-data') },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: out.status, stdout: out.stdout, stderr: out.stderr };
  };

  beforeAll(async () => {
    helm = helmGate.assertPresent();
    const registryPath = registryGate.assertPresent();
    work = mkdtempSync(join(tmpdir(), 'reconciler-chart-registry-'));
    const port = await freePort();
    address = `127.0.0.1:${port}`;
    const config = join(work, 'registry.yml');
    writeFileSync(config, ['version: 0.1', 'log:', '  level: error', 'storage:', '  filesystem:', `    rootdirectory: ${join(work, 'storage')}`, 'http:', `  addr: ${address}`, ''].join('\n'));
    registry = spawn(registryPath, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    registry.stdout!.on('data', (chunk: Buffer) => (registryLog += chunk.toString()));
    registry.stderr!.on('data', (chunk: Buffer) => (registryLog += chunk.toString()));
    // Ready when the registry answers its API's base endpoint.
    for (;;) {
      if (registry.exitCode !== null) throw new Error(`docker-registry exited (${registry.exitCode}): ${registryLog}`);
      try {
        const response = await fetch(`http://${address}/v2/`);
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 60_000);

  afterAll(async () => {
    if (registry && registry.exitCode === null) {
      const exited = new Promise((resolve) => registry!.once('exit', resolve));
      registry.kill('SIGTERM');
      await exited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is packaged with the package\'s version, pushed with helm push, and renders the released image from oci://', () => {
    const packaged = spawnSync('node', [join(REPO_ROOT, 'scripts', 'package-chart.mjs'), '--image', IMAGE, join(work, 'out')], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, HELM: helm } });
    expect(packaged.status, packaged.stderr).toBe(0);
    const archive = packaged.stdout.trim();
    expect(archive).toBe(join(work, 'out', `reconciler-${version}.tgz`));
    // The checkout's chart is left as it is.
    expect(readFileSync(join(REPO_ROOT, 'helm', 'reconciler', 'values.yaml'), 'utf8')).toMatch(/^ {2}repository: ""$/m);

    const pushed = runHelm(['push', archive, `oci://${address}/acme/fleet-reconciler/charts`, '--plain-http']);
    expect(pushed.status, `${pushed.stderr}\n${registryLog}`).toBe(0);
    expect(`${pushed.stdout}${pushed.stderr}`).toContain(`Pushed: ${address}/acme/fleet-reconciler/charts/reconciler:${version}`);

    const reference = `oci://${address}/acme/fleet-reconciler/charts/reconciler`;
    const shown = runHelm(['show', 'chart', reference, '--version', version, '--plain-http']);
    expect(shown.status, shown.stderr).toBe(0);
    const chart = parseAllDocuments(shown.stdout)[0]!.toJS() as { version: string; appVersion: string };
    expect(chart).toMatchObject({ version, appVersion: version });

    // Only what no default can stand for: the API and the manifests repository.
    const rendered = runHelm(['template', 'reconciler', reference, '--version', version, '--plain-http', '--namespace', 'fleet', '--set', 'api.url=https://api.example.com', '--set', 'gitSync.repo=https://git.example.com/fleet.git']);
    expect(rendered.status, rendered.stderr).toBe(0);
    const objects = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: { name: string; image: string }[] } } } });
    const deployment = objects.find((o) => o?.kind === 'Deployment')!;
    const reconciler = deployment.spec!.template.spec.containers.find((c) => c.name === 'reconciler')!;
    expect(reconciler.image).toBe(`${IMAGE}:${version}`);
  });

  it('refuses an image reference with a tag or in upper case (the tag is always the package\'s version)', () => {
    for (const image of ['ghcr.io/acme/fleet-reconciler:1.0.0', 'ghcr.io/Acme/fleet-reconciler']) {
      const result = spawnSync('node', [join(REPO_ROOT, 'scripts', 'package-chart.mjs'), '--image', image, join(work, 'refused')], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, HELM: helm } });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`package-chart: --image ${image} is not an image repository without a tag`);
    }
  });
});
