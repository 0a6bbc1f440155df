import { resolve } from 'node:path';
import { tokenSourceFromEnvironment } from '../api/auth.js';
import { createClient, type ApiClient } from '../api/client.js';
import { parseRateModel, type RateModel } from '../api/rate-model.js';
import type { RunningEmulator } from '../emulator/index.js';
import type { Logger } from '../util/logger.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Clock } from '../util/clock.js';
import { parseDuration, parseRate, type RateSpec } from '../util/rate.js';
import { UsageError, stringOption, type CommandContext } from './context.js';
import type { ParsedValues } from './options.js';

/** The API a command talks to: the real one, or with `--sandbox` the emulator in-process. */
export interface ApiSession {
  client: ApiClient;
  baseUrl: string;
  stateDir: string;
  rate: RateSpec;
  rateModel: RateModel;
  /** The in-process emulator of `--sandbox`. */
  sandbox?: RunningEmulator;
  /** Closes the client (persisting the request window), then the sandbox. */
  close(): Promise<void>;
}

interface ApiSessionOptions {
  telemetry?: ApiTelemetry;
  log?: Logger;
  clock?: Clock;
  /** A shard's own credentials, state directory and budget, in place of the process-wide ones. */
  shard?: { auth: { values: ParsedValues; env: NodeJS.ProcessEnv }; stateDir: string; rate?: RateSpec };
}

/**
 * The budget when `--rate-limit` (and RECONCILE_RATE_LIMIT) is not given. Together they stay
 * within the spec's 60 per minute for one identity: a daemon and a CI dry run (or a person at a
 * terminal) sharing a token never exceed it, whatever each does.
 */
const DAEMON_DEFAULT_RATE = '45/60s';
const ONE_SHOT_DEFAULT_RATE = '15/60s';

/** The budget a command uses: the option's, else the default of its kind (daemon or one-shot). */
export function resolveRate(context: CommandContext): RateSpec {
  const rateText = stringOption(context, 'rate-limit') ?? (context.values.watch === true ? DAEMON_DEFAULT_RATE : ONE_SHOT_DEFAULT_RATE);
  try {
    return parseRate(rateText);
  } catch (error) {
    throw new UsageError(`--rate-limit: ${(error as Error).message}`);
  }
}

export function resolveRateModel(context: CommandContext): RateModel {
  try {
    return parseRateModel(stringOption(context, 'rate-model') ?? 'user');
  } catch (error) {
    throw new UsageError(`--rate-model: ${(error as Error).message}`);
  }
}

/**
 * Builds the client from the options every API command shares (`--api-url`, the token from the
 * environment or `--token-file`, `--rate-limit`, `--state-dir`). `--sandbox` has its own
 * session (src/cli/sandbox-session.ts).
 */
export async function openApiSession(context: CommandContext, options: ApiSessionOptions = {}): Promise<ApiSession> {
  let rate = resolveRate(context);
  const rateModel = resolveRateModel(context);
  if (options.shard?.rate) rate = options.shard.rate;
  const stateDir = options.shard?.stateDir ?? resolve(context.cwd, stringOption(context, 'state-dir') ?? '.reconcile');
  if (stringOption(context, 'seed') !== undefined) throw new UsageError('--seed needs --sandbox');
  const baseUrl = stringOption(context, 'api-url');
  if (!baseUrl) throw new UsageError('the API URL is missing: set --api-url or MANAGEMENT_API_URL (or use --sandbox)');
  const auth = options.shard
    ? tokenSourceFromEnvironment(options.shard.auth.values, options.shard.auth.env, { stateDir })
    : tokenSourceFromEnvironment(context.values, context.env, { stateDir });
  let timeoutMs: number;
  try {
    timeoutMs = parseDuration(stringOption(context, 'http-timeout') ?? '30s');
  } catch (error) {
    throw new UsageError(`--http-timeout: ${(error as Error).message}`);
  }
  const client: ApiClient = await createClient({
    baseUrl,
    auth,
    rate,
    rateModel,
    stateDir,
    timeouts: { headersMs: timeoutMs, bodyMs: timeoutMs },
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return { client, baseUrl, stateDir, rate, rateModel, close: () => client.close() };
}
