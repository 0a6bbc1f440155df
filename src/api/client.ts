// The one place where the client's parts are composed: transport, authentication, the
// budget and its persisted window, the priority dispatcher, retries and telemetry. Each part
// lives in its own module and knows nothing of the others.
import type { WaitProgress } from '../util/progress.js';
import { AbortWatch, Closing } from './abort-watch.js';
import type { TokenSource } from './auth.js';
import { ClientClosedError } from './client-closed-error.js';
import { attemptOnce, decide, type Call, type Outcome } from './client-attempt.js';
import { createBudget, createWaitProgress, createWindowStore, type ClientBudget } from './client-budget.js';
import { Exchanges, type ClientStats } from './client-exchange.js';
import { clientSettings, type ClientOptions, type ClientSettings } from './client-settings.js';
import { Dispatcher, type AcquireSend } from './dispatcher.js';
import { ManagementApi } from './endpoints.js';
import { OAUTH_TOKEN_ROUTE, type OAuthTokenSource } from './oauth-token.js';
import { rateKey, USER_KEY } from './rate-model.js';
import type { ApiRequest, ApiResponse, Priority, RequestCaller } from './request.js';
import { httpTransport, type Transport } from './transport.js';
import type { WindowWriter } from './window-store.js';

export { ClientClosedError } from './client-closed-error.js';
export { DEFAULT_RATE, type ClientOptions } from './client-settings.js';

export interface ApiClient {
  api: ManagementApi;
  stats(): ClientStats;
  budget(): { limit: number; effectiveLimit: number; remaining: number; windowMs: number };
  /** Resolves when no call is waiting, in flight or backing off. */
  onIdle(): Promise<void>;
  /** Refuses new calls, fails waiting ones, lets those in flight finish, persists the request window. */
  close(): Promise<void>;
}

export async function createClient(options: ClientOptions): Promise<ApiClient> {
  const settings = clientSettings(options);
  const budget = await createBudget(settings);
  const windowStore = createWindowStore(settings, budget);
  const transport = settings.transport ?? httpTransport({ origin: settings.origin, timeouts: settings.timeouts, connections: settings.concurrency + 1 });
  const client = new Client(settings, { budget, windowStore, transport });
  budget.report();
  return {
    // The API sees the calls alone, not the rest of the client.
    api: new ManagementApi({ call: <T>(request: ApiRequest) => client.call<T>(request) }),
    stats: () => client.stats(),
    budget: () => budget.user.snapshot(settings.clock.now()),
    onIdle: () => client.onIdle(),
    close: () => client.close(),
  };
}

/** What a client is composed of, besides its settings. */
interface ClientParts {
  budget: ClientBudget;
  /** Keeps the request window in the state directory (none without one). */
  windowStore: WindowWriter | undefined;
  transport: Transport;
}

function isOAuthSource(auth: TokenSource): auth is OAuthTokenSource {
  return typeof (auth as Partial<OAuthTokenSource>).attachSender === 'function';
}

/** The dispatcher of a client's calls, in priority order within its budget and concurrency. */
function createDispatcher(
  settings: ClientSettings,
  parts: ClientParts,
  hooks: { run: (call: Call, acquire: AcquireSend) => Promise<void>; sent: () => void; stalled: (waitMs: number) => void },
): Dispatcher<Call> {
  const { budget, windowStore } = parts;
  return new Dispatcher<Call>({
    clock: settings.clock,
    budgets: budget.budgets,
    concurrency: settings.concurrency,
    run: hooks.run,
    onSend: () => {
      hooks.sent();
      windowStore?.sent();
      budget.report();
    },
    onDepth: (priority, depth) => settings.telemetry.queueDepth(priority, depth),
    onStall: (_key, waitMs) => hooks.stalled(waitMs),
    ...(windowStore ? { beforeSend: (now: number) => windowStore.beforeSend(now) } : {}),
  });
}

/** The calls of one client: queued, attempted, retried and settled; refused once it is closed. */
class Client implements RequestCaller {
  readonly #settings: ClientSettings;
  readonly #parts: ClientParts;
  readonly #stats: ClientStats = { sent: 0, rateLimited: 0, retries: 0, byRoute: {} };
  readonly #closing = new Closing();
  readonly #exchanges: Exchanges;
  readonly #waitProgress: WaitProgress;
  readonly #dispatcher: Dispatcher<Call>;
  // A call still queued fails here with its signal's reason; one in flight fails in the
  // transport, and one out of the queue (a fresh token, a backoff) when it would go back in.
  readonly #watch = new AbortWatch((signal) => {
    for (const call of this.#dispatcher.removeWhere((call) => call.request.signal === signal)) this.#settle(call, { error: signal.reason });
  });
  #closed = false;
  #unsettled = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(settings: ClientSettings, parts: ClientParts) {
    this.#settings = settings;
    this.#parts = parts;
    this.#exchanges = new Exchanges({ settings, ...parts, stats: this.#stats, closing: this.#closing });
    this.#waitProgress = createWaitProgress(settings, parts.budget, () => this.#dispatcher.stall(), () => this.#closed);
    this.#dispatcher = createDispatcher(settings, parts, {
      run: (call, acquire) => this.#attempt(call, acquire),
      sent: () => (this.#stats.sent += 1),
      stalled: (waitMs) => this.#waitProgress.stalled(waitMs),
    });
    // OAuth refreshes are requests too: they spend the same budget.
    if (isOAuthSource(settings.auth)) {
      settings.auth.attachSender(async (form, signal) => {
        const request = { method: 'POST', route: OAUTH_TOKEN_ROUTE, key: USER_KEY } as const;
        const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'fleet-reconciler' };
        const acquire: AcquireSend = (start, s) => this.#dispatcher.acquire(USER_KEY, start, s, () => 0);
        return this.#exchanges.send(request, { path: `${settings.basePath}${OAUTH_TOKEN_ROUTE}`, headers, body: form }, acquire, signal);
      });
    }
  }

  call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
    return new Promise<ApiResponse<T>>((resolve, reject) => {
      if (this.#closed) return reject(new ClientClosedError(request.method, request.route));
      if (request.signal?.aborted) return reject(request.signal.reason);
      const priority: Priority = request.priority ?? (request.method === 'GET' ? 'verify' : 'write');
      const call: Call = {
        request,
        priority,
        project: request.project ?? '',
        key: rateKey(this.#settings.rateModel, request.method, request.route, request.params ?? {}),
        resolve: resolve as (response: ApiResponse<unknown>) => void,
        reject,
        transientRetries: 0,
        rateLimitRetries: 0,
        reauthenticated: false,
      };
      this.#unsettled += 1;
      if (request.signal) this.#watch.watch(request.signal);
      try {
        this.#dispatcher.push(call);
      } catch (error) {
        // Not queued (a priority the scheduler does not know): the call ends here, with nothing left watched or counted.
        this.#settle(call, { error });
      }
    });
  }

  stats(): ClientStats {
    return { ...this.#stats, byRoute: { ...this.#stats.byRoute } };
  }

  onIdle(): Promise<void> {
    return this.#unsettled === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.close();
    this.#waitProgress.stop();
    for (const call of this.#dispatcher.drain()) this.#settle(call, { error: new ClientClosedError(call.request.method, call.request.route) });
    if (this.#unsettled > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#dispatcher.stop();
    await this.#parts.windowStore?.flush({ final: true });
    await this.#parts.transport.close();
  }

  async #attempt(call: Call, acquire: AcquireSend): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = await attemptOnce(call, acquire, this.#settings, this.#exchanges);
      if (outcome.kind === 'failed') {
        const signal = call.request.signal;
        const closing = this.#closing.signal;
        if (signal?.aborted) outcome = { kind: 'failed', error: signal.reason };
        else if (closing.aborted && outcome.error === closing.reason) {
          outcome = { kind: 'failed', error: new ClientClosedError(call.request.method, call.request.route) };
        } else outcome = await decide(call, outcome.error, this.#settings);
      }
    } catch (error) {
      // A bad request description (a missing path parameter, a body of the wrong kind) or a
      // token source that failed while invalidating: the call fails, it is never left hanging.
      outcome = { kind: 'failed', error };
    }
    if (outcome.kind === 'done') return this.#settle(call, { response: outcome.response });
    if (outcome.kind === 'failed') return this.#settle(call, { error: outcome.error });
    this.#stats.retries += 1;
    void this.#again(call, outcome.afterMs);
  }

  /** Puts a call back at the front of its line, after its backoff (without holding a slot). */
  async #again(call: Call, afterMs: number): Promise<void> {
    const closing = this.#closing.signal;
    const signal = call.request.signal;
    try {
      if (afterMs > 0) {
        const signals = [closing, signal].filter((s): s is AbortSignal => s !== undefined);
        await this.#settings.clock.sleep(afterMs, AbortSignal.any(signals));
      }
    } catch (error) {
      if (signal?.aborted) return this.#settle(call, { error: signal.reason });
      return this.#settle(call, { error: closing.aborted ? new ClientClosedError(call.request.method, call.request.route) : error });
    }
    // Aborted while it was out of the queue (its attempt, a fresh token, its backoff): an abort
    // takes only queued calls out, so this one ends here rather than waiting for its turn again.
    if (signal?.aborted) return this.#settle(call, { error: signal.reason });
    if (this.#closed) return this.#settle(call, { error: new ClientClosedError(call.request.method, call.request.route) });
    this.#dispatcher.push(call, true);
  }

  #settle(call: Call, outcome: { response: ApiResponse<unknown> } | { error: unknown }): void {
    if (call.request.signal) this.#watch.unwatch(call.request.signal);
    if ('response' in outcome) call.resolve(outcome.response);
    else call.reject(outcome.error);
    this.#unsettled -= 1;
    if (this.#unsettled === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}
