// How each kind of receiver wants an event: the HTTP request to send. Bodies carry only what
// the event carries (ids, actions, counts, reasons, the revision): never a value.
import { createHmac } from 'node:crypto';
import type { NotificationEvent } from './events.js';
import { readSecret, type GithubReceiverSpec, type ReceiverSpec } from './config.js';

const SIGNATURE_HEADER = 'x-reconciler-signature-256';
const EVENT_HEADER = 'x-reconciler-event';
const DELIVERY_HEADER = 'x-reconciler-delivery';
const USER_AGENT = 'fleet-reconciler';

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** `sha256=<hex>` of the body, as GitHub signs its webhooks (receivers can reuse their check). */
function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

const FULL_COMMIT = /^[0-9a-f]{40}$/;

function shortRevision(revision: string | undefined): string {
  if (!revision) return '(unknown revision)';
  // A checkout without git: the rollout's digest of the documents, whole (it is what `reconcile approve` takes).
  return revision.startsWith('content-') ? revision : revision.slice(0, 12);
}

function countsText(event: NotificationEvent): string {
  const c = event.counts;
  if (!c) return '';
  return `${c.created} created, ${c.updated} updated, ${c.deleted} deleted, ${c.failed} failed, ${c.blocked} blocked`;
}

/** One line a person reads: Slack's text and the commit status's description. */
export function summaryLine(event: NotificationEvent): string {
  const revision = shortRevision(event.revision);
  const dry = event.dryRun ? ' (dry run)' : '';
  switch (event.type) {
    case 'revision_applied':
      return `${revision}${event.projects ? ` [${event.projects.join(', ')}]` : ''} ${event.dryRun ? 'planned' : 'applied'}: ${event.result === 'success' ? 'success' : 'failed'}; ${countsText(event)}`;
    case 'resource_failed':
      return `${event.resource} ${event.action} failed at ${revision}: ${event.reason ?? 'error'}`;
    case 'change_blocked':
      return `${event.resource} ${event.action} blocked at ${revision}: ${event.reason ?? 'blocked'}`;
    case 'deletion_done':
      return `${event.resource} deleted at ${revision}`;
    case 'drift_repaired':
      return `${event.resource} drift repaired (${(event.fields ?? []).join(', ') || event.action})`;
    case 'drift_detected':
      return `${event.resource} drifted${dry} (${(event.fields ?? []).join(', ') || event.action})`;
    case 'rollout_wave_started':
      return `rollout ${event.rollout}: wave ${event.wave} starts at ${revision}${event.projects ? ` (${event.projects.length} project${event.projects.length === 1 ? '' : 's'})` : ''}`;
    case 'rollout_halted':
      return `rollout ${event.rollout} halted at wave ${event.wave} (${revision}): ${event.reason ?? 'failed'}; later waves wait for \`reconcile resume\` or a newer revision`;
    case 'rollout_done':
      return `rollout ${event.rollout}: every wave has ${revision}`;
    case 'approval_needed':
      return `approval needed for ${revision} (reconcile approve --revision ${revision}): ${(event.entries ?? []).length} change${(event.entries ?? []).length === 1 ? '' : 's'}: ${(event.entries ?? []).slice(0, 10).join('; ')}`;
    case 'revision_broken':
      return `revision ${revision} is broken: ${event.reason ?? 'manifest errors'}; nothing of it is applied: ${(event.entries ?? []).join('; ')}`;
    case 'change_waiting':
      return `${(event.entries ?? []).length} disruptive change${(event.entries ?? []).length === 1 ? '' : 's'} of ${revision} wait${(event.entries ?? []).length === 1 ? 's' : ''} for a maintenance window: ${(event.entries ?? []).slice(0, 10).join('; ')}`;
  }
}

/** Whether this receiver takes the event at all (GitHub only reports on a full commit). */
export function accepts(receiver: ReceiverSpec, event: NotificationEvent): boolean {
  if (receiver.events && !receiver.events.has(event.type)) return false;
  if (receiver.type === 'github') return event.type === 'revision_applied' && event.revision !== undefined && FULL_COMMIT.test(event.revision);
  return true;
}

/** The commit status of a `revision_applied` event (POST /repos/{owner}/{repo}/statuses/{sha}). */
function commitStatus(receiver: GithubReceiverSpec, event: NotificationEvent): { path: string; body: { state: 'success' | 'failure'; description: string; context: string; target_url?: string } } {
  const [owner, repo] = receiver.repository.split('/') as [string, string];
  const description = summaryLine(event).replace(/^\S+ /, '');
  return {
    path: `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/statuses/${event.revision!}`,
    body: {
      state: event.result === 'success' ? 'success' : 'failure',
      // GitHub keeps 140 characters of a description.
      description: description.length > 140 ? `${description.slice(0, 139)}…` : description,
      context: receiver.context,
      ...(receiver.targetUrl ? { target_url: receiver.targetUrl } : {}),
    },
  };
}

/**
 * Slack's mrkdwn control characters, escaped as Slack asks (`&amp;`, `&lt;`, `&gt;`): a name or
 * reason holding `<!channel>` or `<https://evil|click>` reaches the channel as inert text.
 */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const SLACK_ICONS: Record<NotificationEvent['type'], string> = {
  revision_applied: ':rocket:',
  resource_failed: ':x:',
  change_blocked: ':no_entry:',
  deletion_done: ':wastebasket:',
  drift_repaired: ':wrench:',
  drift_detected: ':warning:',
  rollout_wave_started: ':ocean:',
  rollout_halted: ':octagonal_sign:',
  rollout_done: ':checkered_flag:',
  approval_needed: ':raised_hand:',
  change_waiting: ':hourglass:',
  revision_broken: ':construction:',
};

/** Builds the request; resolves the receiver's secret now (a rotated file is picked up). */
export async function deliveryRequest(receiver: ReceiverSpec, event: NotificationEvent, id: string, env: NodeJS.ProcessEnv): Promise<DeliveryRequest> {
  switch (receiver.type) {
    case 'webhook': {
      const body = JSON.stringify({ id, event });
      const secret = await readSecret(receiver.secret, env);
      return {
        url: receiver.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [EVENT_HEADER]: event.type,
          [DELIVERY_HEADER]: id,
          [SIGNATURE_HEADER]: signBody(secret, body),
        },
        body,
      };
    }
    case 'slack': {
      const icon = event.type === 'revision_applied' && event.result === 'success' ? ':white_check_mark:' : SLACK_ICONS[event.type];
      return {
        url: await readSecret(receiver.url, env),
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body: JSON.stringify({ text: `${icon} ${escapeSlack(summaryLine(event))}` }),
      };
    }
    case 'github': {
      const { path, body } = commitStatus(receiver, event);
      const token = await readSecret(receiver.token, env);
      return {
        url: `${receiver.apiUrl}${path}`,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-github-api-version': '2022-11-28',
        },
        body: JSON.stringify(body),
      };
    }
  }
}
