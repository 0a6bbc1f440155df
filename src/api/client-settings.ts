// What a client is made with: the options its callers give, checked and completed with the
// defaults, once, before any part of it is built.
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { RateSpec } from '../util/rate.js';
import type { Logger } from '../util/logger.js';
import { silentLogger } from '../util/logger.js';
import type { ApiTelemetry } from './telemetry.js';
import { noopTelemetry } from './telemetry.js';
import type { TokenSource } from './auth.js';
import { validateRetryPolicy, type RetryPolicy } from './backoff.js';
import type { RateModel } from './rate-model.js';
import { DEFAULT_TIMEOUTS, type Transport } from './transport.js';

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
  /** Replaces the HTTP transport (tests drive the client on a fake clock with it). */
  transport?: Transport;
  /** Random source for jitter (default Math.random). */
  random?: () => number;
}

export const DEFAULT_RATE: RateSpec = { limit: 50, windowMs: 60_000 };
const DEFAULT_CONCURRENCY = 4;

/** The options checked, with every default filled in. */
export interface ClientSettings {
  readonly origin: string;
  /** The base URL's path, without a trailing slash (`''` for none). */
  readonly basePath: string;
  readonly auth: TokenSource;
  readonly rate: RateSpec;
  readonly rateModel: RateModel;
  readonly concurrency: number;
  readonly timeouts: typeof DEFAULT_TIMEOUTS;
  readonly policy: RetryPolicy;
  readonly stateDir: string | undefined;
  readonly clock: Clock;
  readonly log: Logger;
  readonly telemetry: ApiTelemetry;
  readonly random: () => number;
  readonly transport: Transport | undefined;
}

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

/** The options checked (a TypeError names the first that is wrong) and completed with the defaults. */
export function clientSettings(options: ClientOptions): ClientSettings {
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
    auth: options.auth,
    rate: options.rate ?? DEFAULT_RATE,
    rateModel,
    concurrency,
    timeouts,
    policy: validateRetryPolicy(options.retry),
    stateDir: options.stateDir,
    clock: options.clock ?? systemClock,
    log: options.log ?? silentLogger,
    telemetry: options.telemetry ?? noopTelemetry,
    random: options.random ?? Math.random,
    transport: options.transport,
  };
}
