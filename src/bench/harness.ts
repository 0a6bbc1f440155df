// A fleet on the emulator, reconciled through the real engine and client over loopback HTTP.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { createClient, type ApiClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { DEFAULT_TIMEOUTS, httpTransport, type Transport } from '../api/transport.js';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass } from '../reconcile/engine.js';
import type { ManifestSet } from '../manifests/types.js';
import type { PassResult } from '../reconcile/types.js';
import type { RateSpec } from '../util/rate.js';
import type { RateModel } from '../api/rate-model.js';
import { silentLogger } from '../util/logger.js';
import { generateFleet, type FleetShape, type GeneratedFleet } from './fleet.js';

export interface FleetHarness {
  emulator: RunningEmulator;
  client: ApiClient;
  fleet: GeneratedFleet;
  manifests: ManifestSet;
  stateDir: string;
  /** When the client sent each request (ms since the epoch), retries included. */
  sendTimes: number[];
  /** The method of each request sent, in send order (parallel to `sendTimes`). */
  sendMethods: string[];
  pass(options?: { dryRun?: boolean; priority?: 'write' | 'drift'; client?: ApiClient; signal?: AbortSignal }): Promise<PassResult>;
  /** Project refs by manifest name, from the project list. */
  refs(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

interface HarnessOptions {
  shape: FleetShape;
  emulatorRate: RateSpec;
  clientRate: RateSpec;
  /** Lifecycle speed of the emulator (default 2000: a two-minute create takes 60 ms). */
  speed?: number;
  concurrency?: number;
  /** How the emulator counts and the client budgets (default `user`). */
  rateModel?: RateModel;
}

/** Opens the harness in a temporary directory of its own, which `close()` removes. */
export async function openFleetHarness(options: HarnessOptions): Promise<FleetHarness> {
  const root = await mkdtemp(join(tmpdir(), 'reconcile-bench-'));
  try {
    return await openIn(root, options);
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

async function openIn(root: string, options: HarnessOptions): Promise<FleetHarness> {
  const fleet = await generateFleet(join(root, 'manifests'), options.shape);
  const manifests = await loadManifests(fleet.dir);
  if (manifests.errors.length) {
    throw new Error(`generated fleet does not validate: ${manifests.errors.slice(0, 3).map((e) => `${e.file}:${e.line} ${e.path} ${e.message}`).join('; ')}`);
  }
  const rateModel = options.rateModel ?? 'user';
  const emulator = await startEmulator({ port: 0, rateLimit: options.emulatorRate, rateModel, speed: options.speed ?? 2000 });
  const stateDir = join(root, 'state');
  const sendTimes: number[] = [];
  const sendMethods: string[] = [];
  const concurrency = options.concurrency ?? 4;
  const inner = httpTransport({ origin: new URL(emulator.url).origin, timeouts: DEFAULT_TIMEOUTS, connections: concurrency + 1 });
  const transport: Transport = {
    send(request) {
      sendTimes.push(Date.now());
      sendMethods.push(request.method);
      return inner.send(request);
    },
    close: () => inner.close(),
  };
  const client = await createClient({
    baseUrl: emulator.url,
    auth: staticToken(emulator.token),
    rate: options.clientRate,
    rateModel,
    stateDir,
    concurrency,
    transport,
  });
  const env = { ...fleet.env };
  return {
    emulator,
    client,
    fleet,
    manifests,
    stateDir,
    sendTimes,
    sendMethods,
    pass: (o = {}) =>
      runPass({
        manifests,
        client: o.client ?? client,
        stateDir,
        dryRun: o.dryRun ?? false,
        env,
        log: silentLogger,
        ...(o.priority ? { priority: o.priority } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        wait: { initialDelayMs: 10, maxDelayMs: 50 },
      }),
    async refs() {
      const projects = await client.api.listAllProjects();
      return new Map(projects.map((p) => [p.name, (p as { ref?: string; id: string }).ref ?? p.id]));
    },
    async close() {
      await client.close();
      await emulator.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Applies until a dry run shows no changes (at most `maxPasses` applies). */
export async function converge(harness: FleetHarness, maxPasses = 4): Promise<{ passes: number }> {
  for (let passes = 1; passes <= maxPasses; passes++) {
    const applied = await harness.pass();
    if (applied.result !== 'success') {
      const failed = applied.outcomes.filter((o) => o.result === 'failed').slice(0, 3);
      throw new Error(`apply pass failed: ${JSON.stringify(failed)}`);
    }
    const check = await harness.pass({ dryRun: true });
    if (!check.plan.hasChanges) return { passes };
  }
  throw new Error(`the fleet did not converge in ${maxPasses} passes`);
}
