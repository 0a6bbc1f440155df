import { startEmulator, SeedError } from '../../emulator/index.js';
import { parseRate } from '../../util/rate.js';
import { parseRateModel } from '../../api/rate-model.js';
import { UsageError, stringOption, type CommandContext } from '../context.js';

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`Expected --port to be an integer between 0 and 65535, got \`${text}\``);
  return port;
}

function parseSpeed(text: string): number {
  const speed = Number(text);
  if (!Number.isFinite(speed) || speed <= 0) throw new UsageError(`Expected --speed to be a number > 0, got \`${text}\``);
  return speed;
}

/**
 * `reconcile emulator`: runs the Management API emulator until SIGTERM/SIGINT. Prints exactly
 * two lines that scripts read (the URL and a token it accepts); nothing else goes to stdout.
 */
export async function run(context: CommandContext): Promise<number> {
  const host = stringOption(context, 'host') ?? '127.0.0.1';
  const port = parsePort(stringOption(context, 'port') ?? '8787');
  const speed = parseSpeed(stringOption(context, 'speed') ?? '1');
  // The emulator's own limit is the service's (60/60s). The shared `--rate-limit` option also
  // carries the reconciler's budget default and RECONCILE_RATE_LIMIT, which must not apply here:
  // only the flag itself sets the emulator's limit.
  const rateText = context.flags.has('rate-limit') ? stringOption(context, 'rate-limit') : undefined;
  let rateLimit;
  try {
    rateLimit = rateText === undefined ? undefined : parseRate(rateText);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // Like the limit, the model is the flag's alone: RECONCILE_RATE_MODEL is the reconciler's.
  const modelText = context.flags.has('rate-model') ? stringOption(context, 'rate-model') : undefined;
  let rateModel;
  try {
    rateModel = modelText === undefined ? undefined : parseRateModel(modelText);
  } catch (error) {
    throw new UsageError(`--rate-model: ${(error as Error).message}`);
  }
  const token = stringOption(context, 'token');
  const seed = stringOption(context, 'seed');
  let emulator;
  try {
    emulator = await startEmulator({ host, port, speed, rateLimit, token, seed, ...(rateModel ? { rateModel } : {}) });
  } catch (error) {
    if (error instanceof SeedError || error instanceof TypeError) {
      context.stderr.write(`reconcile emulator: ${error.message}\n`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      context.stderr.write(`reconcile emulator: cannot listen on ${host}:${port} (${code})\n`);
      return 1;
    }
    throw error;
  }
  context.stdout.write(`MANAGEMENT_API_URL=${emulator.url}\nMANAGEMENT_API_TOKEN=${emulator.token}\n`);
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) return resolve();
    context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await emulator.close();
  return 0;
}
