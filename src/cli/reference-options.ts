// What the command line and environment say about secret references: the extra directories
// file references may read (--secret-dirs), and the tool's own files they may never read (the
// state directory, the token file, the OAuth refresh token file). validate, a one-shot pass
// and the daemon all load manifests with these, so they refuse the same references.
import { delimiter, resolve } from 'node:path';
import { OAUTH_ENV } from '../api/auth.js';
import type { ReferencePolicyOptions } from '../manifests/reference-policy.js';
import type { Settings } from './settings.js';

/** The settings the policy reads: the credential files' options only where the command has them (else their variables). */
export type ReferenceSettings = Pick<Settings, 'secretDirs' | 'stateDir'> & Partial<Pick<Settings, 'tokenFile' | 'triggerTokenFile' | 'statusTokenFile' | 'webhookSecretFile'>>;

export function referenceOptions(context: { settings: ReferenceSettings; env: NodeJS.ProcessEnv; cwd: string }): ReferencePolicyOptions {
  const { settings } = context;
  const secretDirs = (settings.secretDirs ?? '')
    .split(delimiter)
    .map((dir) => dir.trim())
    .filter((dir) => dir !== '')
    .map((dir) => resolve(context.cwd, dir));
  const credentialFiles = [
    settings.tokenFile ?? context.env.MANAGEMENT_API_TOKEN_FILE,
    context.env[OAUTH_ENV.refreshTokenFile],
    settings.triggerTokenFile ?? context.env.RECONCILE_TRIGGER_TOKEN_FILE,
    settings.statusTokenFile ?? context.env.RECONCILE_STATUS_TOKEN_FILE,
    settings.webhookSecretFile ?? context.env.RECONCILE_WEBHOOK_SECRET_FILE,
    context.env.RECONCILE_NOTIFY_SECRET_FILE,
  ]
    .filter((file): file is string => typeof file === 'string' && file.trim() !== '')
    .map((file) => resolve(context.cwd, file.trim()));
  return { secretDirs, stateDir: settings.stateDir, credentialFiles };
}
