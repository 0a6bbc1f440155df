import type { RateSpec } from '../util/rate.js';

/**
 * How the service counts. `user` (the spec's): one count per user, across all of the user's
 * tokens. `scoped` (the public service's newer model): one count per user and scope (a project,
 * an organization or a branch, from the path) and endpoint, each at the main limit, or at the
 * route's own stricter limit; calls that name no scope (the project and organization lists,
 * snippets) share one count per user.
 */
export type EmulatorRateModel = 'user' | 'scoped';

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

/** Where a request is counted: `id` names the count, `limit` is its size per window. */
export interface RateBucket {
  id: string;
  limit: number;
}

/**
 * The service's limit: `limit` requests per rolling window per count, a count being the user's
 * (model `user`, across all of the user's tokens) or the user's per scope and endpoint (model
 * `scoped`). The request past the limit, and every request of that count for the following
 * whole window, are refused. Counting happens when a request arrives.
 */
export class RateLimiter {
  readonly #windows = new Map<string, UserWindow>();
  // Blocks of a whole user (an injected fault), over every count of theirs.
  readonly #userBlocks = new Map<string, number>();
  #spec: RateSpec;
  #model: EmulatorRateModel;

  constructor(spec: RateSpec, model: EmulatorRateModel = 'user') {
    this.#spec = spec;
    this.#model = model;
  }

  get spec(): RateSpec {
    return this.#spec;
  }

  get model(): EmulatorRateModel {
    return this.#model;
  }

  /** The count a request of `userId` on `METHOD route` with these path parameters falls in. */
  bucket(userId: string, method: string, route: string, params: Readonly<Record<string, string>>): RateBucket {
    if (this.#model === 'user') return { id: userId, limit: this.#spec.limit };
    const scope =
      params.ref !== undefined ? `project:${params.ref}`
      : params.slug !== undefined ? `organization:${params.slug}`
      : params.branch_id !== undefined ? `branch:${params.branch_id}`
      : undefined;
    if (scope === undefined) return { id: userId, limit: this.#spec.limit };
    const endpoint = `${method} ${route}`;
    return { id: `${userId} ${scope} ${endpoint}`, limit: Math.min(this.#spec.limit, SCOPED_ROUTE_LIMITS[endpoint] ?? this.#spec.limit) };
  }

  #window(id: string): UserWindow {
    let window = this.#windows.get(id);
    if (!window) {
      window = { times: [], blockedUntil: 0 };
      this.#windows.set(id, window);
    }
    return window;
  }

  #blockedUntil(userId: string, window: UserWindow): number {
    return Math.max(window.blockedUntil, this.#userBlocks.get(userId) ?? 0);
  }

  #prune(window: UserWindow, now: number): void {
    const from = now - this.#spec.windowMs;
    while (window.times.length > 0 && window.times[0]! <= from) window.times.shift();
  }

  /**
   * Counts one request of `userId` at `now` (wall clock) and says whether it may proceed.
   * `bucket`: where it counts (default: the user's own count).
   */
  take(userId: string, now: number, bucket: RateBucket = { id: userId, limit: this.#spec.limit }): RateDecision {
    const window = this.#window(bucket.id);
    const { windowMs } = this.#spec;
    const { limit } = bucket;
    const blockedUntil = this.#blockedUntil(userId, window);
    if (blockedUntil > now) return { allowed: false, limit, remaining: 0, resetMs: blockedUntil - now };
    this.#prune(window, now);
    if (window.times.length >= limit) {
      window.blockedUntil = now + windowMs;
      return { allowed: false, limit, remaining: 0, resetMs: windowMs };
    }
    window.times.push(now);
    return { allowed: true, limit, remaining: limit - window.times.length, resetMs: window.times[0]! + windowMs - now };
  }

  /** The headers' view for a user (or one of their counts) without counting a request. */
  peek(userId: string | undefined, now: number, bucket?: RateBucket): RateDecision {
    const { windowMs } = this.#spec;
    const limit = bucket?.limit ?? this.#spec.limit;
    if (!userId) return { allowed: true, limit, remaining: limit, resetMs: windowMs };
    const window = this.#window(bucket?.id ?? userId);
    const blockedUntil = this.#blockedUntil(userId, window);
    if (blockedUntil > now) return { allowed: false, limit, remaining: 0, resetMs: blockedUntil - now };
    this.#prune(window, now);
    const oldest = window.times[0];
    return { allowed: true, limit, remaining: limit - window.times.length, resetMs: oldest === undefined ? windowMs : oldest + windowMs - now };
  }

  /** Refuses every request of the user for `ms`, in every count of theirs, as if the limit had been crossed. */
  block(userId: string, now: number, ms = this.#spec.windowMs): void {
    this.#userBlocks.set(userId, Math.max(this.#userBlocks.get(userId) ?? 0, now + ms));
  }

  reset(spec?: RateSpec, model?: EmulatorRateModel): void {
    this.#windows.clear();
    this.#userBlocks.clear();
    if (spec) this.#spec = spec;
    if (model) this.#model = model;
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

/**
 * In the `scoped` model, the routes whose count (per user, scope and endpoint) is smaller than
 * the main limit, per window of the main limit.
 */
const SCOPED_ROUTE_LIMITS: Record<string, number> = {
  'POST /v1/projects/{ref}/custom-hostname/initialize': 10,
  'POST /v1/projects/{ref}/custom-hostname/reverify': 10,
  'DELETE /v1/projects/{ref}/custom-hostname': 10,
};

/** In the `user` model, routes with a stricter limit of their own (per user, per window of the main limit). */
const ROUTE_LIMITS: Record<string, number> = {
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
