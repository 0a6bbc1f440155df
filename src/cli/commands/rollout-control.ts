// `reconcile approve [--revision R] [--project P]` and `reconcile resume [--rollout NAME]`: a
// running daemon's `POST /approve` and `POST /resume`, with the bearer token of
// --trigger-token-file (the token `POST /reconcile` takes).
import type { CommandContext } from '../context.js';
import { postToDaemon } from './daemon-post.js';

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

export async function runApprove(context: CommandContext): Promise<number> {
  const revision = context.settings.revision;
  const projects = (context.settings.project ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const { code, answer } = await postToDaemon<Answer>(context, 'approve', '/approve', { ...(revision !== undefined ? { revision } : {}), ...(projects.length > 0 ? { projects } : {}) });
  if (code !== 0 || !answer) return code;
  const scope = answer.projects === 'all' || answer.projects === undefined ? 'every project' : answer.projects.join(', ');
  context.stdout.write(`approved ${answer.revision ? shown(answer.revision) : 'the current revision'} for ${scope}; a pass applies what waited for it\n`);
  return 0;
}

export async function runResume(context: CommandContext): Promise<number> {
  const rollout = context.settings.rollout;
  const { code, answer } = await postToDaemon<Answer>(context, 'resume', '/resume', rollout !== undefined ? { rollout } : {});
  if (code !== 0 || !answer) return code;
  context.stdout.write(`rollout ${answer.rollout} resumed at ${shown(answer.revision ?? '')}: wave ${answer.wave} counts as passed${answer.next ? `, wave ${answer.next} starts` : ', and it was the last'}\n`);
  return 0;
}
