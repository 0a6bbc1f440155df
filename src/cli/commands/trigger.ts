// `reconcile trigger [--project P]`: asks a running daemon for an immediate pass through its
// `POST /reconcile` endpoint, with the bearer token of --trigger-token-file.
import type { ContextOf } from '../context.js';
import { postToDaemon } from './daemon-post.js';

interface Answer {
  status?: string;
  projects?: string[] | 'all';
  revision?: string;
  current?: string;
  message?: string;
  pass?: number;
  queued?: boolean;
  joined?: boolean;
  result?: string;
  finishedAt?: string;
  nextPassAt?: string;
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
    case 'recent':
      return `pass ${answer.pass} covered ${answer.projects === 'all' || answer.projects === undefined ? 'all projects' : answer.projects.join(', ')}${revision} and finished at ${answer.finishedAt} (${answer.result}), with no new revision since: no pass started; the next may start at ${answer.nextPassAt}`;
    default:
      return answer.message ?? answer.status ?? 'no answer';
  }
}

export async function run(context: ContextOf<'trigger'>): Promise<number> {
  const projects = (context.settings.project ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const { code, answer } = await postToDaemon<Answer>(context, 'trigger', '/reconcile', projects.length > 0 ? { projects } : {}, describe);
  if (code !== 0 || !answer) return code;
  context.stdout.write(`${describe(answer)}\n`);
  return 0;
}
