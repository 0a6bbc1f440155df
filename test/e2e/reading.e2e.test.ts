// Reading the checkout and references safely, through the built command against an emulator:
// an incomplete tree applies nothing, credential references are refused alike by validate and
// apply, and FIFOs or devices give an error instead of a hung process.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, BIN, expectExit, NODE, REPO, type CliRun } from './helpers/cli.js';

const CANARY = 'canary-reading-5e0c1f77aa';
const FIXTURE = join(REPO, 'test/fixtures/reconcile-e2e');
/** Far above the few seconds these runs take: a run that hangs is killed and the test fails. */
const HANG_GUARD_MS = 45_000;

let emulator: RunningEmulator;
let work: string;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  work = mkdtempSync(join(tmpdir(), 'reconcile-reading-'));
});

afterAll(async () => {
  await emulator?.close();
  rmSync(work, { recursive: true, force: true });
});

interface BoundedRun extends CliRun {
  /** Set when the guard had to kill the process. */
  signal: NodeJS.Signals | null;
}

/** The built command, killed if it outlives the guard (the test then fails on `signal`). */
function runBounded(args: string[], env: NodeJS.ProcessEnv): Promise<BoundedRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NODE, [BIN, ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: HANG_GUARD_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code: code ?? -1, signal, stdout, stderr }));
  });
}

/** A new directory each time, so repeated runs of a test start afresh. */
function fresh(name: string): string {
  return mkdtempSync(join(work, `${name}-`));
}

function fixtureCopy(name: string): string {
  const dir = fresh(name);
  for (const file of ['organization.yaml', 'blog.yaml', 'shop.yaml', 'web.yaml']) {
    writeFileSync(join(dir, file), readFileSync(join(FIXTURE, file)));
  }
  return dir;
}

function baseEnv(stateDir: string): NodeJS.ProcessEnv {
  return {
    MANAGEMENT_API_URL: emulator.url,
    MANAGEMENT_API_TOKEN: emulator.token,
    RECONCILE_STATE_DIR: stateDir,
    RECONCILE_RATE_LIMIT: '1000/1s',
    E2E_DB_PASS: CANARY,
    E2E_SMTP_PASS: CANARY,
  };
}

const writes = (since: number) => emulator.requests().slice(since).filter((r) => r.path.startsWith('/v1/') && r.method !== 'GET');

describe('an incomplete checkout (built command)', () => {
  it('a subdirectory that became a dangling symlink fails the pass: exit 1, the path named, no write request', async () => {
    emulator.reset();
    const dir = fixtureCopy('dangling');
    const env = baseEnv(fresh('state-dangling'));
    // `web` lives in team/ and is deleted when its manifest goes away.
    mkdirSync(join(dir, 'team'));
    const web = readFileSync(join(dir, 'web.yaml'), 'utf8').replace('  restapi:', '  policy: { deletion: delete }\n  restapi:');
    writeFileSync(join(dir, 'team/web.yaml'), web);
    rmSync(join(dir, 'web.yaml'));
    expectExit(await runBounded([dir], env), 0);

    // The git-sync worktree behind team/ is swapped away: the link now points nowhere.
    renameSync(join(dir, 'team'), `${dir}-team-gone`);
    symlinkSync(`${dir}-worktree-that-was-removed`, join(dir, 'team'));
    const since = emulator.requests().length;
    const run = await runBounded([dir], env);
    expectExit(run, 1);
    expect(run.signal).toBeNull();
    expect(run.stdout).toContain('Manifests are invalid');
    expect(run.stdout).toContain('`team` is a symbolic link whose target does not exist');
    expect(writes(since)).toEqual([]);
    const live = emulator.requests().slice(since).filter((r) => r.path.startsWith('/v1/'));
    expect(live).toEqual([]);
  });
});

describe('credential references (built command): validate and apply refuse them with the same message', () => {
  it('refuses the tool variables, /proc, /sys, /dev, the token file and the state directory', async () => {
    const dir = fixtureCopy('credentials');
    const stateDir = fresh('state-credentials');
    writeFileSync(join(stateDir, 'inventory.json'), '{}\n');
    const tokenFile = join(fresh('token'), 'token');
    writeFileSync(tokenFile, `${emulator.token}\n`);
    const refs: Record<string, string> = {
      API_TOKEN: 'env: MANAGEMENT_API_TOKEN',
      RATE: 'env: RECONCILE_RATE_LIMIT',
      OAUTH: 'env: MANAGEMENT_API_OAUTH_CLIENT_SECRET',
      ENVIRON: 'file: /proc/self/environ',
      SYS: 'file: /sys/kernel/hostname',
      DEV: 'file: /dev/zero',
      TOKEN_FILE: `file: ${tokenFile}`,
      STATE: `file: ${join(stateDir, 'inventory.json')}`,
    };
    const values = Object.entries(refs).map(([key, ref]) => `    ${key}:\n      valueFrom:\n        ${ref}\n`).join('');
    writeFileSync(join(dir, 'secrets.yaml'), `apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: blog-secrets\nspec:\n  project: blog\n  values:\n${values}`);
    const env = { ...baseEnv(stateDir), MANAGEMENT_API_OAUTH_CLIENT_SECRET: CANARY };
    delete env.MANAGEMENT_API_TOKEN;
    const args = ['--token-file', tokenFile];

    const validate = await runBounded(['validate', dir, ...args], env);
    const since = emulator.requests().length;
    const apply = await runBounded([dir, ...args], env);
    expectExit(validate, 1);
    expectExit(apply, 1);
    expect(writes(since)).toEqual([]);
    for (const key of Object.keys(refs)) {
      const line = validate.stdout.split('\n').find((l) => l.includes(`/spec/values/${key}:`));
      expect(line, key).toMatch(/^secrets\.yaml:\d+:\d+ \/spec\/values\/\w+: secret reference (env|file):\S+ is refused: .+ \(.+\)$/);
      // The same location, message and hint in the apply's report.
      expect(apply.stdout.split('\n').map((l) => l.trim())).toContain(line);
    }
    for (const output of [validate.stdout, validate.stderr, apply.stdout, apply.stderr]) {
      expect(output).not.toContain(CANARY);
      expect(output).not.toContain(emulator.token);
    }
  });

  it('apply reports an unset variable as validate does: located, with the variable to set', async () => {
    const dir = fixtureCopy('unset');
    const env = baseEnv(fresh('state-unset'));
    delete env.E2E_SMTP_PASS;
    const validate = await runBounded(['validate', dir], env);
    const apply = await runBounded([dir, '--dry-run'], env);
    expectExit(validate, 0);
    expectExit(apply, 1);
    const expected = "blog.yaml:16:7 /spec/auth/smtp_pass: secret reference env:E2E_SMTP_PASS names an environment variable that is not set (set E2E_SMTP_PASS in the reconciler's environment)";
    expect(apply.stdout).toContain(expected);
    expect(validate.stdout).toContain(expected.replace('smtp_pass: ', 'smtp_pass: warning: '));
  });
});

describe('FIFOs and devices (built command): an error, never a hung run', () => {
  function fifo(path: string): string {
    execFileSync('mkfifo', [path]);
    return path;
  }

  it('a file reference to a FIFO or to a link to /dev/zero, in a directory --secret-dirs allows', async () => {
    const dir = fixtureCopy('fifo-ref');
    const mounted = fresh('mounted-secrets');
    fifo(join(mounted, 'pipe'));
    symlinkSync('/dev/zero', join(mounted, 'zero'));
    writeFileSync(join(mounted, 'ok'), 'fine\n');
    const ref = (name: string) => `      valueFrom:\n        file: ${join(mounted, name)}\n`;
    writeFileSync(join(dir, 'secrets.yaml'), `apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: s\nspec:\n  project: blog\n  values:\n    PIPE:\n${ref('pipe')}    ZERO:\n${ref('zero')}    OK:\n${ref('ok')}`);
    const env = baseEnv(fresh('state-fifo-ref'));
    for (const args of [['validate', dir, '--secret-dirs', mounted], [dir, '--dry-run', '--secret-dirs', mounted]]) {
      const run = await runBounded(args, env);
      expect(run.signal).toBeNull();
      expectExit(run, 1);
      expect(run.stdout).toContain(`/spec/values/PIPE: secret reference file:${join(mounted, 'pipe')} names something that is a FIFO (named pipe), not a regular file`);
      expect(run.stdout).toContain(`/spec/values/ZERO: secret reference file:${join(mounted, 'zero')} is refused: /proc, /sys, /dev are never read`);
      expect(run.stdout).not.toContain('/spec/values/OK');
    }
  });

  it('a .reconcileignore that is a FIFO or a link to /dev/zero', async () => {
    for (const [name, make] of [
      ['ignore-fifo', (path: string) => fifo(path)],
      ['ignore-zero', (path: string) => symlinkSync('/dev/zero', path)],
    ] as const) {
      const dir = fixtureCopy(name);
      make(join(dir, '.reconcileignore'));
      const since = emulator.requests().length;
      for (const args of [['validate', dir], [dir]]) {
        const run = await runBounded(args, baseEnv(fresh(`state-${name}`)));
        expect(run.signal).toBeNull();
        expectExit(run, 1);
        expect(run.stdout).toMatch(/the ignore file \.reconcileignore is (a FIFO \(named pipe\)|a device), not a regular file/);
      }
      expect(writes(since)).toEqual([]);
    }
  });

  it('--token-file naming a FIFO or /dev/zero', async () => {
    const dir = fixtureCopy('token-fifo');
    for (const tokenFile of [fifo(join(fresh('token'), 'token-pipe')), '/dev/zero']) {
      const env = baseEnv(fresh('state-token-fifo'));
      delete env.MANAGEMENT_API_TOKEN;
      const run = await runBounded([dir, '--dry-run', '--token-file', tokenFile], env);
      expect(run.signal).toBeNull();
      expectExit(run, 1);
      expect(`${run.stdout}${run.stderr}`).toMatch(new RegExp(`token file ${tokenFile}: it is (a FIFO \\(named pipe\\)|a device), not a regular file`));
    }
  });
});
