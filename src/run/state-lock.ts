// The state directory's writer lock, for a one-shot pass (tried once: a holder whose heartbeat
// is fresh stops the run) and for the daemon (waited for, until the holder goes or its
// heartbeat is older than --lock-timeout). Never taken inside the manifests tree.
import { join } from 'node:path';
import type { Logger } from '../util/logger.js';
import type { Clock } from '../util/clock.js';
import { ManifestsTreeWriteError, assertOutsideManifests } from '../util/manifests-tree.js';
import { LOCK_FILE, StateLock, StateLockHeldError, commandLine, describeHolder, waitForStateLock, type LockHolder } from '../util/state-lock.js';

export interface LockRequest {
  stateDir: string;
  timeoutMs: number;
  clock: Clock;
  log: Logger;
  /**
   * Wait for the lock (the daemon), until `signal` aborts; `onWaiting` hears why this process
   * may not write yet, `onTaken` that it may. Absent: try once (a one-shot run).
   */
  wait?: { signal: AbortSignal; onWaiting?(problem: string): void; onTaken?(): void };
  /** The lock was taken over by another process (after the log line, before `lost` aborts). */
  onLost?(problem: string): void;
}

export type LockAnswer =
  /** `lost` aborts when another process takes the lock over. */
  | { lock: StateLock; lost: AbortSignal }
  /** `inside-manifests`: refused before any attempt; `held`: another process holds it; `ended`: the wait's signal aborted. */
  | { refused: 'inside-manifests' | 'held' | 'ended'; problem: string };

/** Takes the lock of `request.stateDir`, logging as the run's kind does (an error for a one-shot run, fatal for the daemon). */
export async function takeStateLock(request: LockRequest): Promise<LockAnswer> {
  const { stateDir, log, clock } = request;
  try {
    assertOutsideManifests(join(stateDir, LOCK_FILE));
  } catch (error) {
    if (!(error instanceof ManifestsTreeWriteError)) throw error;
    const problem = `the state directory ${stateDir} lies inside the manifests tree ${error.root}`;
    const message = `${problem}: choose --state-dir outside it, or a dot-directory such as .reconcile`;
    if (request.wait) log.fatal({ stateDir }, message);
    else log.error({ stateDir }, message);
    return { refused: 'inside-manifests', problem };
  }
  const lost = new AbortController();
  const onLost = (holder: LockHolder | undefined) => {
    if (request.wait) {
      request.onLost?.(`the state lock of ${stateDir} was taken over by another process`);
      log.error({ stateDir, holder }, 'the state lock was taken over by another process: stopping (restart to wait for it again)');
    } else {
      log.error({ holder }, `the state lock of ${stateDir} was taken over by another process: stopping this pass`);
      request.onLost?.(`the state lock of ${stateDir} was taken over by another process`);
    }
    lost.abort(new Error('the state lock was lost'));
  };
  const options = { dir: stateDir, clock, timeoutMs: request.timeoutMs, command: commandLine(), onLost };
  if (!request.wait) {
    const result = await StateLock.acquire(options);
    if (!result.acquired) {
      const problem = new StateLockHeldError(stateDir, result.holder, clock.now()).message;
      log.error({ stateDir, holder: result.holder }, problem);
      return { refused: 'held', problem };
    }
    if (result.tookOver) log.warn({ stateDir, holder: result.tookOver, generation: result.lock.generation }, `took over the stale state lock of ${describeHolder(result.tookOver, clock.now())}`);
    return { lock: result.lock, lost: lost.signal };
  }
  return waitForLock(request, request.wait, options, lost);
}

/** The daemon's wait: a line per holder it waits for, the takeover with its reason, then the lock held. */
async function waitForLock(
  request: LockRequest,
  wait: NonNullable<LockRequest['wait']>,
  options: Parameters<typeof StateLock.acquire>[0],
  lost: AbortController,
): Promise<LockAnswer> {
  const { stateDir, log, clock, timeoutMs } = request;
  let reported: string | undefined;
  const taken = await waitForStateLock({
    ...options,
    signal: wait.signal,
    onWaiting: (holder) => {
      const held = new StateLockHeldError(stateDir, holder, clock.now());
      wait.onWaiting?.(held.message);
      // Once per holder: the wait retries every heartbeat interval.
      if (reported !== holder.id) log.warn({ stateDir, holder }, `waiting: ${held.message}; taking over when its heartbeat is older than ${timeoutMs / 1000} s`);
      reported = holder.id;
    },
  });
  if (!taken) return { refused: 'ended', problem: 'the wait for the state directory lock ended' };
  wait.onTaken?.();
  if (taken.tookOver) {
    const age = clock.now() - taken.tookOver.heartbeatAt;
    // `holderGone`: its process no longer exists (taken at once), else its heartbeat was older than the timeout.
    const gone = age <= timeoutMs;
    log.warn(
      { stateDir, holder: taken.tookOver, heartbeatAgeMs: age, lockTimeoutMs: timeoutMs, holderGone: gone, generation: taken.lock.generation },
      `took over the stale state lock of ${describeHolder(taken.tookOver, clock.now())}${gone ? ': its process is gone' : ''}`,
    );
  }
  log.info({ stateDir, generation: taken.lock.generation }, 'holding the state directory lock');
  return { lock: taken.lock, lost: lost.signal };
}
