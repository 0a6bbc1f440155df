// The one place where the client's parts are composed: transport, authentication, the
// budget and its persisted window, the priority dispatcher, retries and telemetry. Each part
// lives in its own module and knows nothing of the others.
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { RateSpec } from '../util/rate.js';
import type { Logger } from '../util/logger.js';
import { silentLogger } from '../util/logger.js';
import type { ApiTelemetry } from './telemetry.js';
import { noopTelemetry } from './telemetry.js';
import type { TokenSource } from './auth.js';
import { OAUTH_TOKEN_ROUTE, type OAuthTokenSource } from './oauth-token.js';
import { backoffDelay, validateRetryPolicy, type RetryPolicy } from './backoff.js';
import { maxHeaderWaitMs, type RequestBudget } from './budget.js';
import { ClientClosedError } from './client-closed-error.js';
import { Dispatcher, type AcquireSend } from './dispatcher.js';
import { ManagementApi } from './endpoints.js';
import { errorForResponse, readSuccessBody } from './error-mapping.js';
import { RateLimitedError, TransientError, UnauthorizedError } from './errors.js';
import { parseRateLimitHeaders } from './rate-limit-headers.js';
import { BudgetSet, rateKey, USER_KEY, type RateModel } from './rate-model.js';
import { encodeBody, withQuery } from './request-body.js';
import { fillRoute, type ApiRequest, type ApiResponse, type Priority, type RequestCaller } from './request.js';
import { DEFAULT_TIMEOUTS, TransportFailure, undiciTransport, type Transport, type TransportResponse } from './transport.js';
import { loadWindow, WindowWriter } from './window-store.js';
import { WaitProgress } from '../util/progress.js';
import { checkFence } from '../util/state-fence.js';

export { ClientClosedError } from './client-closed-error.js';

export interface ClientOptions {
  /** Base URL of the API, for example `http://127.0.0.1:8787` (a path prefix is kept). */
  baseUrl: string;
  auth: TokenSource;
  /** The request budget; default 50 per 60 s, leaving room for others who share the user's limit. */
  rate?: RateSpec;
  /**
   * How the service counts (default `user`): `user`, one budget at `rate`; `scoped`, one per
   * user-scoped call group and per scope and endpoint, each at the share `rate.limit / 60` of
   * the limit its answers announce (see rate-model.ts).
   */
  rateModel?: RateModel;
  /** Where `request-window.json` is kept; without it the window lives in memory only. */
  stateDir?: string;
  clock?: Clock;
  telemetry?: ApiTelemetry;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  log?: Logger;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number; maxRateLimitRetries?: number };
  /** Replaces the undici transport (tests drive the client on a fake clock with it). */
  transport?: Transport;
  /** Random source for jitter (default Math.random). */
  random?: () => number;
}

interface ClientStats {
  /** Requests sent (every attempt, token refreshes included). */
  sent: number;
  /** 429 answers received. */
  rateLimited: number;
  /** Attempts after the first, for any reason. */
  retries: number;
  /** Sends per `METHOD /route/{template}`. */
  byRoute: Record<string, number>;
}

export interface ApiClient {
  api: ManagementApi;
  stats(): ClientStats;
  budget(): { limit: number; effectiveLimit: number; remaining: number; windowMs: number };
  /** Resolves when no call is waiting, in flight or backing off. */
  onIdle(): Promise<void>;
  /** Refuses new calls, fails waiting ones, lets those in flight finish, persists the request window. */
  close(): Promise<void>;
}

export const DEFAULT_RATE: RateSpec = { limit: 50, windowMs: 60_000 };
const DEFAULT_CONCURRENCY = 4;

interface Call {
  readonly request: ApiRequest;
  readonly priority: Priority;
  readonly project: string;
  readonly key: string;
  readonly resolve: (response: ApiResponse<unknown>) => void;
  readonly reject: (error: unknown) => void;
  transientRetries: number;
  rateLimitRetries: number;
  reauthenticated: boolean;
  /** Removes the abort listener (a daemon passes one long-lived signal to every call). */
  detach: () => void;
}

/** What one attempt came to. */
type Outcome =
  | { kind: 'done'; response: ApiResponse<unknown> }
  | { kind: 'failed'; error: unknown }
  | { kind: 'again'; afterMs: number };

function positiveNumber(name: string, value: unknown, whole: boolean): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value))) {
    throw new TypeError(`Expected \`${name}\` to be a ${whole ? 'whole' : 'finite'} number > 0, got \`${String(value)}\` (${typeof value})`);
  }
}

function parseBaseUrl(baseUrl: string): { origin: string; basePath: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`Expected \`baseUrl\` to be an absolute http(s) URL, got \`${baseUrl}\``);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Expected \`baseUrl\` to be an absolute http(s) URL, got \`${baseUrl}\``);
  }
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
}

function isOAuthSource(auth: TokenSource): auth is OAuthTokenSource {
  return typeof (auth as Partial<OAuthTokenSource>).attachSender === 'function';
}

/** The settings of a client, checked and with their defaults. */
interface ClientSettings {
  basePath: string;
  rate: RateSpec;
  rateModel: RateModel;
  concurrency: number;
  timeouts: typeof DEFAULT_TIMEOUTS;
  policy: RetryPolicy;
  clock: Clock;
  log: Logger;
  telemetry: ApiTelemetry;
  random: () => number;
  auth: TokenSource;
  /** Where the request window is kept (and whose lock fences a write); none: in memory only. */
  stateDir: string | undefined;
}

function clientSettings(options: ClientOptions): ClientSettings & { origin: string } {
  if (!options || typeof options !== 'object') throw new TypeError('Expected `options` to be an object');
  const { origin, basePath } = parseBaseUrl(options.baseUrl);
  if (!options.auth || typeof options.auth.token !== 'function') throw new TypeError('Expected `auth` to be a TokenSource');
  const rateModel = options.rateModel ?? 'user';
  if (rateModel !== 'user' && rateModel !== 'scoped') throw new TypeError(`Expected \`rateModel\` to be \`user\` or \`scoped\`, got \`${String(rateModel)}\``);
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  positiveNumber('concurrency', concurrency, true);
  const timeouts = { ...DEFAULT_TIMEOUTS };
  for (const [key, value] of Object.entries(options.timeouts ?? {})) {
    if (value === undefined) continue;
    positiveNumber(`timeouts.${key}`, value, false);
    timeouts[key as keyof typeof timeouts] = value;
  }
  return {
    origin,
    basePath,
    rate: options.rate ?? DEFAULT_RATE,
    rateModel,
    concurrency,
    timeouts,
    policy: validateRetryPolicy(options.retry),
    clock: options.clock ?? systemClock,
    log: options.log ?? silentLogger,
    telemetry: options.telemetry ?? noopTelemetry,
    random: options.random ?? Math.random,
    auth: options.auth,
    stateDir: options.stateDir,
  };
}

/** What the dispatcher calls back into the client for. */
interface DispatcherHooks {
  run(call: Call, acquire: AcquireSend): Promise<void>;
  onSend(now: number): void;
  onDepth(priority: Priority, depth: number): void;
  onStall(key: string, waitMs: number): void;
}

/** The parts a client is composed of, built by `createClient` and handed to it. */
interface ClientParts {
  budgets: BudgetSet;
  transport: Transport;
  /** The persisted request window; none without a state directory. */
  writer: WindowWriter | undefined;
  /** Builds the priority dispatcher that runs the client's attempts. */
  dispatcher(hooks: DispatcherHooks): Dispatcher<Call>;
}

export async function createClient(options: ClientOptions): Promise<ApiClient> {
  const settings = clientSettings(options);
  const { rate, clock, log } = settings;
  const loaded = settings.stateDir ? await loadWindow(settings.stateDir) : undefined;
  // Claimed sends lie a little in the future, and stay there; times further ahead than a window
  // (a clock that has since stepped back) are taken as now, and a block as at most the longest
  // wait a header may impose: a skewed or tampered file must delay a start, never stall it for good.
  const startedAt = clock.now();
  const initial = loaded && {
    sends: loaded.sends.map((t) => (t > startedAt + rate.windowMs ? startedAt : t)),
    blockedUntil: Math.min(loaded.blockedUntil, startedAt + maxHeaderWaitMs(rate.windowMs)),
  };
  const budgets = new BudgetSet({ model: settings.rateModel, rate, random: settings.random, ...(initial ? { initial } : {}) });
  // Metrics and the persisted window follow the user's budget (the only one in the `user` model).
  const budget = budgets.user;
  const writer = settings.stateDir
    ? new WindowWriter({
        stateDir: settings.stateDir,
        clock,
        debounceMs: Math.min(1_000, rate.windowMs / 20),
        // One fsync per tenth of the budget; a restart after a crash counts at most that many
        // sends that never happened, a twentieth of a window ahead.
        claimCount: Math.max(1, Math.ceil(rate.limit / 10)),
        claimMs: Math.min(1_000, rate.windowMs / 20),
        snapshot: () => ({ version: 1, windowMs: rate.windowMs, ...budget.persistable(clock.now()) }),
        onError: (error) => log.error({ err: error }, 'could not persist the request window'),
      })
    : undefined;
  return new Client(settings, {
    budgets,
    transport: options.transport ?? undiciTransport({ origin: settings.origin, timeouts: settings.timeouts, connections: settings.concurrency + 1 }),
    writer,
    dispatcher: (hooks) =>
      new Dispatcher<Call>({ clock, budgets, concurrency: settings.concurrency, ...hooks, ...(writer ? { beforeSend: (now: number) => writer.beforeSend(now) } : {}) }),
  });
}

/**
 * A client: its calls go through the dispatcher (priority, concurrency, the budget), one
 * attempt at a time, with retries decided per failure, and settle exactly once.
 */
class Client implements ApiClient {
  readonly api: ManagementApi;
  readonly #settings: ClientSettings;
  readonly #budgets: BudgetSet;
  /** The user's budget: what metrics report and what is persisted. */
  readonly #budget: RequestBudget;
  readonly #transport: Transport;
  readonly #writer: WindowWriter | undefined;
  readonly #dispatcher: Dispatcher<Call>;
  readonly #waitProgress: WaitProgress;
  readonly #stats: ClientStats = { sent: 0, rateLimited: 0, retries: 0, byRoute: {} };
  readonly #closing = new AbortController();
  #closed = false;
  #unsettled = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(settings: ClientSettings, parts: ClientParts) {
    this.#settings = settings;
    this.#budgets = parts.budgets;
    this.#budget = parts.budgets.user;
    this.#transport = parts.transport;
    this.#writer = parts.writer;
    const { clock, log, rate, telemetry } = settings;
    // Requests waiting for the budget or out a 429 block are silent work: say so, then again every
    // few seconds of clock time while they still wait.
    this.#waitProgress = new WaitProgress(clock, () => {
      if (this.#closed) return false;
      const stall = this.#dispatcher.stall();
      if (!stall) return false;
      const blockedMs = this.#budgets.get(stall.key).blockedFor(clock.now());
      const seconds = (ms: number) => Math.ceil(ms / 1000);
      if (blockedMs > 0) {
        log.info(
          { wait: 'rate-limit', queued: stall.queued, remainingS: seconds(blockedMs) },
          `rate limited (429): sending again in ${seconds(blockedMs)}s, ${stall.queued} ${stall.queued === 1 ? 'request' : 'requests'} waiting`,
        );
      } else {
        log.info(
          { wait: 'budget', queued: stall.queued, nextInS: seconds(stall.waitMs), limit: rate.limit, windowS: rate.windowMs / 1000 },
          `waiting for the request budget (${rate.limit} per ${rate.windowMs / 1000}s): ${stall.queued} queued, next slot in ${seconds(stall.waitMs)}s`,
        );
      }
      return true;
    });
    this.#dispatcher = parts.dispatcher({
      run: (call, acquire) => this.#attempt(call, acquire),
      onSend: () => {
        this.#stats.sent += 1;
        this.#writer?.sent();
        this.#reportBudget();
      },
      onDepth: (priority, depth) => telemetry.queueDepth(priority, depth),
      onStall: (_key, waitMs) => this.#waitProgress.stalled(waitMs),
    });
    this.#attachOAuth();
    this.api = new ManagementApi({ call: (request) => this.#call(request) });
    this.#reportBudget();
  }

  stats(): ClientStats {
    return { ...this.#stats, byRoute: { ...this.#stats.byRoute } };
  }

  budget(): ReturnType<ApiClient['budget']> {
    return this.#budget.snapshot(this.#settings.clock.now());
  }

  onIdle(): Promise<void> {
    return this.#unsettled === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#waitProgress.stop();
    for (const call of this.#dispatcher.drain()) this.#settle(call, { error: new ClientClosedError(call.request.method, call.request.route) });
    if (this.#unsettled > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#dispatcher.stop();
    await this.#writer?.flush({ final: true });
    await this.#transport.close();
  }

  #reportBudget(): void {
    const snapshot = this.#budget.snapshot(this.#settings.clock.now());
    this.#settings.telemetry.budget(snapshot.remaining, snapshot.effectiveLimit);
  }

  // OAuth refreshes are requests too: they spend the same budget.
  #attachOAuth(): void {
    const auth = this.#settings.auth;
    if (!isOAuthSource(auth)) return;
    auth.attachSender(async (form, signal) => {
      const request = { method: 'POST', route: OAUTH_TOKEN_ROUTE, key: USER_KEY } as const;
      return this.#exchange(
        request,
        `${this.#settings.basePath}${OAUTH_TOKEN_ROUTE}`,
        { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'fleet-reconciler' },
        form,
        (start, s) => this.#dispatcher.acquire(USER_KEY, start, s, () => 0),
        signal,
      );
    });
  }

  #call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
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
        detach: () => undefined,
      };
      this.#unsettled += 1;
      const signal = request.signal;
      if (signal) {
        const onAbort = () => {
          if (this.#dispatcher.remove(call)) this.#settle(call, { error: signal.reason });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        call.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.#dispatcher.push(call);
    });
  }

  #settle(call: Call, outcome: { response: ApiResponse<unknown> } | { error: unknown }): void {
    call.detach();
    if ('response' in outcome) call.resolve(outcome.response);
    else call.reject(outcome.error);
    this.#unsettled -= 1;
    if (this.#unsettled === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** One HTTP exchange, holding its place in its key's budget from its send until its answer. */
  async #exchange(
    request: Pick<ApiRequest, 'method' | 'route'> & { key: string },
    path: string,
    headers: Record<string, string>,
    body: string | FormData | undefined,
    acquire: AcquireSend,
    signal: AbortSignal | undefined,
  ): Promise<TransportResponse> {
    const key = `${request.method} ${request.route}`;
    const { stateDir, clock } = this.#settings;
    let started: number | undefined;
    let response: TransportResponse | undefined;
    try {
      response = await acquire(() => {
        // Fenced: a write goes out only while this process still holds the state directory's
        // lock, checked right before the send (a write already sent cannot be recalled).
        if (stateDir !== undefined && request.method !== 'GET') checkFence(stateDir);
        this.#stats.byRoute[key] = (this.#stats.byRoute[key] ?? 0) + 1;
        started = clock.now();
        return this.#transport.send({ method: request.method, path, headers, body, ...(signal ? { signal } : {}) });
        // Waiting for the budget (possibly a whole 429 block) ends on close; a request in flight does not.
      }, signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal);
      return response;
    } finally {
      if (started !== undefined) this.#settleExchange(request, started, response);
    }
  }

  /** Accounts for one finished exchange: telemetry, and what its answer says about the budget. */
  #settleExchange(request: Pick<ApiRequest, 'method' | 'route'> & { key: string }, started: number, response: TransportResponse | undefined): void {
    const { clock, log, telemetry } = this.#settings;
    telemetry.requestFinished({
      method: request.method,
      route: request.route,
      code: response ? String(response.status) : 'error',
      durationSeconds: Math.max(0, clock.now() - started) / 1000,
    });
    if (!response) return;
    const keyBudget = this.#budgets.get(request.key);
    const limits = parseRateLimitHeaders(response.headers, { maxWaitMs: keyBudget.maxWaitMs, now: clock.now() });
    this.#budgets.learn(request.key, limits);
    if (response.status === 429) {
      this.#stats.rateLimited += 1;
      telemetry.rateLimited();
      const outcome = keyBudget.rateLimited(clock.now(), limits);
      this.#writer?.changed();
      const fields = { method: request.method, route: request.route, key: request.key, waitMs: outcome.waitMs, effectiveLimit: outcome.effectiveLimit };
      const blocked = `${request.method} ${request.route} answered 429: nothing is sent for ${Math.ceil(outcome.waitMs / 1000)}s`;
      if (outcome.unexpected) log.warn(fields, `${blocked}; someone else spends this user's budget, so the effective limit is lowered to ${outcome.effectiveLimit}`);
      else log.info(fields, blocked);
    } else {
      keyBudget.observe(clock.now(), limits);
    }
    this.#budgets.prune(clock.now());
    this.#reportBudget();
  }

  async #attemptOnce(call: Call, acquire: AcquireSend): Promise<Outcome> {
    const { request } = call;
    const signal = request.signal;
    const context = { method: request.method, route: request.route };
    let token: string;
    try {
      token = await this.#settings.auth.token(signal);
    } catch (error) {
      return { kind: 'failed', error };
    }
    const encoded = encodeBody(request);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'fleet-reconciler' };
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    if (encoded.contentType) headers['content-type'] = encoded.contentType;
    headers.authorization = `Bearer ${token}`;
    const path = withQuery(`${this.#settings.basePath}${fillRoute(request.route, request.params)}`, request.query);
    let response: TransportResponse;
    try {
      response = await this.#exchange({ method: request.method, route: request.route, key: call.key }, path, headers, encoded.body, acquire, signal);
    } catch (error) {
      if (error instanceof TransportFailure) {
        return { kind: 'failed', error: new TransientError(context, error.message, error.mayHaveApplied, { cause: error }) };
      }
      return { kind: 'failed', error };
    }
    if (response.status < 400) {
      try {
        return { kind: 'done', response: { status: response.status, headers: response.headers, body: readSuccessBody(request, response) } };
      } catch (error) {
        return { kind: 'failed', error };
      }
    }
    return { kind: 'failed', error: errorForResponse(request, response, this.#settings.rate.windowMs) };
  }

  /** Decides what a failure means for the call: give up, or go round again (and when). */
  async #decide(call: Call, error: unknown): Promise<Outcome> {
    const { request } = call;
    const { auth, log, policy, random } = this.#settings;
    const fields = { method: request.method, route: request.route };
    // A refused refresh token will not be accepted on a second try: only the API's 401 re-authenticates.
    if (error instanceof UnauthorizedError && error.route !== OAUTH_TOKEN_ROUTE && !call.reauthenticated && auth.invalidate) {
      // A rotated token or an expired access token: fetch a fresh one, once.
      call.reauthenticated = true;
      await auth.invalidate();
      log.info(fields, 'unauthorized: fetching a fresh token and trying once more');
      return { kind: 'again', afterMs: 0 };
    }
    if (error instanceof RateLimitedError) {
      // A 429 was refused, not applied: sending it again after the block is safe for any method.
      if (call.rateLimitRetries < policy.maxRateLimitRetries) {
        call.rateLimitRetries += 1;
        return { kind: 'again', afterMs: 0 };
      }
      return { kind: 'failed', error };
    }
    if (error instanceof TransientError) {
      // A request that may have applied is repeated only when repeating it is harmless.
      const safe = request.idempotent || !error.mayHaveApplied;
      if (safe && call.transientRetries + 1 < policy.maxAttempts) {
        call.transientRetries += 1;
        const afterMs = backoffDelay(policy, call.transientRetries, random);
        log.debug({ ...fields, status: error.status, afterMs }, 'transient failure: retrying');
        return { kind: 'again', afterMs };
      }
      return { kind: 'failed', error };
    }
    return { kind: 'failed', error };
  }

  async #attempt(call: Call, acquire: AcquireSend): Promise<void> {
    const closing = this.#closing;
    let outcome: Outcome;
    try {
      outcome = await this.#attemptOnce(call, acquire);
      if (outcome.kind === 'failed') {
        const signal = call.request.signal;
        if (signal?.aborted) outcome = { kind: 'failed', error: signal.reason };
        else if (closing.signal.aborted && outcome.error === closing.signal.reason) {
          outcome = { kind: 'failed', error: new ClientClosedError(call.request.method, call.request.route) };
        } else outcome = await this.#decide(call, outcome.error);
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
    const closing = this.#closing;
    try {
      if (afterMs > 0) {
        const signals = [closing.signal, call.request.signal].filter((s): s is AbortSignal => s !== undefined);
        await this.#settings.clock.sleep(afterMs, AbortSignal.any(signals));
      }
    } catch (error) {
      return this.#settle(call, { error: closing.signal.aborted ? new ClientClosedError(call.request.method, call.request.route) : error });
    }
    if (this.#closed) return this.#settle(call, { error: new ClientClosedError(call.request.method, call.request.route) });
    this.#dispatcher.push(call, true);
  }
}
