// Test harness for passes against the in-process emulator over real HTTP: the emulator's
// lifecycle and the pass's waits share one ManualClock, which `runPassDriven` advances while
// the pass waits (no real sleeping for lifecycles).
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { staticToken } from '../../../src/api/auth.js';
import { createClient, type ApiClient } from '../../../src/api/client.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../../src/emulator/index.js';
import { loadManifests } from '../../../src/reconcile/load-manifests.js';
import { runPass, type PassOptions } from '../../../src/reconcile/engine.js';
import type { PassResult } from '../../../src/reconcile/types.js';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger } from '../../../src/util/logger.js';

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  clock: ManualClock;
  dir: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  write(files: Record<string, string>): Promise<void>;
  remove(file: string): Promise<void>;
  pass(options?: Partial<PassOptions>): Promise<PassResult>;
  close(): Promise<void>;
}

export async function startHarness(env: NodeJS.ProcessEnv = {}, emulatorOptions: EmulatorOptions = {}): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'reconcile-engine-'));
  const dir = join(root, 'manifests');
  const stateDir = join(root, 'state');
  await mkdir(dir, { recursive: true });
  const clock = new ManualClock(Date.now());
  const emulator = await startEmulator({ port: 0, clock, rateLimit: { limit: 100_000, windowMs: 60_000 }, ...emulatorOptions });
  const client = await createClient({
    baseUrl: emulator.url,
    auth: staticToken(emulator.token),
    rate: { limit: 100_000, windowMs: 60_000 },
    stateDir,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 },
    // The first query of a project boots its database (PGlite): seconds on a loaded machine.
    timeouts: { headersMs: 30_000, bodyMs: 30_000 },
  });
  const harness: Harness = {
    emulator, client, clock, dir, stateDir, env,
    async write(files) {
      for (const [name, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, name)), { recursive: true });
        await writeFile(join(dir, name), text);
      }
    },
    async remove(file) {
      await rm(join(dir, file), { force: true });
    },
    async pass(options = {}) {
      const manifests = await loadManifests(dir);
      return runPassDriven(clock, {
        manifests, client, stateDir, dryRun: false, env, log: silentLogger, clock,
        wait: { initialDelayMs: 1000, maxDelayMs: 5000 },
        ...options,
      });
    },
    async close() {
      await client.close();
      await emulator.close();
      await rm(root, { recursive: true, force: true });
    },
  };
  return harness;
}

/**
 * Runs a pass while moving the shared clock on, so lifecycles progress and waits end. The
 * clock jumps only to the pass's next timer, and only once the pass is waiting on it: while a
 * request is in flight, time stands still, however slow the machine is.
 */
export async function runPassDriven(clock: ManualClock, options: PassOptions): Promise<PassResult> {
  let done = false;
  const pass = runPass(options).finally(() => {
    done = true;
  });
  while (!done) {
    const next = clock.nextAt();
    if (next === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    // Let any I/O that is about to settle do so before time moves.
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (clock.nextAt() === next) await clock.advance(Math.max(0, next - clock.now()));
  }
  return pass;
}

export const ORG = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec: {}
`;

export function project(name: string, extra = ''): string {
  return `apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
spec:
  organization: acme
  region: eu-west-1
  db_pass:
    valueFrom:
      env: DB_PASS
${extra}`;
}
