// `reconcile trigger [--project P]`: asks a running daemon for an immediate pass through its
// `POST /reconcile` endpoint, with the bearer token of --trigger-token-file.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError, type CommandContext } from '../context.js';

/** The daemon answers once it has read the checkout; a large tree takes a moment. */
const REQUEST_TIMEOUT_MS = 30_000;

interface Answer {
  status?: string;
  projects?: string[] | 'all';
  revision?: string;
  current?: string;
  message?: string;
  pass?: number;
  queued?: boolean;
  joined?: boolean;
}

function describe(answer: Answer): string {
  const revision = answer.revision ? ` at ${answer.revision.slice(0, 12)}` : '';
  switch (answer.status) {
    case 'started': {
      // A pass already asked for (joined) or waiting for the running one (queued) covers the request.
      const which = answer.pass === undefined ? '' : answer.joined ? ` (joined pass ${answer.pass}, already queued)` : answer.queued ? ` (pass ${answer.pass}, queued behind the running one)` : ` (pass ${answer.pass})`;
      return `pass started for ${answer.projects === 'all' || answer.projects === undefined ? 'all projects' : answer.projects.join(', ')}${revision}${which}`;
    }
    case 'waiting':
      return `waiting for ${answer.revision?.slice(0, 12)} to reach the checkout${answer.current ? ` (it has ${answer.current.slice(0, 12)})` : ''}`;
    case 'current':
      return `the checkout is already at ${answer.revision?.slice(0, 12)}; its pass has run or is running`;
    default:
      return answer.message ?? answer.status ?? 'no answer';
  }
}

export async function run(context: CommandContext): Promise<number> {
  if (context.positionals.length > 0) throw new UsageError(`trigger: unexpected argument \`${context.positionals[0]}\``);
  const tokenFile = context.settings.triggerTokenFile;
  if (!tokenFile) throw new UsageError('trigger: set --trigger-token-file PATH (or RECONCILE_TRIGGER_TOKEN_FILE) to the token the daemon was started with');
  const base = context.settings.daemonUrl;
  let url: URL;
  try {
    url = new URL('/reconcile', base);
  } catch {
    throw new UsageError(`trigger: --daemon-url must be a URL such as http://127.0.0.1:9464, got \`${base}\``);
  }
  const projects = (context.settings.project ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  let token: string;
  try {
    token = (await readFile(resolve(context.cwd, tokenFile), 'utf8')).trim();
  } catch (error) {
    context.stderr.write(`reconcile: trigger: cannot read the token file ${tokenFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})\n`);
    return 1;
  }
  if (token === '') {
    context.stderr.write(`reconcile: trigger: the token file ${tokenFile} is empty\n`);
    return 1;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(projects.length > 0 ? { projects } : {}),
      signal: AbortSignal.any([context.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    context.stderr.write(`reconcile: trigger: no answer from the daemon at ${url.origin} (${cause})\n`);
    return 1;
  }
  let answer: Answer = {};
  try {
    answer = (await response.json()) as Answer;
  } catch {
    answer = {};
  }
  if ((response.status === 404 || response.status === 405) && answer.status === undefined) {
    context.stderr.write(`reconcile: trigger: ${url.origin} has no /reconcile endpoint: start the daemon with --trigger-token-file\n`);
    return 1;
  }
  if (!response.ok) {
    context.stderr.write(`reconcile: trigger: the daemon answered ${response.status}: ${describe(answer)}\n`);
    return 1;
  }
  context.stdout.write(`${describe(answer)}\n`);
  return 0;
}
