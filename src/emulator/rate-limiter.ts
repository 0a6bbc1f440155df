import type { RateSpec } from '../util/rate.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window (or the block) resets. */
  resetMs: number;
}

interface UserWindow {
  /** Wall-clock times of the requests counted in the current window, oldest first. */
  times: number[];
  blockedUntil: number;
}

/**
 * The service's limit: `limit` requests per rolling window per user, counted across all of the
 * user's tokens. The request past the limit, and every request of that user for the following
 * whole window, are refused.
 */
export class RateLimiter {
  readonly #windows = new Map<string, UserWindow>();
  #spec: RateSpec;

  constructor(spec: RateSpec) {
    this.#spec = spec;
  }

  get spec(): RateSpec {
    return this.#spec;
  }

  #window(userId: string): UserWindow {
    let window = this.#windows.get(userId);
    if (!window) {
      window = { times: [], blockedUntil: 0 };
      this.#windows.set(userId, window);
    }
    return window;
  }

  #prune(window: UserWindow, now: number): void {
    const from = now - this.#spec.windowMs;
    while (window.times.length > 0 && window.times[0]! <= from) window.times.shift();
  }

  /** Counts one request of `userId` at `now` (wall clock) and says whether it may proceed. */
  take(userId: string, now: number): RateDecision {
    const window = this.#window(userId);
    const { limit, windowMs } = this.#spec;
    if (window.blockedUntil > now) return { allowed: false, limit, remaining: 0, resetMs: window.blockedUntil - now };
    this.#prune(window, now);
    if (window.times.length >= limit) {
      window.blockedUntil = now + windowMs;
      return { allowed: false, limit, remaining: 0, resetMs: windowMs };
    }
    window.times.push(now);
    return { allowed: true, limit, remaining: limit - window.times.length, resetMs: window.times[0]! + windowMs - now };
  }

  /** The headers' view for a user without counting a request. */
  peek(userId: string | undefined, now: number): RateDecision {
    const { limit, windowMs } = this.#spec;
    if (!userId) return { allowed: true, limit, remaining: limit, resetMs: windowMs };
    const window = this.#window(userId);
    if (window.blockedUntil > now) return { allowed: false, limit, remaining: 0, resetMs: window.blockedUntil - now };
    this.#prune(window, now);
    const oldest = window.times[0];
    return { allowed: true, limit, remaining: limit - window.times.length, resetMs: oldest === undefined ? windowMs : oldest + windowMs - now };
  }

  /** Refuses every request of the user (or of every user) for `ms`, as if the limit had been crossed. */
  block(userId: string, now: number, ms = this.#spec.windowMs): void {
    const window = this.#window(userId);
    window.blockedUntil = Math.max(window.blockedUntil, now + ms);
  }

  reset(spec?: RateSpec): void {
    this.#windows.clear();
    if (spec) this.#spec = spec;
  }
}

export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(Math.max(0, decision.remaining)),
    'x-ratelimit-reset': String(Math.max(0, Math.ceil(decision.resetMs / 1000))),
    // Scaled windows (tests, benchmarks) need more precision than whole seconds.
    'x-ratelimit-reset-ms': String(Math.max(0, Math.ceil(decision.resetMs))),
  };
}

/** Routes with a stricter limit of their own in the service (per user, per window of the main limit). */
export const ROUTE_LIMITS: Record<string, number> = {
  'POST /v1/projects/{ref}/custom-hostname/initialize': 10,
  'POST /v1/projects/{ref}/custom-hostname/reverify': 10,
};

/**
 * The stricter per-route limits: a request past one is refused (429) while the window is
 * full, without blocking the user's other requests.
 */
export class RouteLimiter {
  readonly #times = new Map<string, number[]>();
  #windowMs: number;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** True when the request may proceed (and counts it). Routes without a limit always may. */
  take(userId: string, method: string, route: string, now: number): boolean {
    const limit = ROUTE_LIMITS[`${method} ${route}`];
    if (limit === undefined) return true;
    const key = `${userId} ${method} ${route}`;
    const times = (this.#times.get(key) ?? []).filter((t) => t > now - this.#windowMs);
    if (times.length >= limit) {
      this.#times.set(key, times);
      return false;
    }
    times.push(now);
    this.#times.set(key, times);
    return true;
  }

  reset(windowMs?: number): void {
    this.#times.clear();
    if (windowMs !== undefined) this.#windowMs = windowMs;
  }
}
