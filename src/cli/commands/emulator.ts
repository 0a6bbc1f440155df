import { startEmulator, SeedError } from '../../emulator/index.js';
import type { ContextOf } from '../context.js';

/**
 * `reconcile emulator`: runs the Management API emulator until SIGTERM/SIGINT. Prints exactly
 * two lines that scripts read (the URL and a token it accepts); nothing else goes to stdout.
 */
export async function run(context: ContextOf<'emulator'>): Promise<number> {
  const { host, port, speed, token, seed } = context.settings;
  // The emulator's own limit is the service's (60/60s). The shared `--rate-limit` option also
  // carries the reconciler's budget default and RECONCILE_RATE_LIMIT, which must not apply here:
  // only the flag itself sets the emulator's limit; likewise the model (RECONCILE_RATE_MODEL is
  // the reconciler's).
  const rateLimit = context.settings.rateLimitFlag;
  const rateModel = context.settings.rateModelFlag;
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
