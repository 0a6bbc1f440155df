// `reconcile approve [--revision R] [--project P]` and `reconcile resume [--rollout NAME]`: a
// running daemon's `POST /approve` and `POST /resume`, with the bearer token of
// --trigger-token-file (the token `POST /reconcile` takes).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError, type CommandContext } from '../context.js';

/** The daemon answers once it has recorded the decision. */
const REQUEST_TIMEOUT_MS = 30_000;

interface Answer {
  status?: string;
  message?: string;
  revision?: string;
  projects?: string[] | 'all';
  rollout?: string;
  wave?: string;
  next?: string;
}

async function post(context: CommandContext, command: string, path: string, body: Record<string, unknown>): Promise<{ code: number; answer?: Answer }> {
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
  let answer: Answer = {};
  try {
    answer = (await response.json()) as Answer;
  } catch {
    answer = {};
  }
  if ((response.status === 404 || response.status === 405) && answer.status === undefined) {
    context.stderr.write(`reconcile: ${command}: ${url.origin} has no ${path} endpoint: start the daemon with --trigger-token-file\n`);
    return { code: 1 };
  }
  if (!response.ok) {
    context.stderr.write(`reconcile: ${command}: the daemon answered ${response.status}: ${answer.message ?? answer.status ?? 'no answer'}\n`);
    return { code: 1 };
  }
  return { code: 0, answer };
}

function shown(revision: string): string {
  return revision.startsWith('content-') ? revision : revision.slice(0, 12);
}

export async function runApprove(context: CommandContext): Promise<number> {
  const revision = context.settings.revision;
  const projects = (context.settings.project ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const { code, answer } = await post(context, 'approve', '/approve', { ...(revision !== undefined ? { revision } : {}), ...(projects.length > 0 ? { projects } : {}) });
  if (code !== 0 || !answer) return code;
  const scope = answer.projects === 'all' || answer.projects === undefined ? 'every project' : answer.projects.join(', ');
  context.stdout.write(`approved ${answer.revision ? shown(answer.revision) : 'the current revision'} for ${scope}; a pass applies what waited for it\n`);
  return 0;
}

export async function runResume(context: CommandContext): Promise<number> {
  const rollout = context.settings.rollout;
  const { code, answer } = await post(context, 'resume', '/resume', rollout !== undefined ? { rollout } : {});
  if (code !== 0 || !answer) return code;
  context.stdout.write(`rollout ${answer.rollout} resumed at ${shown(answer.revision ?? '')}: wave ${answer.wave} counts as passed${answer.next ? `, wave ${answer.next} starts` : ', and it was the last'}\n`);
  return 0;
}
