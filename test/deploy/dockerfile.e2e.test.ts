// The Dockerfile, without a Docker engine: its shape is checked on every run; its build and
// run steps are performed for real on a clean copy of the repository when RUN_SLOW=1 or
// REQUIRE_TOOLS=1 (minutes: two `npm ci` and a compile), and the resulting entrypoint is
// started as the image's user, with the image's environment, against a root that it may
// not write to.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyOwners, build, contextFiles, gitFiles, parseDockerfile, parsePairs, substitute, type Stage } from './dockerfile.js';
import { NODE24, REPO_ROOT, freePort, toolsRequired, which } from './tools.js';

const DOCKERFILE = join(REPO_ROOT, 'Dockerfile');
const slow = toolsRequired || process.env.RUN_SLOW === '1';
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function nodeMajor(): number {
  return Number(spawnSync(NODE24, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim());
}

describe('Dockerfile (static)', () => {
  const instructions = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
  const globalArgs = Object.assign({}, ...instructions.slice(0, instructions.findIndex((i) => i.keyword === 'FROM')).filter((i) => i.keyword === 'ARG').map((i) => parsePairs(i.args))) as Record<string, string>;
  const froms = instructions.filter((i) => i.keyword === 'FROM').map((i) => substitute(i.args, globalArgs));
  const finalIndex = instructions.findLastIndex((i) => i.keyword === 'FROM');
  const final = instructions.slice(finalIndex);
  const one = (keyword: string) => final.filter((i) => i.keyword === keyword);

  it('is multi-stage, on the Node major the tests use', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const major = nodeMajor();
    expect(major).toBe(Number(/\d+/.exec(packageJson.devDependencies.node!)![0]));
    for (const from of froms) expect(from, 'every stage starts from the same Node image').toMatch(new RegExp(`^node:${major}-bookworm-slim AS `));
  });

  it('installs only production dependencies into the final image', () => {
    const runs = instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /npm ci(?!.*--omit=dev)/.test(r)), 'a full install for the build').toBe(true);
    expect(runs.some((r) => /npm ci .*--omit=dev/.test(r)), 'a production install').toBe(true);
    expect(final.filter((i) => i.keyword === 'RUN').some((i) => i.args.includes('npm')), 'no npm step in the final stage').toBe(false);
    const nodeModules = final.find((i) => i.keyword === 'COPY' && i.args.includes('node_modules'))!;
    const fromStage = /--from=(\S+)/.exec(nodeModules.args)![1]!;
    const stageStart = instructions.findIndex((i) => i.keyword === 'FROM' && i.args.endsWith(`AS ${fromStage}`));
    const stageEnd = instructions.findIndex((i, index) => index > stageStart && i.keyword === 'FROM');
    const stageRuns = instructions.slice(stageStart, stageEnd).filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(stageRuns.every((r) => !r.includes('npm ci') || r.includes('--omit=dev')), `stage ${fromStage} installs production dependencies only`).toBe(true);
  });

  it('builds the image from the packed package: its code, schemas and package.json come from `npm pack`', () => {
    const runs = instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /npm pack --ignore-scripts\s+&&\s+tar -xzf fleet-reconciler-\*\.tgz$/.test(r))).toBe(true);
    const copies = final.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    for (const path of ['package.json', 'dist', 'schemas', 'node_modules']) expect(copies, path).toContainEqual(expect.stringMatching(new RegExp(`^--from=deps /app/${path} `)));
    expect(copies.filter((c) => !c.startsWith('--from=')), 'from the build context: the examples only').toEqual(['examples ./examples']);
  });

  it('runs as a numeric non-root user with volumes for state and /tmp, and exposes the metrics port', () => {
    const user = one('USER').at(-1)!.args;
    expect(user).toMatch(/^[1-9][0-9]*(:[0-9]+)?$/);
    const env = Object.assign({}, ...one('ENV').map((i) => parsePairs(i.args))) as Record<string, string>;
    const volumes = JSON.parse(one('VOLUME')[0]!.args) as string[];
    expect(volumes).toContain(env.RECONCILE_STATE_DIR);
    expect(volumes).toContain('/tmp');
    expect(env.TMPDIR).toBe('/tmp');
    expect(one('EXPOSE').map((i) => i.args)).toEqual(['9464']);
    expect(env.RECONCILE_METRICS_ADDR).toBe('0.0.0.0:9464');
  });

  it('starts the command under tini, in exec form', () => {
    const entrypoint = JSON.parse(one('ENTRYPOINT')[0]!.args) as string[];
    expect(entrypoint).toEqual(['/usr/bin/tini', '--', 'node', '/app/dist/cli/bin.js']);
    const apt = final.find((i) => i.keyword === 'RUN' && i.args.includes('apt-get install'))!;
    expect(apt.args).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(apt.args).toContain('rm -rf /var/lib/apt/lists/*');
  });

  it('carries the OCI labels', () => {
    const labels = Object.assign({}, ...one('LABEL').map((i) => parsePairs(i.args))) as Record<string, string>;
    for (const key of ['title', 'description', 'version', 'revision', 'created', 'licenses']) expect(labels[`org.opencontainers.image.${key}`], key).toBeTruthy();
  });

  it('.dockerignore keeps local builds, state and secrets out of the build context', () => {
    const sample = ['package.json', 'package-lock.json', 'tsconfig.json', 'src/cli/main.ts', 'schemas/api/openapi.json', 'examples/organizations.yaml', 'node_modules/pino/package.json', 'dist/cli/bin.js', '.git/HEAD', '.reconcile/inventory.json', 'test/deploy/helm.test.ts', 'helm/reconciler/Chart.yaml', 'examples/.github/workflows/reconcile.yml', 'src/.env', 'debug.log'];
    expect(contextFiles(REPO_ROOT, sample)).toEqual(['package.json', 'package-lock.json', 'tsconfig.json', 'src/cli/main.ts', 'schemas/api/openapi.json', 'examples/organizations.yaml']);
  });
});

describe.skipIf(!slow)('Dockerfile build and run, without an engine (RUN_SLOW=1 or REQUIRE_TOOLS=1)', () => {
  let work: string;
  let stages: Stage[];
  let image: Stage;
  let volumes: Record<string, string>;
  let baseBin: string;
  let runAs: { uid: number; gid: number } | undefined;
  const buildLog: string[] = [];

  /** Maps an absolute path inside the image to where the build put it. */
  const hostPath = (path: string) => {
    for (const [inside, outside] of Object.entries(volumes)) if (path === inside || path.startsWith(`${inside}/`)) return outside + path.slice(inside.length);
    return join(image.root, path);
  };

  /** The image's environment, with volume paths mapped and PATH reduced to the base image's tools. */
  const imageEnv = () => {
    const env: Record<string, string> = { PATH: baseBin, HOME: '/nonexistent' };
    for (const [key, value] of Object.entries(image.env)) env[key] = value.startsWith('/') ? hostPath(value) : value;
    return env;
  };

  /** ENTRYPOINT + arguments, as the engine would start it. */
  const command = (args: string[]) => {
    const [first, ...rest] = [...image.entrypoint!, ...args];
    const argv = first === '/usr/bin/tini' ? (which('tini') ? [which('tini')!, ...rest] : rest.slice(rest[0] === '--' ? 1 : 0)) : [first!, ...rest];
    return argv.map((arg, index) => (index > 0 && arg.startsWith('/') && existsSync(join(image.root, arg)) ? join(image.root, arg) : arg));
  };

  // Outside a PID namespace tini is not PID 1: registered as a subreaper it reaps as it would
  // in the container, and does not warn about it.
  const run = (args: string[], timeoutMs = 120_000) =>
    spawnSync(command(args)[0]!, command(args).slice(1), {
      cwd: join(image.root, image.workdir),
      env: { ...imageEnv(), TINI_SUBREAPER: '1' },
      encoding: 'utf8',
      timeout: timeoutMs,
      ...(runAs ?? {}),
    });

  const snapshot = (dir: string): string[] => {
    const out: string[] = [];
    const walk = (d: string) => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        const path = join(d, entry.name);
        if (entry.isDirectory()) walk(path);
        else out.push(`${relative(dir, path)} ${statSync(path).size} ${statSync(path).mtimeMs}`);
      }
    };
    walk(dir);
    return out.sort();
  };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'reconciler-image-'));
    chmodSync(work, 0o755);
    // The build context: a clean copy of the repository's files (tracked, or new and not
    // ignored), filtered by .dockerignore as the engine would.
    const context = join(work, 'context');
    for (const file of contextFiles(REPO_ROOT, gitFiles(REPO_ROOT))) {
      mkdirSync(dirname(join(context, file)), { recursive: true });
      cpSync(join(REPO_ROOT, file), join(context, file));
    }
    cpSync(DOCKERFILE, join(context, 'Dockerfile'));
    // What the base image provides: node (the project's Node 24) and npm.
    baseBin = join(work, 'base-bin');
    mkdirSync(baseBin);
    symlinkSync(NODE24, join(baseBin, 'node'));
    const npm = which('npm');
    if (!npm) throw new Error('npm not found on PATH');
    symlinkSync(npm, join(baseBin, 'npm'));
    stages = build({ dockerfile: DOCKERFILE, context, workDir: work, path: `${baseBin}:/usr/bin:/bin`, buildArgs: { REVISION: 'f00dfeed' }, log: (line) => buildLog.push(line) });
    image = stages.at(-1)!;
    applyOwners(image);
    volumes = Object.fromEntries(image.volumes.map((v) => [v, join(work, 'volumes', v.replace(/\//g, '_'))]));
    const [uid, gid] = image.user!.split(':').map(Number);
    for (const [inside, outside] of Object.entries(volumes)) {
      // A new volume starts with the image directory's content and owner (none for /tmp: 1777).
      mkdirSync(outside, { recursive: true });
      if (existsSync(join(image.root, inside))) cpSync(join(image.root, inside), outside, { recursive: true });
      if (inside === '/tmp') chmodSync(outside, 0o1777);
      else if (process.getuid?.() === 0) chownSync(outside, uid!, gid ?? uid!);
    }
    // As root, run as the image's user: the image's files are root's and not writable to it,
    // which is what a read-only root filesystem gives (and the snapshot below checks too).
    if (process.getuid?.() === 0) {
      runAs = { uid: uid!, gid: gid ?? uid! };
      for (let dir = work; dir !== dirname(dir); dir = dirname(dir)) if (dir.startsWith(tmpdir()) && dir !== tmpdir()) chmodSync(dir, 0o755);
    }
  }, 600_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('performed every build step: npm for real, the Debian package and the user recorded', () => {
    const steps = stages.flatMap((s) => s.steps.map((step) => ({ stage: s.name, ...step })));
    expect(steps.filter((s) => s.performed === 'executed').map((s) => `${s.stage}: ${s.command}`)).toEqual([
      'build: npm ci --ignore-scripts --no-audit --no-fund',
      'build: npm run build',
      'build: npm pack --ignore-scripts',
      'build: tar -xzf fleet-reconciler-*.tgz',
      'deps: npm ci --omit=dev --ignore-scripts --no-audit --no-fund',
    ]);
    expect(steps.filter((s) => s.performed === 'system-package' && s.detail).map((s) => s.detail)).toEqual(['tini']);
    expect(image.owned.get('/var/lib/reconciler')).toBe('10001:10001');
    // Every label resolved (a global ARG must be declared again inside the stage to be seen).
    for (const [key, value] of Object.entries(image.labels)) expect(value, key).not.toMatch(/\$\{?[A-Z_]/);
    expect(image.labels['org.opencontainers.image.base.name']).toBe('node:24-bookworm-slim');
    expect(image.labels['org.opencontainers.image.version']).toBe('0.1.0');
    expect(image.labels['org.opencontainers.image.revision']).toBe('f00dfeed');
  });

  it('lays out the image: compiled code, schemas, examples, production dependencies only', () => {
    const app = join(image.root, 'app');
    for (const path of ['package.json', 'dist/cli/bin.js', 'dist/cli/main.js', 'schemas/api/openapi.json', 'examples/organizations.yaml']) expect(existsSync(join(app, path)), path).toBe(true);
    expect(readdirSync(join(app, 'schemas')).filter((f) => f.endsWith('.schema.json')).length).toBeGreaterThan(0);
    for (const dependency of Object.keys(packageJson.dependencies)) expect(existsSync(join(app, 'node_modules', dependency, 'package.json')), dependency).toBe(true);
    for (const dependency of Object.keys(packageJson.devDependencies)) expect(existsSync(join(app, 'node_modules', dependency)), `dev dependency ${dependency}`).toBe(false);
    for (const absent of ['src', 'test', 'helm', 'tsconfig.json', 'examples/.github', 'examples/ci', 'dist/bench', 'dist/chaos', 'dist/api/generate']) expect(existsSync(join(app, absent)), absent).toBe(false);
    // The image's code is the package's: the same files `npm pack` lists.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8' })) as { files: { path: string }[] }[];
    const shipped = packed[0]!.files.map((f) => f.path).filter((p) => p.startsWith('dist/') || p.startsWith('schemas/')).sort();
    const inImage = (dir: string): string[] => readdirSync(join(app, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? inImage(join(dir, e.name)) : [join(dir, e.name)]));
    expect([...inImage('dist'), ...inImage('schemas')].sort()).toEqual(shipped);
  });

  it('--help, and the default command, print the usage', () => {
    const help = run(['--help']);
    expect(help.stderr).toBe('');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage:');
    expect(help.stdout).toContain('--sandbox');
    const byDefault = run(image.cmd ?? []);
    expect(byDefault.status).toBe(0);
    expect(byDefault.stdout).toBe(help.stdout);
  });

  it('validates and plans the shipped examples in a sandboxed dry run, writing only to its volumes', () => {
    const before = snapshot(image.root);
    const validate = run(['validate', 'examples']);
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    const plan = run(['examples', '--sandbox', '--dry-run', '--detailed-exitcode', '--output', 'json']);
    expect(plan.status, plan.stderr).toBe(2);
    const result = JSON.parse(plan.stdout) as { summary: { hasChanges: boolean; create: number }; entries: { action: string }[] };
    expect(result.summary.hasChanges).toBe(true);
    expect(result.entries.filter((e) => e.action === 'create').length).toBe(result.summary.create);
    expect(result.summary.create).toBeGreaterThan(0);
    const text = run(['examples', '--sandbox', '--dry-run']);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout.length).toBeGreaterThan(0);
    // Nothing in the image changed: the command writes only to the state volume and /tmp.
    expect(snapshot(image.root)).toEqual(before);
  });

  it('as PID 1 (under tini when this machine has it, else node itself) stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    let argv = command(['examples', '--watch', '--sandbox', '--dry-run', '--metrics-addr', `127.0.0.1:${port}`]);
    // As root, run it in a new PID namespace, where it is PID 1 as in a container: the
    // kernel then gives it no default signal actions, so only its own handlers stop it.
    const asPid1 = runAs !== undefined && which('unshare') !== undefined && which('setpriv') !== undefined;
    if (asPid1) argv = [which('unshare')!, '--pid', '--fork', '--kill-child', which('setpriv')!, `--reuid=${runAs!.uid}`, `--regid=${runAs!.gid}`, '--clear-groups', '--', ...argv];
    const daemon = spawn(argv[0]!, argv.slice(1), { cwd: join(image.root, image.workdir), env: imageEnv(), stdio: ['ignore', 'pipe', 'pipe'], ...(asPid1 ? {} : (runAs ?? {})) });
    let output = '';
    daemon.stdout.on('data', (c: Buffer) => (output += c.toString()));
    daemon.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exit = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
    for (let attempt = 0; ; attempt++) {
      if (daemon.exitCode !== null) throw new Error(`exited early (${daemon.exitCode}): ${output}`);
      const ready = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      if (/reconciler_reconcile_duration_seconds_count [1-9]/.test(ready)) break;
      if (attempt > 600) throw new Error(`no pass after 600 polls: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (asPid1) {
      // unshare's child is the namespace's PID 1; signal it as the container engine would.
      const children = readFileSync(`/proc/${daemon.pid}/task/${daemon.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
      expect(children).toHaveLength(1);
      expect(readFileSync(`/proc/${children[0]}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+1$/m);
      process.kill(children[0]!, 'SIGTERM');
    } else {
      daemon.kill('SIGTERM');
    }
    expect(await exit, output).toBe(0);
    // The state went to the state volume.
    expect(readdirSync(volumes[image.env.RECONCILE_STATE_DIR!]!).length).toBeGreaterThan(0);
  }, 120_000);
});
