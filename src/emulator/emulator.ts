import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scaledClock, systemClock, type Clock } from '../util/clock.js';
import type { RateSpec } from '../util/rate.js';
import { handleAdmin } from './admin.js';
import { resolveDurations, type LifecycleDurations } from './durations.js';
import { FaultInjector, validateFaultConfig, type FaultConfig } from './faults.js';
import { RateLimiter, RouteLimiter, type EmulatorRateModel } from './rate-limiter.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import type { RequestTarget } from './request-target.js';
import { Router } from './router.js';
import { buildStateFromSeed, loadSeedFile, newSeedDefaults, type SeedDefaults, type SeedInput } from './seed.js';
import { createHttpServer, type EmulatorCore } from './server.js';
import { DEFAULT_OPEN_DATABASES, ProjectDatabases } from './databases.js';
import type { EmulatorState } from './state.js';
import { buildHandlers } from './handlers/index.js';
import type { Handler } from './handlers/context.js';

export interface EmulatorOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 8787; 0 picks a free port). */
  port?: number;
  /** Starting state: an object, or the path of a YAML/JSON seed file. */
  seed?: SeedInput | string;
  /** The default user's personal access token (generated when absent). */
  token?: string;
  /** The per-user limit (default 60 requests per 60 s); in the `scoped` model, the limit of each count. */
  rateLimit?: RateSpec;
  /** How requests are counted (default `user`, the spec's): see rate-limiter.ts. */
  rateModel?: EmulatorRateModel;
  /** Lifecycle clock factor (default 1): 100 makes a two-minute create take 1.2 s. */
  speed?: number;
  /** Lifecycle clock; overrides `speed` (tests pass a ManualClock). */
  clock?: Clock;
  /** Clock of the rate limit, injected latency, token expiry and the request log (default: the system clock). */
  wallClock?: Clock;
  /** Per-transition durations in emulator milliseconds. */
  durations?: Partial<LifecycleDurations>;
  /** Largest request body accepted (default 1 MiB); larger bodies answer 413. */
  bodyLimitBytes?: number;
  /** Largest function deploy body accepted (default 10 MiB). */
  deployBodyLimitBytes?: number;
  /** Lifetime of OAuth access tokens in seconds (default 3600). */
  oauthTokenTtlSeconds?: number;
  /** Project databases open at once (default 4); more are closed, least recently used first, and reopened with their data. */
  openDatabases?: number;
}

export const DEFAULT_RATE_LIMIT: RateSpec = { limit: 60, windowMs: 60_000 };
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
export const DEFAULT_DEPLOY_BODY_LIMIT = 10 * 1024 * 1024;

function positiveInteger(value: unknown, name: string, min = 1): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`Expected \`${name}\` to be an integer >= ${min}, got \`${String(value)}\` (${typeof value})`);
  }
  return value;
}

/** Validates options up front, with exact messages. */
function validateOptions(options: EmulatorOptions): void {
  if (options.host !== undefined && (typeof options.host !== 'string' || options.host === '')) throw new TypeError(`Expected \`host\` to be a non-empty string, got \`${String(options.host)}\``);
  if (options.port !== undefined && (typeof options.port !== 'number' || !Number.isInteger(options.port) || options.port < 0 || options.port > 65535)) {
    throw new TypeError(`Expected \`port\` to be an integer between 0 and 65535, got \`${String(options.port)}\` (${typeof options.port})`);
  }
  if (options.token !== undefined && (typeof options.token !== 'string' || !/^\S{8,}$/.test(options.token))) {
    throw new TypeError('Expected `token` to be at least 8 characters without spaces');
  }
  if (options.rateLimit !== undefined) {
    positiveInteger(options.rateLimit.limit, 'rateLimit.limit');
    if (typeof options.rateLimit.windowMs !== 'number' || !(options.rateLimit.windowMs > 0)) {
      throw new TypeError(`Expected \`rateLimit.windowMs\` to be a number > 0, got \`${String(options.rateLimit.windowMs)}\``);
    }
  }
  if (options.rateModel !== undefined && options.rateModel !== 'user' && options.rateModel !== 'scoped') {
    throw new TypeError(`Expected \`rateModel\` to be \`user\` or \`scoped\`, got \`${String(options.rateModel)}\``);
  }
  if (options.speed !== undefined && (typeof options.speed !== 'number' || !Number.isFinite(options.speed) || options.speed <= 0)) {
    throw new TypeError(`Expected \`speed\` to be a finite number > 0, got \`${String(options.speed)}\` (${typeof options.speed})`);
  }
  if (options.bodyLimitBytes !== undefined) positiveInteger(options.bodyLimitBytes, 'bodyLimitBytes');
  if (options.deployBodyLimitBytes !== undefined) positiveInteger(options.deployBodyLimitBytes, 'deployBodyLimitBytes');
  if (options.oauthTokenTtlSeconds !== undefined) positiveInteger(options.oauthTokenTtlSeconds, 'oauthTokenTtlSeconds');
  if (options.openDatabases !== undefined) positiveInteger(options.openDatabases, 'openDatabases');
}

/** The emulator: state, clocks, limiter, faults and the HTTP server around them. */
export class Emulator implements EmulatorCore {
  state: EmulatorState;
  readonly durations: LifecycleDurations;
  readonly limiter: RateLimiter;
  readonly routeLimiter: RouteLimiter;
  readonly faults = new FaultInjector();
  readonly databases: ProjectDatabases;
  readonly log = new RequestLog();
  readonly router = new Router();
  readonly handlers: Record<string, Handler> = buildHandlers({ oauthTokenTtlSeconds: () => this.oauthTokenTtlSeconds });
  readonly wallClock: Clock;
  readonly bodyLimitBytes: number;
  readonly deployBodyLimitBytes: number;
  readonly oauthTokenTtlSeconds: number;
  readonly #clock: Clock;
  #offset = 0;
  #seed: SeedInput;
  /** The default user's token: `--token`, else the one the starting state gave them; fixed for the emulator's lifetime. */
  readonly #token: string;
  /** Default user id, organization slug and OAuth client, chosen once so reset and seed keep them. */
  readonly #defaults: SeedDefaults = newSeedDefaults();
  readonly #rate: RateSpec;
  #server: Server | undefined;
  url = '';

  constructor(options: EmulatorOptions, seed: SeedInput) {
    validateOptions(options);
    this.durations = resolveDurations(options.durations);
    this.wallClock = options.wallClock ?? systemClock;
    this.#clock = options.clock ?? (options.speed && options.speed !== 1 ? scaledClock(options.speed) : systemClock);
    this.#rate = options.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.limiter = new RateLimiter(this.#rate, options.rateModel ?? 'user');
    this.routeLimiter = new RouteLimiter(this.#rate.windowMs);
    this.bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
    this.deployBodyLimitBytes = options.deployBodyLimitBytes ?? DEFAULT_DEPLOY_BODY_LIMIT;
    this.oauthTokenTtlSeconds = options.oauthTokenTtlSeconds ?? 3600;
    this.#seed = seed;
    this.databases = new ProjectDatabases({ maxOpen: options.openDatabases ?? DEFAULT_OPEN_DATABASES });
    // The token printed at start (or given) must keep working after reset and seed: every later
    // build gives it to the default user again, whatever the new seed lists for them.
    this.state = buildStateFromSeed(seed, { now: this.now(), durations: this.durations, token: options.token, defaults: this.#defaults });
    this.#token = options.token ?? firstPersonalToken(this.state);
  }

  #build(seed: SeedInput): EmulatorState {
    return buildStateFromSeed(seed, { now: this.now(), durations: this.durations, token: this.#token, defaults: this.#defaults });
  }

  now(): number {
    return this.#clock.now() + this.#offset;
  }

  advanceClock(ms: number): void {
    this.#offset += ms;
    this.state.settle(this.now());
  }

  /** Moves the lifecycle clock to each pending transition in turn until none is left. */
  advanceUntilIdle(): void {
    for (let guard = 0; guard < 100_000; guard++) {
      const next = this.state.nextTransitionAt();
      if (next === undefined) return;
      this.advanceClock(Math.max(0, next - this.now()));
    }
  }

  /** The default user's token chosen at start (`--token`, else their first personal access token then). */
  get token(): string {
    return this.#token;
  }

  admin(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<void> {
    return handleAdmin(this, req, res, target);
  }

  requests(since?: number): RequestLogEntry[] {
    return this.log.entries(since);
  }

  clearRequests(): void {
    this.log.clear();
  }

  setFaults(config: FaultConfig): void {
    validateFaultConfig(config);
    this.faults.configure(config);
    if (config.rateLimitBlock) {
      const users = config.rateLimitBlock.users ?? [...this.state.users.keys()];
      for (const user of users) this.limiter.block(user, this.wallClock.now(), config.rateLimitBlock.ms);
    }
  }

  faultConfig(): FaultConfig {
    return this.faults.config;
  }

  /** Back to the starting state: seed, no faults, empty request log and rate windows. */
  reset(): void {
    this.state = this.#build(this.#seed);
    void this.databases.clear();
    this.faults.configure({});
    this.limiter.reset();
    this.routeLimiter.reset();
    this.log.clear();
  }

  /** Replaces the state with a new seed (which becomes the state `reset` returns to). */
  seed(seed: SeedInput): void {
    const state = this.#build(seed);
    this.#seed = seed;
    this.state = state;
    void this.databases.clear();
    this.limiter.reset();
    this.routeLimiter.reset();
  }

  info(): Record<string, unknown> {
    return {
      url: this.url,
      token: this.token,
      now: this.now(),
      pending_transitions: this.state.pendingTransitions,
      next_transition_at: this.state.nextTransitionAt() ?? null,
      rate_limit: this.limiter.spec,
      rate_model: this.limiter.model,
      durations: this.durations,
      body_limit_bytes: this.bodyLimitBytes,
      deploy_body_limit_bytes: this.deployBodyLimitBytes,
      users: [...this.state.users.values()].map((u) => ({ id: u.id, name: u.name, email: u.email, default: u.id === this.state.defaultUserId })),
      organizations: [...this.state.organizations.values()].map((o) => ({ slug: o.slug, name: o.name, plan: o.plan })),
      oauth_apps: [...this.state.oauthApps.values()].map((a) => ({ client_id: a.clientId, client_secret: a.clientSecret, name: a.name, redirect_uris: a.redirectUris })),
    };
  }

  async listen(host: string, port: number): Promise<string> {
    const server = createHttpServer(this);
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${shownHost}:${address.port}`;
    return this.url;
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Held sockets (timeout faults) and idle keep-alive connections would keep close() waiting.
        server.closeAllConnections();
      });
    }
    await this.databases.close();
  }
}

function firstPersonalToken(state: EmulatorState): string {
  const token = [...state.tokens.values()].find((t) => t.userId === state.defaultUserId && t.kind === 'personal');
  // buildStateFromSeed always leaves the default user with at least one personal token.
  return token!.token;
}

export async function resolveSeed(seed: SeedInput | string | undefined): Promise<SeedInput> {
  if (seed === undefined) return {};
  if (typeof seed === 'string') return loadSeedFile(seed);
  return seed;
}
