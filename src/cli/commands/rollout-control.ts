// `reconcile approve [--revision R] [--project P]` and `reconcile resume [--rollout NAME]
// [--revision R]`: a running daemon's `POST /approve` and `POST /resume`, with the bearer token
// of --trigger-token-file (the token `POST /reconcile` takes). An approval always names its
// revision: without --revision, a terminal is shown the daemon's revision and what waits for
// approval and asked; anywhere else the command is refused.
import { createInterface } from 'node:readline';
import { UsageError, type ContextOf } from '../context.js';
import { isTty } from '../logging.js';
import { printable } from '../../manifests/printable.js';
import { postToDaemon } from './daemon-post.js';
import { daemonView } from './status.js';

interface Answer {
  status?: string;
  message?: string;
  revision?: string;
  projects?: string[] | 'all';
  rollout?: string;
  wave?: string;
  next?: string;
}

function shown(revision: string): string {
  return revision.startsWith('content-') ? revision : revision.slice(0, 12);
}

/** One line from the terminal: true for `y` or `yes` only; end of input or a signal is a no. */
async function ask(context: ContextOf<'approve'>, question: string): Promise<boolean> {
  const input = context.stdin!;
  const lines = createInterface({ input, output: context.stderr, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((done) => {
      context.signal.addEventListener('abort', () => done(undefined), { once: true });
      lines.once('close', () => done(undefined));
      lines.once('line', done);
      context.stderr.write(question);
    });
    return answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    lines.close();
    input.pause();
  }
}

/**
 * Without --revision, on a terminal: the daemon's revision and the changes that wait for an
 * approval, then a question. The revision shown is the one sent, so a commit that lands
 * meanwhile is refused by the daemon (409), never approved unseen.
 */
async function revisionAsked(context: ContextOf<'approve'>, projects: readonly string[]): Promise<string | number> {
  if (!context.stdin || !isTty(context.stdin) || !isTty(context.stderr)) {
    throw new UsageError('approve: pass --revision R (the revision the plan, `reconcile status` or the approval_needed notification shows): without a terminal to show it and ask, an approval always names its revision');
  }
  const found = await daemonView(context);
  if (typeof found === 'string') {
    context.stderr.write(`reconcile: approve: ${found}\n`);
    return 1;
  }
  const waiting = found.view.projects.flatMap((project) => project.pending).filter((change) => change.waitingFor === 'approval' && (projects.length === 0 || projects.includes(change.project)));
  // A checkout without git has no commit: its revision is the one its held changes name (`--revision content-...`).
  const named = new Set(waiting.flatMap((change) => /--revision (\S+)/.exec(change.reason ?? '')?.[1] ?? []));
  const revision = found.view.revision ?? (named.size === 1 ? [...named][0] : undefined);
  if (!revision) {
    context.stderr.write('reconcile: approve: the daemon reports no revision that waits for an approval: pass --revision R\n');
    return 1;
  }
  const lines = [`Revision ${shown(revision)} (${found.from}).`, waiting.length === 0 ? 'No change waits for an approval.' : 'Changes that wait for an approval:'];
  for (const change of waiting) lines.push(`  ${change.project}  ${change.kind}/${change.name}  ${change.action}${change.reason ? `  ${change.reason}` : ''}`);
  context.stderr.write(`${lines.map(printable).join('\n')}\n`);
  const scope = projects.length > 0 ? projects.join(', ') : 'every project';
  if (!(await ask(context, `Approve revision ${shown(revision)} for ${printable(scope)}? Only \`y\` or \`yes\` approves. [y/N] `))) {
    context.stderr.write('nothing approved\n');
    return 1;
  }
  return revision;
}

export async function runApprove(context: ContextOf<'approve'>): Promise<number> {
  const projects = (context.settings.project ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  let revision = context.settings.revision;
  if (revision === undefined) {
    const asked = await revisionAsked(context, projects);
    if (typeof asked === 'number') return asked;
    revision = asked;
  }
  const { code, answer } = await postToDaemon<Answer>(context, 'approve', '/approve', { ...(revision !== undefined ? { revision } : {}), ...(projects.length > 0 ? { projects } : {}) });
  if (code !== 0 || !answer) return code;
  const scope = answer.projects === 'all' || answer.projects === undefined ? 'every project' : answer.projects.join(', ');
  context.stdout.write(`approved ${answer.revision ? shown(answer.revision) : 'the current revision'} for ${scope}; a pass applies what waited for it\n`);
  return 0;
}

export async function runResume(context: ContextOf<'resume'>): Promise<number> {
  const rollout = context.settings.rollout;
  const revision = context.settings.revision;
  const { code, answer } = await postToDaemon<Answer>(context, 'resume', '/resume', { ...(rollout !== undefined ? { rollout } : {}), ...(revision !== undefined ? { revision } : {}) });
  if (code !== 0 || !answer) return code;
  context.stdout.write(`rollout ${answer.rollout} resumed at ${shown(answer.revision ?? '')}: wave ${answer.wave} counts as passed${answer.next ? `, wave ${answer.next} starts` : ', and it was the last'}\n`);
  return 0;
}
