import { resolve } from 'node:path';
import type { Settings } from './settings.js';
import { DEFAULT_DEDUP_WINDOW_MS, loadNotificationsFile, NotificationsConfigError, readSecret, receiversFromUrls, type NotificationSettings, type ReceiverSpec, type SecretRef } from '../notify/config.js';

/** The files a receiver's secrets are read from (checked against the manifests tree at start). */
export function notificationSecretFiles(receiver: ReceiverSpec): string[] {
  return secretsOf(receiver).flatMap((ref) => ('file' in ref ? [ref.file] : []));
}

function secretsOf(receiver: ReceiverSpec): SecretRef[] {
  switch (receiver.type) {
    case 'webhook':
      return [receiver.secret];
    case 'slack':
      return [receiver.url];
    case 'github':
      return [receiver.token];
  }
}

/**
 * The receivers of `--notifications FILE` (or RECONCILE_NOTIFICATIONS) and `--notify URL`;
 * undefined when neither is given. Every secret reference must resolve now, so a typo stops the
 * daemon at start rather than silencing its notifications later.
 */
export async function notificationSettings(context: { settings: Pick<Settings, 'notifications' | 'notify'>; env: NodeJS.ProcessEnv; cwd: string }): Promise<NotificationSettings | undefined> {
  const file = context.settings.notifications;
  const urls = context.settings.notify;
  if (!file && urls.length === 0) return undefined;
  const settings: NotificationSettings = file ? await loadNotificationsFile(resolve(context.cwd, file)) : { dedupWindowMs: DEFAULT_DEDUP_WINDOW_MS, receivers: [] };
  settings.receivers.push(...receiversFromUrls(urls, context.env, new Set(settings.receivers.map((receiver) => receiver.name))));
  const problems: string[] = [];
  for (const receiver of settings.receivers) {
    for (const ref of secretsOf(receiver)) {
      try {
        await readSecret(ref, context.env);
      } catch (error) {
        problems.push(`receiver \`${receiver.name}\`: ${(error as Error).message}`);
      }
    }
  }
  if (problems.length > 0) throw new NotificationsConfigError(`notification secrets do not resolve: ${problems.join('; ')}`);
  return settings;
}
