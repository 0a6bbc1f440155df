import { tokenSourceFromEnvironment } from '../api/auth.js';
import { createClient, type ApiClient } from '../api/client.js';
import type { RateModel } from '../api/rate-model.js';
import type { RunningEmulator } from '../emulator/index.js';
import type { Logger } from '../util/logger.js';
import type { ApiTelemetry } from '../api/telemetry.js';
import type { Clock } from '../util/clock.js';
import type { RateSpec } from '../util/rate.js';
import type { AuthOptionValues } from '../api/auth.js';
import { UsageError } from './context.js';
import type { Settings } from './settings.js';

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
  shard?: { auth: { values: AuthOptionValues; env: NodeJS.ProcessEnv }; stateDir: string; rate?: RateSpec };
}

export { resolveRate, resolveRateModel } from './settings.js';

/**
 * Builds the client from the options every API command shares (`--api-url`, the token from the
 * environment or `--token-file`, `--rate-limit`, `--state-dir`). `--sandbox` has its own
 * session (src/cli/sandbox-session.ts).
 */
/** The settings an API session reads. */
export type ApiSessionSettings = Pick<Settings, 'budget' | 'rateModel' | 'stateDir' | 'seed' | 'apiUrl' | 'tokenFile' | 'httpTimeoutMs'>;

export async function openApiSession(settings: ApiSessionSettings, env: NodeJS.ProcessEnv, options: ApiSessionOptions = {}): Promise<ApiSession> {
  const rate = options.shard?.rate ?? settings.budget;
  const rateModel = settings.rateModel;
  const stateDir = options.shard?.stateDir ?? settings.stateDir;
  if (settings.seed !== undefined) throw new UsageError('--seed needs --sandbox');
  const baseUrl = settings.apiUrl;
  if (!baseUrl) throw new UsageError('the API URL is missing: set --api-url or MANAGEMENT_API_URL (or use --sandbox)');
  const auth = options.shard
    ? tokenSourceFromEnvironment(options.shard.auth.values, options.shard.auth.env, { stateDir })
    : tokenSourceFromEnvironment({ ...(settings.tokenFile !== undefined ? { 'token-file': settings.tokenFile } : {}), 'api-url': baseUrl }, env, { stateDir });
  const timeoutMs = settings.httpTimeoutMs;
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
