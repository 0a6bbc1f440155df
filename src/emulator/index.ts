// The Management API emulator: every operation of schemas/api/openapi.json over node:http,
// one consistent state, lifecycles on an injectable clock, the per-user rate limit, OAuth2,
// faults and seeds. `reconcile emulator` and the reconciler's `--sandbox` start it.
import { Emulator, resolveSeed, type EmulatorOptions } from './emulator.js';
import type { FaultConfig } from './faults.js';
import type { RequestLogEntry } from './request-log.js';
import type { SeedInput } from './seed.js';
import type { EmulatorRateModel } from './rate-limiter.js';
import type { RateSpec } from '../util/rate.js';
import type { DatabaseStats } from './databases.js';

export type { EmulatorOptions } from './emulator.js';
export type { DatabaseStats } from './databases.js';
export type { LifecycleDurations } from './durations.js';
export { DEFAULT_DURATIONS } from './durations.js';
export type { FaultConfig, FaultRule } from './faults.js';
export type { RequestLogEntry } from './request-log.js';
export type { EmulatorRateModel } from './rate-limiter.js';
export type { SeedInput, SeedUser, SeedOrganization, SeedProject, SeedSnippet, SeedOAuthApp } from './seed.js';
export { SeedError, loadSeedFile, validateSeed } from './seed.js';
export { DEFAULT_RATE_LIMIT, DEFAULT_BODY_LIMIT, DEFAULT_DEPLOY_BODY_LIMIT } from './emulator.js';

export interface RunningEmulator {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The default user's token. */
  token: string;
  /** The default OAuth application (client id and secret) for OAuth flows. */
  oauthClient: { clientId: string; clientSecret: string };
  close(): Promise<void>;
  /** Same as GET /_emulator/requests. */
  requests(since?: number): RequestLogEntry[];
  reset(): void;
  seed(seed: SeedInput): void;
  setFaults(faults: FaultConfig): void;
  /** Replaces the rate limit (and its model), with empty counts: benchmarks converge unlimited, then measure. */
  setRateLimit(rate: RateSpec, model?: EmulatorRateModel): void;
  /** Emulator (lifecycle) time. */
  now(): number;
  /** Moves the lifecycle clock forward (on top of whatever clock drives it). */
  advanceClock(ms: number): void;
  /** Moves the lifecycle clock through every pending transition (creates, pauses, upgrades...). */
  advanceUntilIdle(): void;
  /** The project databases: open now, saved (evicted after a write), opened and evicted so far. */
  databaseStats(): DatabaseStats;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const seed = await resolveSeed(options.seed);
  const emulator = new Emulator(options, seed);
  const url = await emulator.listen(options.host ?? '127.0.0.1', options.port ?? 8787);
  const firstApp = () => [...emulator.state.oauthApps.values()][0]!;
  return {
    url,
    get token() {
      return emulator.token;
    },
    get oauthClient() {
      const app = firstApp();
      return { clientId: app.clientId, clientSecret: app.clientSecret };
    },
    close: () => emulator.close(),
    requests: (since) => emulator.requests(since),
    reset: () => emulator.reset(),
    seed: (seed) => emulator.seed(seed),
    setFaults: (faults) => emulator.setFaults(faults),
    setRateLimit: (rate, model) => {
      emulator.limiter.reset(rate, model);
      emulator.routeLimiter.reset(rate.windowMs);
    },
    now: () => emulator.now(),
    advanceClock: (ms) => emulator.advanceClock(ms),
    advanceUntilIdle: () => emulator.advanceUntilIdle(),
    databaseStats: () => ({ ...emulator.databases.stats }),
  };
}
