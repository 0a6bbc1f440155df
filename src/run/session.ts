// The API session of a pass, with the state directory's lock: the sandbox (the emulator
// in-process, whose state directory is its own, so it is locked once the session is open) or a
// real API (its state directory, a shard's own, is locked first: opening the client writes the
// request window), with the shard's credentials and budget when the process has a shard.
import type { ApiClient } from '../api/client.js';
import type { AuthOptionValues } from '../api/auth.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Logger } from '../util/logger.js';
import type { Clock } from '../util/clock.js';
import type { RateSpec } from '../util/rate.js';
import type { StateLock } from '../util/state-lock.js';
import { shardAuthInputs } from '../shards/credentials.js';
import type { Shard } from '../shards/shard-map.js';
import type { RunSettings } from './settings.js';
import { takeStateLock, type LockRequest } from './state-lock.js';

/** An open API session: what a pass talks to and where it keeps its state. */
export interface PassSession {
  client: ApiClient;
  baseUrl: string;
  stateDir: string;
  rate: RateSpec;
  /** The sandbox's: real time, waits at the emulator's lifecycle speed. */
  clock?: Clock;
  /** The sandbox's: a rollout's soaks and windows at the emulator's lifecycle speed. */
  rolloutClock?: Clock;
  /** Closes the client (persisting the request window), then the sandbox. */
  close(): Promise<void>;
}

/** A shard's own credentials, state directory and budget, in place of the process-wide ones. */
export interface ShardSessionInputs {
  auth: { values: AuthOptionValues; env: NodeJS.ProcessEnv };
  stateDir: string;
  rate?: RateSpec;
}

/** How sessions are opened (the command's: src/cli/api-session.ts and src/cli/sandbox-session.ts). */
export interface SessionOpeners {
  sandbox(options: { log: Logger; telemetry?: ApiTelemetry }): Promise<PassSession>;
  api(options: { log: Logger; telemetry?: ApiTelemetry; clock?: Clock; shard?: ShardSessionInputs }): Promise<PassSession>;
}

export interface SessionRequest {
  settings: RunSettings;
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock: Clock;
  openers: SessionOpeners;
  /** The state directory of a real API (a shard's own directory for a shard); the sandbox has its own. */
  stateDir: string;
  shard?: Shard;
  /** Whether a real API's run takes the lock (a dry run may not: see the one-shot conductor). The sandbox's always does. */
  lock: boolean;
  /** Wait for the lock (the daemon) instead of trying once; and what to hear of it. */
  wait?: LockRequest['wait'];
  onLost?: LockRequest['onLost'];
  /** The daemon's metrics hear of every request. */
  telemetry?: ApiTelemetry;
  /** The client's clock (the daemon's). */
  clientClock?: Clock;
}

/** A session open under the lock (or, for a dry run that needs none, without it). */
export interface HeldSession {
  session: PassSession;
  lock?: StateLock;
  /** Aborts when the lock is taken over by another process. */
  lost: AbortSignal;
  /** Whether the lock is lost: taken over, or found taken by a fenced write (before the heartbeat says so). */
  lockLost(): boolean;
  /** Releases the lock; after `session.close()`, whose request window is persisted under it. */
  release(): Promise<void>;
}

export type SessionAnswer = { held: HeldSession } | { refused: 'inside-manifests' | 'held' | 'ended'; problem: string };

/** Opens the session and takes the lock in the order the API's kind needs; nothing is left open when it is refused or throws. */
export async function openHeldSession(request: SessionRequest): Promise<SessionAnswer> {
  const { log } = request;
  const lockAt = (stateDir: string) =>
    takeStateLock({
      stateDir,
      timeoutMs: request.settings.lockTimeoutMs,
      clock: request.clock,
      log,
      ...(request.wait ? { wait: request.wait } : {}),
      ...(request.onLost ? { onLost: request.onLost } : {}),
    });
  if (request.settings.sandbox) {
    const session = await request.openers.sandbox({ log, ...(request.telemetry ? { telemetry: request.telemetry } : {}) });
    try {
      const answer = await lockAt(session.stateDir);
      if ('refused' in answer) {
        await session.close();
        return answer;
      }
      return { held: held(session, answer) };
    } catch (error) {
      await session.close();
      throw error;
    }
  }
  const answer = request.lock ? await lockAt(request.stateDir) : undefined;
  if (answer && 'refused' in answer) return answer;
  try {
    const shard = request.shard;
    const session = await request.openers.api({
      log,
      ...(request.telemetry ? { telemetry: request.telemetry } : {}),
      ...(request.clientClock ? { clock: request.clientClock } : {}),
      ...(shard ? { shard: { auth: shardAuthInputs(shard, request.env, request.settings.apiUrl), stateDir: request.stateDir, ...(shard.rate ? { rate: shard.rate } : {}) } } : {}),
    });
    return { held: held(session, answer) };
  } catch (error) {
    await answer?.lock.release();
    throw error;
  }
}

function held(session: PassSession, taken: { lock: StateLock; lost: AbortSignal } | undefined): HeldSession {
  const lost = taken?.lost ?? new AbortController().signal;
  return {
    session,
    ...(taken ? { lock: taken.lock } : {}),
    lost,
    lockLost: () => lost.aborted || (taken?.lock.signal.aborted ?? false),
    release: async () => {
      await taken?.lock.release();
    },
  };
}
