// `--sandbox`: the emulator in-process, with a scaled rate window and a fast lifecycle so the
// quick start converges in seconds. The emulator's own limit is scaled the same way as the
// client's budget (60/1s against 50/1s), so the ratio the real service imposes is kept.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staticToken } from '../api/auth.js';
import { createClient } from '../api/client.js';
import type { Logger } from '../util/logger.js';
import type { RateSpec } from '../util/rate.js';
import { scaledClock, systemClock, type Clock } from '../util/clock.js';
import type { ApiSession } from './api-session.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Settings } from './settings.js';

/** The emulator's limit in the sandbox: the service's 60 per minute, on a one-second window. */
const SANDBOX_EMULATOR_RATE: RateSpec = { limit: 60, windowMs: 1000 };
/** The client's budget in the sandbox unless --rate-limit (or RECONCILE_RATE_LIMIT) says otherwise. */
const SANDBOX_CLIENT_RATE: RateSpec = { limit: 50, windowMs: 1000 };
/** Lifecycle speed: a two-minute project creation takes 0.4 s. */
const SANDBOX_SPEED = 300;

interface SandboxSession extends ApiSession {
  /** Real time, but waits run at the emulator's lifecycle speed (timestamps stay true). */
  clock: Clock;
  /** A rollout's soaks and maintenance windows run at the emulator's lifecycle speed too. */
  rolloutClock: Clock;
}

/** The settings a sandbox session reads. */
export type SandboxSessionSettings = Pick<Settings, 'rateLimit' | 'rateModel' | 'httpTimeoutMs' | 'seed' | 'stateDirGiven' | 'stateDir'>;

export async function openSandboxSession(settings: SandboxSessionSettings, log?: Logger, options: { telemetry?: ApiTelemetry } = {}): Promise<SandboxSession> {
  const rate = settings.rateLimit ?? SANDBOX_CLIENT_RATE;
  const rateModel = settings.rateModel;
  const timeoutMs = settings.httpTimeoutMs;
  // Resources are acquired one at a time, each release set up before the next step can fail,
  // so a bad seed or a failed start leaves neither a listening emulator nor a temporary directory.
  const { startEmulator } = await import('../emulator/index.js');
  const seed = settings.seed;
  const emulator = await startEmulator({
    host: '127.0.0.1',
    port: 0,
    rateLimit: SANDBOX_EMULATOR_RATE,
    rateModel,
    speed: SANDBOX_SPEED,
    ...(seed ? { seed } : {}),
  });
  // The sandbox's fleet lives only as long as this process: its state must not mix with a real one.
  const explicitState = settings.stateDirGiven;
  let stateDir: string | undefined;
  const cleanup = async () => {
    try {
      await emulator.close();
    } finally {
      if (!explicitState && stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
    }
  };
  let client;
  try {
    stateDir = explicitState ? settings.stateDir : await mkdtemp(join(tmpdir(), 'reconcile-sandbox-'));
    log?.info({ url: emulator.url, rate: `${rate.limit}/${rate.windowMs}ms`, rateModel, speed: SANDBOX_SPEED }, 'sandbox: emulator started in-process');
    client = await createClient({
      baseUrl: emulator.url,
      auth: staticToken(emulator.token),
      rate,
      rateModel,
      stateDir,
      timeouts: { headersMs: timeoutMs, bodyMs: timeoutMs },
      ...(log ? { log } : {}),
      // The daemon's metrics (`--sandbox --watch`).
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  return {
    client,
    baseUrl: emulator.url,
    stateDir,
    rate,
    rateModel,
    sandbox: emulator,
    rolloutClock: scaledClock(SANDBOX_SPEED),
    clock: {
      now: () => systemClock.now(),
      sleep: (ms, signal) => systemClock.sleep(ms / SANDBOX_SPEED, signal),
      schedule: (fn, ms) => systemClock.schedule(fn, ms / SANDBOX_SPEED),
    },
    async close() {
      try {
        await client.close();
      } finally {
        await cleanup();
      }
    },
  };
}
