// Runs the BUILT command as a user does (`node dist/cli/bin.js ...`) and collects its streams.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

export const REPO = resolve(new URL('../../..', import.meta.url).pathname);
export const NODE = join(REPO, 'node_modules/.bin/node');
export const BIN = join(REPO, 'dist/cli/bin.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -p .), as npm test does`);
}

/** Every stream of every run, for the canary checks. */
export const transcript: string[] = [];

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd = REPO): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NODE, [BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      transcript.push(stdout, stderr);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** A private copy of a manifests fixture. */
export async function copyFixture(name: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'reconcile-e2e-'));
  const dir = join(root, 'manifests');
  await cp(join(REPO, name), dir, { recursive: true });
  return dir;
}

/** Contents of every file below a directory (recursively). */
export async function filesBelow(dir: string): Promise<Array<{ path: string; text: string }>> {
  if (!existsSync(dir)) return [];
  const out: Array<{ path: string; text: string }> = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, text: (await readFile(path)).toString('utf8') });
  }
  return out;
}

/** Asserts the exit code, showing the command's streams when it differs. */
export function expectExit(run: CliRun, code: number): void {
  if (run.code !== code) {
    const tail = (text: string) => text.split('\n').slice(-40).join('\n');
    throw new Error(`expected exit ${code}, got ${run.code}\n--- stdout\n${tail(run.stdout)}\n--- stderr\n${tail(run.stderr)}`);
  }
}

/**
 * `reconcile validate DIR` and a pass over DIR (with `env`) both exit 1 with output that matches
 * `expected` and holds none of `never`; the emulator's request log (`requests`) gains nothing.
 */
export async function expectCheckoutRefused(
  dir: string,
  expected: RegExp,
  options: { env: NodeJS.ProcessEnv; requests: () => readonly unknown[]; never: ReadonlyArray<string | RegExp> },
): Promise<CliRun[]> {
  const from = options.requests().length;
  const validate = await runCli(['validate', dir], {});
  expectExit(validate, 1);
  const pass = await runCli([dir], options.env);
  expectExit(pass, 1);
  for (const run of [validate, pass]) {
    const output = run.stdout + run.stderr;
    expect(output).toMatch(expected);
    for (const forbidden of options.never) {
      if (typeof forbidden === 'string') expect(output).not.toContain(forbidden);
      else expect(output).not.toMatch(forbidden);
    }
  }
  expect(options.requests().slice(from)).toEqual([]);
  return [validate, pass];
}
