// One HTTP exchange of the client: sent when the budget lets it (fenced by the state directory's
// lock for writes), counted, and its answer read for what it says about the budget.
import { checkFence } from '../util/state-fence.js';
import type { Closing } from './abort-watch.js';
import type { ClientBudget } from './client-budget.js';
import type { ClientSettings } from './client-settings.js';
import type { AcquireSend } from './dispatcher.js';
import { parseRateLimitHeaders } from './rate-limit-headers.js';
import type { ApiRequest } from './request.js';
import type { Transport, TransportResponse } from './transport.js';
import type { WindowWriter } from './window-store.js';

export interface ClientStats {
  /** Requests sent (every attempt, token refreshes included). */
  sent: number;
  /** 429 answers received. */
  rateLimited: number;
  /** Attempts after the first, for any reason. */
  retries: number;
  /** Sends per `METHOD /route/{template}`. */
  byRoute: Record<string, number>;
}

/** What an exchange is: its method, its route template, and the budget key it is counted under. */
export type ExchangeRequest = Pick<ApiRequest, 'method' | 'route'> & { key: string };

/** What an exchange sends. */
export interface Outgoing {
  path: string;
  headers: Record<string, string>;
  body: string | FormData | undefined;
}

export interface ExchangeParts {
  settings: ClientSettings;
  budget: ClientBudget;
  windowStore: WindowWriter | undefined;
  transport: Transport;
  stats: ClientStats;
  closing: Closing;
}

/** Sends exchanges through the transport and accounts for their answers. */
export class Exchanges {
  readonly #parts: ExchangeParts;

  constructor(parts: ExchangeParts) {
    this.#parts = parts;
  }

  /** One HTTP exchange, holding its place in its key's budget from its send until its answer. */
  async send(request: ExchangeRequest, outgoing: Outgoing, acquire: AcquireSend, signal: AbortSignal | undefined): Promise<TransportResponse> {
    const { settings, stats, transport, closing } = this.#parts;
    const key = `${request.method} ${request.route}`;
    let started: number | undefined;
    let response: TransportResponse | undefined;
    try {
      response = await acquire(() => {
        // Fenced: a write goes out only while this process still holds the state directory's
        // lock, checked right before the send (a write already sent cannot be recalled).
        if (settings.stateDir !== undefined && request.method !== 'GET') checkFence(settings.stateDir);
        stats.byRoute[key] = (stats.byRoute[key] ?? 0) + 1;
        started = settings.clock.now();
        return transport.send({ method: request.method, ...outgoing, ...(signal ? { signal } : {}) });
        // Waiting for the budget (possibly a whole 429 block) ends on close; a request in flight does not.
      }, closing.with(signal));
      return response;
    } finally {
      if (started !== undefined) this.#settle(request, started, response);
    }
  }

  /** Accounts for one finished exchange: telemetry, and what its answer says about the budget. */
  #settle(request: ExchangeRequest, started: number, response: TransportResponse | undefined): void {
    const { settings, budget, stats, windowStore } = this.#parts;
    const { clock, telemetry, log } = settings;
    telemetry.requestFinished({
      method: request.method,
      route: request.route,
      code: response ? String(response.status) : 'error',
      durationSeconds: Math.max(0, clock.now() - started) / 1000,
    });
    if (!response) return;
    const keyBudget = budget.budgets.get(request.key);
    const limits = parseRateLimitHeaders(response.headers, { maxWaitMs: keyBudget.maxWaitMs, now: clock.now() });
    budget.budgets.learn(request.key, limits);
    if (response.status === 429) {
      stats.rateLimited += 1;
      telemetry.rateLimited();
      const outcome = keyBudget.rateLimited(clock.now(), limits);
      windowStore?.changed();
      const fields = { method: request.method, route: request.route, key: request.key, waitMs: outcome.waitMs, effectiveLimit: outcome.effectiveLimit };
      const blocked = `${request.method} ${request.route} answered 429: nothing is sent for ${Math.ceil(outcome.waitMs / 1000)}s`;
      if (outcome.unexpected) log.warn(fields, `${blocked}; someone else spends this user's budget, so the effective limit is lowered to ${outcome.effectiveLimit}`);
      else log.info(fields, blocked);
    } else {
      keyBudget.observe(clock.now(), limits);
    }
    budget.budgets.prune(clock.now());
    budget.report();
  }
}
