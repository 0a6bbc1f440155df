// What the commands hand the conductor (src/run/) besides their request: the slice of the
// settings it reads, and how it opens a session (this layer's openers of the API and of the
// sandbox, which other commands share).
import { openApiSession, type ApiSessionSettings } from './api-session.js';
import { openSandboxSession, type SandboxSessionSettings } from './sandbox-session.js';
import type { Settings } from './settings.js';
import type { RunSettings } from '../run/settings.js';
import type { SessionOpeners } from '../run/session.js';

export function runSettings(settings: Pick<Settings, 'sandbox' | 'apiUrl' | 'rateLimit' | 'allowEmpty' | 'lockTimeoutMs' | 'organizationWaitMs'>): RunSettings {
  return {
    sandbox: settings.sandbox,
    ...(settings.apiUrl !== undefined ? { apiUrl: settings.apiUrl } : {}),
    ...(settings.rateLimit !== undefined ? { rateLimit: settings.rateLimit } : {}),
    allowEmpty: settings.allowEmpty,
    lockTimeoutMs: settings.lockTimeoutMs,
    organizationWaitMs: settings.organizationWaitMs,
  };
}

export function sessionOpeners(context: { settings: ApiSessionSettings & SandboxSessionSettings; env: NodeJS.ProcessEnv }): SessionOpeners {
  return {
    sandbox: ({ log, telemetry }) => openSandboxSession(context.settings, log, telemetry ? { telemetry } : {}),
    api: (options) => openApiSession(context.settings, context.env, options),
  };
}
