import { resolve } from 'node:path';
import { tokenSourceFromEnvironment, staticToken } from '../api/auth.js';
import { createClient, type ApiClient } from '../api/client.js';
import type { RunningEmulator } from '../emulator/index.js';
import type { Logger } from '../reconcile/types.js';
import type { ApiTelemetry } from '../telemetry.js';
import type { Clock } from '../util/clock.js';
import { parseRate, type RateSpec } from '../util/rate.js';
import { UsageError, stringOption, type CommandContext } from './context.js';

/** The API a command talks to: the real one, or with `--sandbox` the emulator in-process. */
export interface ApiSession {
  client: ApiClient;
  baseUrl: string;
  stateDir: string;
  rate: RateSpec;
  /** The in-process emulator of `--sandbox`. */
  sandbox?: RunningEmulator;
  /** Closes the client (persisting the request window), then the sandbox. */
  close(): Promise<void>;
}

export interface ApiSessionOptions {
  telemetry?: ApiTelemetry;
  log?: Logger;
  clock?: Clock;
}

/**
 * Builds the client from the options every API command shares (`--api-url`, the token from the
 * environment or `--token-file`, `--rate-limit`, `--state-dir`, `--sandbox`, `--seed`).
 */
export async function openApiSession(context: CommandContext, options: ApiSessionOptions = {}): Promise<ApiSession> {
  const rateText = stringOption(context, 'rate-limit') ?? '50/60s';
  let rate: RateSpec;
  try {
    rate = parseRate(rateText);
  } catch (error) {
    throw new UsageError(`--rate-limit: ${(error as Error).message}`);
  }
  const stateDir = resolve(context.cwd, stringOption(context, 'state-dir') ?? '.reconcile');
  let sandbox: RunningEmulator | undefined;
  let baseUrl: string;
  let auth;
  if (context.values.sandbox === true) {
    const { startEmulator } = await import('../emulator/index.js');
    const seed = stringOption(context, 'seed');
    sandbox = await startEmulator({ host: '127.0.0.1', port: 0, ...(seed ? { seed: resolve(context.cwd, seed) } : {}) });
    baseUrl = sandbox.url;
    auth = staticToken(sandbox.token);
  } else {
    if (stringOption(context, 'seed') !== undefined) throw new UsageError('--seed needs --sandbox');
    const url = stringOption(context, 'api-url');
    if (!url) throw new UsageError('the API URL is missing: set --api-url or MANAGEMENT_API_URL (or use --sandbox)');
    baseUrl = url;
    auth = tokenSourceFromEnvironment(context.values, context.env);
  }
  let client: ApiClient;
  try {
    client = await createClient({
      baseUrl,
      auth,
      rate,
      stateDir,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  } catch (error) {
    await sandbox?.close();
    throw error;
  }
  return {
    client,
    baseUrl,
    stateDir,
    rate,
    sandbox,
    async close() {
      try {
        await client.close();
      } finally {
        await sandbox?.close();
      }
    },
  };
}
