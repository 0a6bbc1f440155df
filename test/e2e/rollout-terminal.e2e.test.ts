// A one-shot apply with a Rollout, as a person sees it on a terminal (a pseudo-terminal from
// util-linux `script`): each wave's pass, progress lines while a wave soaks, the gate, the
// next wave. The sandbox runs soaks at its lifecycle speed (a 10-minute soak takes 2 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { BIN, NODE, REPO, assertBuilt, expectExit, type CliRun } from './helpers/cli.js';

let root: string;
let dir: string;

const project = (name: string, ring: string) => `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels: { ring: ${ring} }
spec:
  organization: acme
  region: eu-west-1
  db_pass: { valueFrom: { env: ROLLOUT_TERMINAL_DB_PASS } }
  restapi: { max_rows: 100 }
`;

beforeAll(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), 'reconcile-rollout-terminal-'));
  dir = join(root, 'manifests');
  await mkdir(dir);
  await writeFile(join(dir, 'org.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n');
  await writeFile(join(dir, 'canary.yaml'), project('canary', 'canary'));
  await writeFile(join(dir, 'shop.yaml'), project('shop', 'tenant'));
  await writeFile(join(dir, 'blog.yaml'), project('blog', 'tenant'));
  await writeFile(
    join(dir, 'rollout.yaml'),
    `apiVersion: reconciler/v1
kind: Rollout
metadata: { name: tenants }
spec:
  soak: 10m
  waves:
    - { name: canary, selector: { labels: { ring: canary } } }
    - { name: tenants, selector: { labels: { ring: tenant } } }
`,
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const QUESTION = 'Apply these changes? Only `y` or `yes` applies. [y/N] ';

/** `answer` is typed once the confirmation question is on the screen. */
function runOnTerminal(args: string[], env: NodeJS.ProcessEnv, answer?: string): Promise<CliRun> {
  const command = [NODE, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (answer !== undefined && !answered && stdout.includes(QUESTION)) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout: stdout.replaceAll('\r\n', '\n'), stderr }));
  });
}

describe('a one-shot apply with waves on a terminal', () => {
  it('applies the canary, shows its soak counting down, passes the gate, then applies the next wave', async () => {
    const run = await runOnTerminal([dir, '--sandbox', '--state-dir', join(root, 'state')], { NO_COLOR: '1', ROLLOUT_TERMINAL_DB_PASS: 'rollout-terminal-db-0b7e' });
    expectExit(run, 0);
    const screen = run.stdout;
    const at = (pattern: RegExp) => {
      const match = pattern.exec(screen);
      expect(match, String(pattern)).not.toBeNull();
      return match!.index;
    };
    // The first pass creates the canary only; the tenants wait for its gate.
    const firstPlan = at(/Rollout tenants at content-[0-9a-f]{12}: canary soaking until \S+ \(1 project\), tenants waiting \(2 projects\)\./);
    expect(screen.slice(0, firstPlan)).toMatch(/\+ Project\/shop create {2}\(wave tenants; held: wave tenants waits for wave canary \(applying\)\)/);
    const soakStart = at(/INFO +rollout tenants: wave canary is applied and healthy; soaking for \d+m \d+s before wave tenants/);
    const countdown = [...screen.matchAll(/INFO +rollout tenants: wave canary soaking, (\d+)m (\d+)s left/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
    expect(countdown.length).toBeGreaterThanOrEqual(2);
    expect(countdown[0]!).toBeGreaterThan(countdown.at(-1)!);
    const gate = at(/INFO +rollout tenants: the gate of wave canary is due; checking its health, then wave tenants/);
    const passed = at(/INFO +rollout: wave canary passed its gate/);
    const secondPlan = at(/Rollout tenants at content-[0-9a-f]{12}: canary done \(1 project\), tenants soaking until \S+ \(2 projects\)\./);
    const done = at(/Rollout tenants at content-[0-9a-f]{12}: canary done \(1 project\), tenants done \(2 projects\)\./);
    expect(firstPlan).toBeLessThan(soakStart);
    expect(soakStart).toBeLessThan(gate);
    expect(gate).toBeLessThan(passed);
    expect(passed).toBeLessThan(secondPlan);
    expect(secondPlan).toBeLessThan(done);
    // The second wave's own pass created the tenants.
    expect(screen.slice(passed, secondPlan)).toMatch(/\+ Project\/shop create {2}\(wave tenants\)/);
    expect(screen).not.toMatch(/^\{"level"/m);
    expect(screen).not.toContain('rollout-terminal-db-0b7e');
  }, 90_000);
});

describe('a confirmed one-shot apply with waves, against an API', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  });
  afterAll(async () => {
    await emulator?.close();
  });

  it('asks once about the whole plan, then applies it wave by wave through the gate', async () => {
    // A short soak: against an API the gate runs on the real clock.
    const short = join(root, 'short');
    await mkdir(short);
    for (const name of ['org', 'canary', 'shop', 'blog']) await writeFile(join(short, `${name}.yaml`), await import('node:fs/promises').then((fs) => fs.readFile(join(dir, `${name}.yaml`), 'utf8')));
    await writeFile(join(short, 'rollout.yaml'), (await import('node:fs/promises').then((fs) => fs.readFile(join(dir, 'rollout.yaml'), 'utf8'))).replace('soak: 10m', 'soak: 300ms'));
    const env = {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(root, 'confirmed-state'),
      RECONCILE_RATE_LIMIT: '1000/1s',
      ROLLOUT_TERMINAL_DB_PASS: 'rollout-terminal-db-0b7e',
      NO_COLOR: '1',
    };
    const run = await runOnTerminal([short], env, 'y');
    expectExit(run, 0);
    const screen = run.stdout;
    expect(screen.split(QUESTION)).toHaveLength(2);
    const asked = screen.indexOf(QUESTION);
    // The plan asked about shows every wave's change; the tenants' wait for the canary's gate.
    expect(screen.slice(0, asked)).toMatch(/\+ Project\/shop create {2}\(wave tenants; held: wave tenants waits for wave canary \(applying\)\)/);
    const after = screen.slice(asked);
    expect(after).toMatch(/INFO +rollout: wave canary passed its gate/);
    expect(after).toMatch(/Rollout tenants at content-[0-9a-f]{12}: canary done \(1 project\), tenants done \(2 projects\)\./);
    const created = emulator.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects');
    expect(created).toHaveLength(3);
    expect(screen).not.toContain('refused');
  }, 90_000);
});
