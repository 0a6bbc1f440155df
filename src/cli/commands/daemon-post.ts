// One authenticated POST to a running daemon's endpoint (`/reconcile`, `/approve`, `/resume`),
// with the bearer token of --trigger-token-file: the usage checks, the token file, the request
// and the answers every such command shares.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError, type CommandContext } from '../context.js';
import type { Settings } from '../settings.js';

/** The daemon answers once it has read the checkout or recorded the decision. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What a daemon endpoint answers: `status` or `message`, plus fields of its own. */
export interface DaemonAnswer {
  status?: string;
  message?: string;
}

/**
 * Sends `body` to `path` of the daemon at --daemon-url and reads its JSON answer. On any
 * failure it writes the reason to standard error (`describeFailure` words a refusal's answer)
 * and returns code 1 without an answer.
 */
export async function postToDaemon<Answer extends DaemonAnswer>(
  context: CommandContext<Pick<Settings, 'triggerTokenFile' | 'daemonUrl'>>,
  command: string,
  path: string,
  body: Record<string, unknown>,
  describeFailure: (answer: Answer) => string = (answer) => answer.message ?? answer.status ?? 'no answer',
): Promise<{ code: number; answer?: Answer }> {
  if (context.positionals.length > 0) throw new UsageError(`${command}: unexpected argument \`${context.positionals[0]}\``);
  const tokenFile = context.settings.triggerTokenFile;
  if (!tokenFile) throw new UsageError(`${command}: set --trigger-token-file PATH (or RECONCILE_TRIGGER_TOKEN_FILE) to the token the daemon was started with`);
  const base = context.settings.daemonUrl;
  let url: URL;
  try {
    url = new URL(path, base);
  } catch {
    throw new UsageError(`${command}: --daemon-url must be a URL such as http://127.0.0.1:9464, got \`${base}\``);
  }
  let token: string;
  try {
    token = (await readFile(resolve(context.cwd, tokenFile), 'utf8')).trim();
  } catch (error) {
    context.stderr.write(`reconcile: ${command}: cannot read the token file ${tokenFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})\n`);
    return { code: 1 };
  }
  if (token === '') {
    context.stderr.write(`reconcile: ${command}: the token file ${tokenFile} is empty\n`);
    return { code: 1 };
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.any([context.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    context.stderr.write(`reconcile: ${command}: no answer from the daemon at ${url.origin} (${cause})\n`);
    return { code: 1 };
  }
  // An answer that is not JSON (a proxy's error page) counts as an empty one.
  const answer = (await response.json().catch(() => ({}))) as Answer;
  if ((response.status === 404 || response.status === 405) && answer.status === undefined) {
    context.stderr.write(`reconcile: ${command}: ${url.origin} has no ${path} endpoint: start the daemon with --trigger-token-file\n`);
    return { code: 1 };
  }
  if (!response.ok) {
    context.stderr.write(`reconcile: ${command}: the daemon answered ${response.status}: ${describeFailure(answer)}\n`);
    return { code: 1 };
  }
  return { code: 0, answer };
}
