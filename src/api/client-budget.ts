// The client's request budget and its persisted window: the budgets of the rate model, started
// from the window that earlier runs left in the state directory, the writer that keeps it there,
// and what the client says while requests wait for it.
import { WaitProgress } from '../util/progress.js';
import { maxHeaderWaitMs, type RequestBudget } from './budget.js';
import type { ClientSettings } from './client-settings.js';
import { BudgetSet } from './rate-model.js';
import { loadWindow, WindowWriter } from './window-store.js';

export interface ClientBudget {
  readonly budgets: BudgetSet;
  /** The user's budget: metrics and the persisted window follow it (the only one in the `user` model). */
  readonly user: RequestBudget;
  /** The window loaded from the state directory, made safe to start from (none without a state directory). */
  readonly initial: { sends: number[]; blockedUntil: number } | undefined;
  /** Reports the user's budget, as it stands now, to the telemetry. */
  report(): void;
}

/** The budgets of the rate model at the settings' rate, continuing the window kept in the state directory. */
export async function createBudget(settings: ClientSettings): Promise<ClientBudget> {
  const { clock, rate, stateDir } = settings;
  const loaded = stateDir ? await loadWindow(stateDir) : undefined;
  // Claimed sends lie a little in the future, and stay there; times further ahead than a window
  // (a clock that has since stepped back) are taken as now, and a block as at most the longest
  // wait a header may impose: a skewed or tampered file must delay a start, never stall it for good.
  const startedAt = clock.now();
  const initial = loaded && {
    sends: loaded.sends.map((t) => (t > startedAt + rate.windowMs ? startedAt : t)),
    blockedUntil: Math.min(loaded.blockedUntil, startedAt + maxHeaderWaitMs(rate.windowMs)),
  };
  const budgets = new BudgetSet({ model: settings.rateModel, rate, random: settings.random, ...(initial ? { initial } : {}) });
  const user = budgets.user;
  return {
    budgets,
    user,
    initial,
    report() {
      const snapshot = user.snapshot(clock.now());
      settings.telemetry.budget(snapshot.remaining, snapshot.effectiveLimit);
    },
  };
}

/** The writer of the user's window to the state directory (none without one). */
export function createWindowStore(settings: ClientSettings, budget: ClientBudget): WindowWriter | undefined {
  const { clock, rate, stateDir, log } = settings;
  if (!stateDir) return undefined;
  return new WindowWriter({
    stateDir,
    clock,
    debounceMs: Math.min(1_000, rate.windowMs / 20),
    // One fsync per tenth of the budget; a restart after a crash counts at most that many
    // sends that never happened, at most a second ahead (a twentieth of a window, longer
    // while the claims go mostly unused, never more than a window).
    claimCount: Math.max(1, Math.ceil(rate.limit / 10)),
    claimMs: Math.min(1_000, rate.windowMs / 20),
    maxClaimMs: Math.min(1_000, rate.windowMs),
    snapshot: () => ({ version: 1, windowMs: rate.windowMs, ...budget.user.persistable(clock.now()) }),
    ...(budget.initial ? { loaded: budget.initial.sends } : {}),
    onError: (error) => log.error({ err: error }, 'could not persist the request window'),
  });
}

/** What the head of the queue waits for, when it waits for its budget. */
type Stall = { key: string; waitMs: number; queued: number };

/**
 * Requests waiting for the budget or out a 429 block are silent work: the progress says so,
 * then again every few seconds of clock time while they still wait (nothing once `closed()`).
 */
export function createWaitProgress(settings: ClientSettings, budget: ClientBudget, stall: () => Stall | undefined, closed: () => boolean): WaitProgress {
  const { clock, log, rate } = settings;
  return new WaitProgress(clock, () => {
    if (closed()) return false;
    const stalled = stall();
    if (!stalled) return false;
    const blockedMs = budget.budgets.get(stalled.key).blockedFor(clock.now());
    const seconds = (ms: number) => Math.ceil(ms / 1000);
    if (blockedMs > 0) {
      log.info(
        { wait: 'rate-limit', queued: stalled.queued, remainingS: seconds(blockedMs) },
        `rate limited (429): sending again in ${seconds(blockedMs)}s, ${stalled.queued} ${stalled.queued === 1 ? 'request' : 'requests'} waiting`,
      );
    } else {
      // Why: the window's sends, some of them perhaps by earlier runs that kept it in the state directory.
      const now = clock.now();
      const earlier = (budget.initial?.sends ?? []).filter((t) => t > now - rate.windowMs && t <= now).length;
      const why = earlier > 0 ? ` (${earlier} of the requests of the last ${rate.windowMs / 1000}s were sent by earlier runs with this state directory, whose request window this run continues)` : '';
      log.info(
        { wait: 'budget', queued: stalled.queued, nextInS: seconds(stalled.waitMs), limit: rate.limit, windowS: rate.windowMs / 1000, earlierRuns: earlier },
        `waiting for the request budget (${rate.limit} per ${rate.windowMs / 1000}s): ${stalled.queued} queued, next slot in ${seconds(stalled.waitMs)}s${why}`,
      );
    }
    return true;
  });
}
