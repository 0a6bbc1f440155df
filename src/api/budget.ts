import type { RateSpec } from '../util/rate.js';
import type { RateLimitHeaders } from './rate-limit-headers.js';
import { SlidingWindow } from './sliding-window.js';

export interface BudgetOptions {
  rate: RateSpec;
  /** Send times of the last window and a block still running, as persisted by a previous run. */
  initial?: { sends?: readonly number[]; blockedUntil?: number };
  /** Random source for the jitter added to a 429 block (tests pass a seeded one). */
  random?: () => number;
}

export interface BudgetSnapshot {
  limit: number;
  effectiveLimit: number;
  remaining: number;
  windowMs: number;
}

/** What a 429 did to the budget. */
export interface RateLimitOutcome {
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
 * the service last said remains for the user. The sliding window is counted at send time,
 * for every send (retries included), so no window ever holds more than the limit.
 */
export class RequestBudget {
  readonly limit: number;
  readonly windowMs: number;
  readonly #window: SlidingWindow;
  readonly #random: () => number;
  #blockedUntil = 0;
  // Lowered after an unexpected 429; climbs back by #recoveryStep per window from #reducedAt.
  #reducedLimit: number;
  #reducedAt = 0;
  readonly #recoveryStep: number;
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
    this.limit = limit;
    this.windowMs = windowMs;
    // A send is counted a moment before its bytes leave (and clocks tick in whole milliseconds):
    // a small guard keeps the real sends, not only the counted ones, within the window.
    this.#window = new SlidingWindow(windowMs, options.initial?.sends ?? [], Math.min(25, windowMs / 100));
    this.#blockedUntil = options.initial?.blockedUntil ?? 0;
    this.#random = options.random ?? Math.random;
    this.#reducedLimit = limit;
    this.#recoveryStep = Math.max(1, Math.ceil(limit / 10));
  }

  effectiveLimit(now: number): number {
    if (this.#reducedLimit >= this.limit || now < this.#reducedAt) return this.#reducedLimit;
    const steps = Math.floor((now - this.#reducedAt) / this.windowMs);
    return Math.min(this.limit, this.#reducedLimit + steps * this.#recoveryStep);
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

  /** Records a send at `now`. The caller has checked `delay(now) === 0`. */
  recordSend(now: number): void {
    this.#window.record(now);
    if (this.#server) this.#server.allowance -= 1;
  }

  /**
   * Takes in what an answer said about the user's limit. `inFlight` counts our other requests
   * sent before this answer arrived and not yet answered: the service may not have counted
   * them yet, so they are taken off what it says remains.
   */
  observe(now: number, headers: RateLimitHeaders, inFlight: number): void {
    if (headers.limit !== undefined) this.#serverLimit = headers.limit;
    if (headers.remaining === undefined) return;
    const until = now + (headers.resetMs ?? this.windowMs);
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
    const base = headers.resetMs ?? this.windowMs;
    const waitMs = base + Math.floor(this.#random() * this.windowMs * JITTER_SHARE);
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

  /** What must survive a restart: the sends of the last window and a block still running. */
  persistable(now: number): { sends: number[]; blockedUntil: number } {
    return { sends: this.#window.sends(now), blockedUntil: this.#blockedUntil > now ? this.#blockedUntil : 0 };
  }
}
