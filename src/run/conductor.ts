// The conductor of a pass, from request to record: the one-shot command (`reconcile`,
// `reconcile apply FILE`) and the daemon (`reconcile --watch`) build requests and present what
// comes back; the state directory's lock, the API session, the passes, a one-shot apply's
// confirmed plan and rollout gates, the status record and the release are done here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ManifestError, ManifestSet } from '../manifests/types.js';
import { ManifestsTreeWriteError, assertOutsideManifests } from '../util/manifests-tree.js';
import { LOCK_FILE, StateLock, commandLine } from '../util/state-lock.js';
import type { PassResult } from '../reconcile/types.js';
import type { Logger } from '../util/logger.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Shard } from '../shards/shard-map.js';
import { systemClock, type Clock } from '../util/clock.js';
import { confirmedPlan } from './confirmed-plan.js';
import { waitForGate } from './gate.js';
import { passOnSession, type PassAsk, type PassContext, type PlanCheck } from './pass.js';
import { openHeldSession, type HeldSession, type SessionAnswer, type SessionOpeners } from './session.js';
import type { RunSettings } from './settings.js';
import { StatusRecorder } from './status-recorder.js';
import type { LockRequest } from './state-lock.js';

/** What a run of either kind is given: the settings it reads, the process's environment and log, how sessions open. */
export interface RunBase {
  settings: RunSettings;
  env: NodeJS.ProcessEnv;
  log: Logger;
  openers: SessionOpeners;
  /** The state directory of a real API (a shard's own directory for a shard); the sandbox has its own. */
  stateDir: string;
  shard?: Shard;
}

/** One pass of the command line. */
export interface OneShotRequest extends RunBase {
  manifests: ManifestSet;
  dryRun: boolean;
  /** The process's signal (SIGINT, SIGTERM). */
  signal: AbortSignal;
  /** `apply FILE`: the saved plan the pass must match; such a run applies only what its rollout's gates allow now. */
  savedPlan?: PlanCheck;
  /** Asked before an apply (on a terminal): the dry run's plan is shown, and applied only if `ask` says yes. */
  confirm?: { show(planned: PassResult): void; ask(): Promise<boolean> };
  /** Between a rollout's waves, the result so far (before the wait at its gate). */
  onWave?(result: PassResult): void;
  /** Said with a long forecast when the run has the one-shot default budget (no --rate-limit, no shard rate, not the sandbox). */
  defaultBudgetNote?: string;
}

export type OneShotOutcome =
  /** The lock was not taken (held by another process, or the state directory is in the manifests tree): logged. */
  | { kind: 'not-locked' }
  /** The plan shown for confirmation had nothing to apply. */
  | { kind: 'nothing-to-apply'; planned: PassResult }
  /** The plan shown was not confirmed: nothing was applied. */
  | { kind: 'declined' }
  /** `lockLost`: the lock was taken over during the run (the pass stopped; nothing was recorded). */
  | { kind: 'done'; result: PassResult; lockLost: boolean };

/**
 * A writer holds the state directory's lock, taken before the session (opening the client
 * writes the request window). A dry run takes none: it writes no record of the state
 * directory (the pass records nothing of its own, and a dry run's status is not recorded);
 * only the request window, whose writes share it with a running daemon under a lock of their
 * own (api/window-store.ts). With OAuth, the rotated refresh token is written there too: a
 * dry run then takes the lock as a writer does.
 */
function oneShotNeedsLock(request: OneShotRequest): boolean {
  return !request.dryRun || oauthInStateDir(request.env);
}

/** OAuth whose rotated refresh token is kept in the state directory (no MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE). */
function oauthInStateDir(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.MANAGEMENT_API_OAUTH_CLIENT_ID) && !env.MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE;
}

/** Lock, session, the pass (confirmed, then through a rollout's gates), the status record, release. */
export async function conductPass(request: OneShotRequest): Promise<OneShotOutcome> {
  const answer = await openHeldSession({ ...sessionBase(request), clock: systemClock, lock: oneShotNeedsLock(request) });
  if ('refused' in answer) return { kind: 'not-locked' };
  const { held } = answer;
  try {
    const context = passContext(request, held);
    // A fenced write that finds the lock taken marks it lost at once (before the heartbeat says so).
    const signal = AbortSignal.any([request.signal, held.lost, ...(held.lock ? [held.lock.signal] : [])]);
    const checks = await confirmFirst(request, context, signal);
    if ('outcome' in checks) return checks.outcome;
    const result = await applyThroughGates(request, context, signal, checks);
    // What an apply found and did, for `reconcile status` without a daemon (a dry run records nothing).
    if (!request.dryRun && !held.lockLost()) await recordOneShot(held.session.stateDir, result, request.log);
    return { kind: 'done', result, lockLost: held.lockLost() };
  } finally {
    await held.session.close();
    await held.release();
  }
}

function sessionBase(request: RunBase) {
  return {
    settings: request.settings,
    env: request.env,
    log: request.log,
    openers: request.openers,
    stateDir: request.stateDir,
    ...(request.shard ? { shard: request.shard } : {}),
  };
}

function passContext(request: OneShotRequest, held: HeldSession): PassContext {
  const { settings } = request;
  const defaultBudget = !settings.sandbox && settings.rateLimit === undefined && !request.shard?.rate;
  return {
    session: held.session,
    env: request.env,
    log: request.log,
    sandbox: settings.sandbox,
    allowEmpty: settings.allowEmpty,
    organizationWaitMs: settings.organizationWaitMs,
    ...(defaultBudget && request.defaultBudgetNote !== undefined ? { budgetNote: request.defaultBudgetNote } : {}),
  };
}

/**
 * On a terminal, a one-shot apply shows the plan and asks first; what is applied is then
 * exactly the plan shown (src/run/confirmed-plan.ts). Nothing to apply (in sync, or nothing
 * could be planned): the plan says why. A plan with changes is asked about even when part of
 * it failed or is blocked, as a direct apply would apply the rest.
 */
async function confirmFirst(request: OneShotRequest, context: PassContext, signal: AbortSignal): Promise<{ outcome: OneShotOutcome } | { first?: PlanCheck; waves?: PlanCheck }> {
  if (request.savedPlan) return { first: request.savedPlan };
  if (request.dryRun || !request.confirm) return {};
  const planned = await passOnSession(context, { manifests: request.manifests, dryRun: true, signal });
  request.confirm.show(planned);
  if (!planned.plan.hasChanges) return { outcome: { kind: 'nothing-to-apply', planned } };
  if (!(await request.confirm.ask())) return { outcome: { kind: 'declined' } };
  return confirmedPlan(request.manifests, planned);
}

/**
 * The pass, then a rollout's gates: a direct apply waits through each soak and applies the
 * next wave, until every wave is done, the rollout halts, or what is left waits for a window
 * or an approval (the daemon's work). `apply FILE` applies only what its gates allowed. A
 * halted rollout is a failed apply, whether the halting pass failed or its health check did.
 */
async function applyThroughGates(request: OneShotRequest, context: PassContext, signal: AbortSignal, checks: { first?: PlanCheck; waves?: PlanCheck }): Promise<PassResult> {
  const ask: PassAsk = { manifests: request.manifests, dryRun: request.dryRun, signal };
  let result = await passOnSession(context, { ...ask, ...(checks.first ? { savedPlan: checks.first } : {}) });
  let anyFailed = result.result !== 'success';
  if (!request.dryRun && !request.savedPlan) {
    const gateClock = context.session.rolloutClock ?? context.session.clock ?? systemClock;
    for (;;) {
      const next = result.rollout?.next;
      if (!next || next.reason === 'window' || result.rollout?.halted || signal.aborted) break;
      request.onWave?.(result);
      await waitForGate(result.rollout!, gateClock, request.log, signal);
      if (signal.aborted) break;
      result = await passOnSession(context, { ...ask, ...(checks.waves ? { savedPlan: checks.waves } : {}) });
      anyFailed ||= result.result !== 'success';
    }
  }
  if ((anyFailed || (!request.dryRun && result.rollout?.halted !== undefined)) && result.result === 'success') result = { ...result, result: 'failed' };
  return result;
}

/**
 * A one-shot apply of a checkout with manifest errors applies nothing: the status record then
 * says the newest revision is broken, naming each error, as the daemon's record does (and a
 * clean apply clears it). A state directory that does not exist is not created, one inside
 * the manifests tree is not written, and another process holding the lock (a daemon, which
 * records it itself) leaves the record to it; none of this is an error of the command, which
 * has failed already.
 */
export async function recordBrokenRevision(request: { stateDir: string; timeoutMs: number; log: Logger; revision?: string; errors: readonly ManifestError[] }): Promise<void> {
  try {
    assertOutsideManifests(join(request.stateDir, LOCK_FILE));
  } catch (error) {
    if (error instanceof ManifestsTreeWriteError) return;
    throw error;
  }
  // A state directory that does not exist yet has no earlier view to correct: nothing is created for a checkout that does not load.
  if (!existsSync(request.stateDir)) return;
  const taken = await StateLock.acquire({ dir: request.stateDir, clock: systemClock, timeoutMs: request.timeoutMs, command: commandLine() });
  if (!taken.acquired) return;
  try {
    const recorder = new StatusRecorder({ stateDir: request.stateDir, clock: systemClock, log: request.log });
    await recorder.load();
    recorder.recordManifests(request.revision, request.errors);
    await recorder.flush();
  } finally {
    await taken.lock.release();
  }
}

/** A one-shot apply folds its result into the status record before the lock is released. */
async function recordOneShot(stateDir: string, result: PassResult, log: Logger): Promise<void> {
  const recorder = new StatusRecorder({ stateDir, clock: systemClock, log });
  await recorder.load();
  recorder.recordPass(result, { newestCheckout: true });
  await recorder.flush();
}

/** The daemon's run: its lock is waited for, and its passes share one session. */
export interface DaemonRunRequest extends RunBase {
  clock: Clock;
  dryRun: boolean;
  /** Ends the wait for the lock (the process's signal). */
  signal: AbortSignal;
  onWaiting: NonNullable<LockRequest['wait']>['onWaiting'];
  onTaken: NonNullable<LockRequest['wait']>['onTaken'];
  onLost: NonNullable<LockRequest['onLost']>;
  telemetry: ApiTelemetry;
}

/** What the daemon asks of a pass (src/daemon/controller.ts's `runPass` option). */
export type DaemonPassAsk = Omit<PassAsk, 'dryRun' | 'savedPlan'>;

/** An open daemon run: its session under the lock, the conductor of each pass, the status record's writer. */
export interface DaemonRun {
  held: HeldSession;
  pass(ask: DaemonPassAsk): Promise<PassResult>;
  recorder: StatusRecorder;
}

/**
 * Waits for the lock and opens the session (nothing is left open when it is refused or
 * throws); each pass then runs on that session at the priority the daemon gives it, stopped
 * when the lock is lost.
 */
export async function openDaemonRun(request: DaemonRunRequest): Promise<{ run: DaemonRun } | Exclude<SessionAnswer, { held: HeldSession }>> {
  const answer = await openHeldSession({
    ...sessionBase(request),
    clock: request.clock,
    lock: true,
    wait: { signal: request.signal, ...(request.onWaiting ? { onWaiting: request.onWaiting } : {}), ...(request.onTaken ? { onTaken: request.onTaken } : {}) },
    onLost: request.onLost,
    telemetry: request.telemetry,
    clientClock: request.clock,
  });
  if ('refused' in answer) return answer;
  const { held } = answer;
  const context: PassContext = {
    session: held.session,
    env: request.env,
    log: request.log,
    sandbox: request.settings.sandbox,
    allowEmpty: request.settings.allowEmpty,
    organizationWaitMs: request.settings.organizationWaitMs,
    // The sandbox's clock runs waits at the emulator's lifecycle speed.
    clock: request.clock,
  };
  const recorder = new StatusRecorder({ stateDir: held.session.stateDir, clock: request.clock, log: request.log });
  return {
    run: {
      held,
      recorder,
      pass: (ask) => passOnSession(context, { ...ask, dryRun: request.dryRun, signal: AbortSignal.any([ask.signal, held.lost]) }),
    },
  };
}
