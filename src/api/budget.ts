import type { RateSpec } from '../util/rate.js';
import type { RateLimitHeaders } from './rate-limit-headers.js';
import { SlidingWindow, type WindowSlot } from './sliding-window.js';

export type { WindowSlot } from './sliding-window.js';

/**
 * The longest wait an answer's headers may impose on a budget of this window: ten windows, and
 * never less than two minutes (two of the service's one-minute blocks, for a client whose own
 * window is shorter than the service's). The service blocks for one window after a 429;
 * anything far longer is a header to distrust (a proxy's garbage, `1e300`), and obeying it
 * would stall the client, and every restart that reads the persisted block, for good.
 */
export function maxHeaderWaitMs(windowMs: number): number {
  return Math.max(10 * windowMs, 120_000);
}

export interface BudgetOptions {
  rate: RateSpec;
  /** Send (or answer) times of the last window and a block still running, as persisted by a previous run. */
  initial?: { sends?: readonly number[]; blockedUntil?: number };
  /** Random source for the jitter added to a 429 block (tests pass a seeded one). */
  random?: () => number;
}

interface BudgetSnapshot {
  limit: number;
  effectiveLimit: number;
  remaining: number;
  windowMs: number;
}

/** What a 429 did to the budget. */
interface RateLimitOutcome {
  /** How long nothing may be sent, jitter included. */
  waitMs: number;
  /** True when the service had not told us the user's budget was spent: someone else spends it. */
  unexpected: boolean;
  effectiveLimit: number;
}

// The share of the window added at most as jitter after a block, so that several clients of
// one user do not all resume at the same instant.
const JITTER_SHARE = 0.05;

/**
 * The request budget: decides when the next send may go. Three gates, all of which must be
 * open: our own sliding window at the effective limit, a block announced by a 429, and what
 * the service last said remains for the user. Every send (retries included) holds its place
 * in the sliding window from its send until a window after its answer, because the service
 * counts it at arrival, somewhere in between: so no window of the service's can hold more than
 * the limit, whatever the latency.
 */
export class RequestBudget {
  #limit: number;
  readonly windowMs: number;
  readonly maxWaitMs: number;
  readonly #window: SlidingWindow;
  readonly #random: () => number;
  #blockedUntil = 0;
  // Lowered after an unexpected 429; climbs back by #recoveryStep per window from #reducedAt.
  #reducedLimit: number;
  #reducedAt = 0;
  #recoveryStep: number;
  // The service's own count: how many more sends it allows until `until`.
  #server: { allowance: number; until: number } | undefined;
  // The user's limit as the service last announced it (`X-RateLimit-Limit`).
  #serverLimit: number | undefined;

  constructor(options: BudgetOptions) {
    const { limit, windowMs } = options.rate;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new TypeError(`Expected \`rate.limit\` to be a whole number >= 1, got \`${limit}\` (${typeof limit})`);
    }
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new TypeError(`Expected \`rate.windowMs\` to be a finite number > 0, got \`${windowMs}\` (${typeof windowMs})`);
    }
    this.#limit = limit;
    this.windowMs = windowMs;
    this.maxWaitMs = maxHeaderWaitMs(windowMs);
    // A send is counted a moment before its bytes leave (and clocks tick in whole milliseconds):
    // a small guard keeps the real sends, not only the counted ones, within the window.
    this.#window = new SlidingWindow(windowMs, options.initial?.sends ?? [], Math.min(25, windowMs / 100));
    this.#blockedUntil = options.initial?.blockedUntil ?? 0;
    this.#random = options.random ?? Math.random;
    this.#reducedLimit = limit;
    this.#recoveryStep = Math.max(1, Math.ceil(limit / 10));
  }

  get limit(): number {
    return this.#limit;
  }

  /** A new limit (learned from the service): a lowered effective limit stays lowered, but not above it. */
  retarget(limit: number): void {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit === this.#limit) return;
    const reduced = this.#reducedLimit < this.#limit;
    this.#limit = limit;
    this.#reducedLimit = reduced ? Math.min(this.#reducedLimit, limit) : limit;
    this.#recoveryStep = Math.max(1, Math.ceil(limit / 10));
  }

  /** True when nothing of this budget is held at `now`: no place in the window, no block. */
  idle(now: number): boolean {
    return this.#window.count(now) === 0 && this.#blockedUntil <= now && this.#reducedLimit >= this.#limit;
  }

  effectiveLimit(now: number): number {
    if (this.#reducedLimit >= this.limit || now < this.#reducedAt) return this.#reducedLimit;
    const steps = Math.floor((now - this.#reducedAt) / this.windowMs);
    return Math.min(this.limit, this.#reducedLimit + steps * this.#recoveryStep);
  }

  /** Milliseconds left of a 429 block (0: none); progress lines tell a block from a spent window. */
  blockedFor(now: number): number {
    return Math.max(0, this.#blockedUntil - now);
  }

  /** Milliseconds until a send may go; 0 when it may go now. `pending`: sends already promised. */
  delay(now: number, pending = 0): number {
    let wait = this.#window.delayFor(now, this.effectiveLimit(now) - pending);
    if (this.#blockedUntil > now) wait = Math.max(wait, this.#blockedUntil - now);
    if (this.#server) {
      if (now >= this.#server.until) this.#server = undefined;
      else if (this.#server.allowance - pending <= 0) wait = Math.max(wait, this.#server.until - now);
    }
    return wait;
  }

  /**
   * Records a send at `now`. The caller has checked `delay(now) === 0`, and calls `answered`
   * with the slot when the answer (or the failure) comes back.
   */
  recordSend(now: number): WindowSlot {
    if (this.#server) this.#server.allowance -= 1;
    return this.#window.record(now);
  }

  /** The answer of a send came back at `now`: its place frees a window later. */
  answered(slot: WindowSlot, now: number): void {
    this.#window.answered(slot, now);
  }

  /**
   * Takes in what an answer said about the limit. `inFlight` counts our other requests sent
   * before this answer arrived and not yet answered (by default, those of this budget): the
   * service may not have counted them yet, so they are taken off what it says remains.
   */
  observe(now: number, headers: RateLimitHeaders, inFlight = this.#window.open): void {
    if (headers.limit !== undefined) this.#serverLimit = headers.limit;
    if (headers.remaining === undefined) return;
    const until = now + Math.min(this.maxWaitMs, headers.resetMs ?? this.windowMs);
    this.#server = { allowance: headers.remaining - inFlight, until };
  }

  /**
   * A 429 arrived: stop everything for the announced block plus jitter. It is expected only
   * when our own sends alone fill the user's limit; otherwise someone else spends the same
   * user's budget (another process, a person at a terminal) and we make room for them.
   */
  rateLimited(now: number, headers: RateLimitHeaders): RateLimitOutcome {
    const serverLimit = headers.limit ?? this.#serverLimit;
    const expected = serverLimit !== undefined && this.#window.count(now) >= serverLimit;
    const base = Math.min(this.maxWaitMs, headers.resetMs ?? this.windowMs);
    // The cap holds for the jitter too: a persisted block never lies further ahead than it.
    const waitMs = Math.min(this.maxWaitMs, base + Math.floor(this.#random() * this.windowMs * JITTER_SHARE));
    this.#blockedUntil = Math.max(this.#blockedUntil, now + waitMs);
    this.#server = undefined;
    if (!expected) {
      this.#reducedLimit = Math.max(1, Math.floor(this.effectiveLimit(now) / 2));
      this.#reducedAt = this.#blockedUntil;
    }
    return { waitMs, unexpected: !expected, effectiveLimit: this.effectiveLimit(now) };
  }

  snapshot(now: number): BudgetSnapshot {
    const effectiveLimit = this.effectiveLimit(now);
    let remaining = Math.max(0, effectiveLimit - this.#window.count(now));
    if (this.#blockedUntil > now) remaining = 0;
    if (this.#server && now < this.#server.until) remaining = Math.min(remaining, Math.max(0, this.#server.allowance));
    return { limit: this.limit, effectiveLimit, remaining, windowMs: this.windowMs };
  }

  /** What must survive a restart: the places held in the last window and a block still running. */
  persistable(now: number): { sends: number[]; blockedUntil: number } {
    return { sends: this.#window.sends(now), blockedUntil: this.#blockedUntil > now ? this.#blockedUntil : 0 };
  }
}
