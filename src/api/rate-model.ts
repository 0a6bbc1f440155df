// How the service counts requests, and the client's budgets that follow it. The client keeps
// one RequestBudget per key the service counts by: one for the user in the `user` model, and
// in the `scoped` model one per user-scoped call group and per (scope, endpoint).
import type { RateSpec } from '../util/rate.js';
import { RequestBudget, type BudgetOptions } from './budget.js';
import type { RateLimitHeaders } from './rate-limit-headers.js';

export type RateModel = 'user' | 'scoped';
const RATE_MODELS: readonly RateModel[] = ['user', 'scoped'];

export function parseRateModel(text: string): RateModel {
  if ((RATE_MODELS as readonly string[]).includes(text)) return text as RateModel;
  throw new TypeError(`Expected a rate model, one of ${RATE_MODELS.join(', ')}, got \`${text}\``);
}

/** The spec's limit per user and minute: `--rate-limit N/...` asks for N of these 60. */
const SERVICE_USER_LIMIT = 60;

/** The budget key of the user (every call in the `user` model; the user-scoped calls in `scoped`). */
export const USER_KEY = 'user';

/**
 * The routes the service limits more strictly than the rest, per user, scope and window. The
 * smallest of them is also where the client starts for a key whose limit it has not yet heard.
 */
const STRICT_ROUTE_LIMITS: Readonly<Record<string, number>> = {
  'POST /v1/projects/{ref}/custom-hostname/initialize': 10,
  'POST /v1/projects/{ref}/custom-hostname/reverify': 10,
  'DELETE /v1/projects/{ref}/custom-hostname': 10,
};
const STRICTEST = Math.min(...Object.values(STRICT_ROUTE_LIMITS));

/**
 * The key the service counts a request under. `scoped`: a call on a project (its ref in the
 * path), an organization (its slug) or a branch counts per that scope and endpoint; every other
 * call (the project and organization lists, snippets) counts against the user.
 */
export function rateKey(model: RateModel, method: string, route: string, params: Readonly<Record<string, string>>): string {
  if (model === 'user') return USER_KEY;
  const scope =
    params.ref !== undefined ? `project:${params.ref}`
    : params.slug !== undefined ? `organization:${params.slug}`
    : params.branch_id !== undefined ? `branch:${params.branch_id}`
    : undefined;
  return scope === undefined ? USER_KEY : `${scope} ${method} ${route}`;
}

interface BudgetSetOptions {
  model: RateModel;
  rate: RateSpec;
  /** The user key's window as persisted by a previous run. */
  initial?: BudgetOptions['initial'];
  random?: () => number;
}

/**
 * The budgets of one identity, by key. In the `user` model there is one, at `rate`. In the
 * `scoped` model each key's limit is learned from the `X-RateLimit-Limit` of its answers and
 * taken at the share `rate.limit / 60` (so two processes that split 60 also split every key);
 * a key not heard from yet starts at that share of the strictest route limit, the most any
 * key can take safely.
 */
export class BudgetSet {
  readonly model: RateModel;
  readonly rate: RateSpec;
  readonly #budgets = new Map<string, RequestBudget>();
  readonly #random: (() => number) | undefined;
  readonly #share: number;

  constructor(options: BudgetSetOptions) {
    this.model = options.model;
    this.rate = options.rate;
    this.#random = options.random;
    this.#share = Math.min(1, options.rate.limit / SERVICE_USER_LIMIT);
    const user = this.model === 'user' ? options.rate : { limit: this.#scaled(SERVICE_USER_LIMIT), windowMs: options.rate.windowMs };
    this.#budgets.set(USER_KEY, this.#create(user, options.initial));
  }

  /** The budget of `key`, created (conservatively) on first use. */
  get(key: string): RequestBudget {
    let budget = this.#budgets.get(key);
    if (!budget) {
      budget = this.#create({ limit: this.#scaled(STRICTEST), windowMs: this.rate.windowMs });
      this.#budgets.set(key, budget);
    }
    return budget;
  }

  /** The user's budget: what metrics report and what is persisted. */
  get user(): RequestBudget {
    return this.#budgets.get(USER_KEY)!;
  }

  /** An answer of `key` arrived: in the `scoped` model its announced limit becomes the key's. */
  learn(key: string, headers: RateLimitHeaders): void {
    if (this.model !== 'scoped' || headers.limit === undefined) return;
    this.get(key).retarget(this.#scaled(headers.limit));
  }

  /** Forgets keys with nothing left in their window (a daemon visits many scopes over time). */
  prune(now: number): void {
    for (const [key, budget] of this.#budgets) if (key !== USER_KEY && budget.idle(now)) this.#budgets.delete(key);
  }

  get size(): number {
    return this.#budgets.size;
  }

  #scaled(limit: number): number {
    return Math.max(1, Math.floor(limit * this.#share));
  }

  #create(rate: RateSpec, initial?: BudgetOptions['initial']): RequestBudget {
    return new RequestBudget({ rate, ...(initial ? { initial } : {}), ...(this.#random ? { random: this.#random } : {}) });
  }
}
