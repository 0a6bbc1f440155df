import { join } from 'node:path';
import type { Clock } from '../util/clock.js';
import { AuthConfigError } from './auth-errors.js';
import { oauthTokenSource } from './oauth-token.js';
import { tokenFile } from './token-file.js';
import type { TokenSource } from './token-source.js';

export { AuthConfigError } from './auth-errors.js';
export { tokenFile } from './token-file.js';
export { oauthTokenSource, type OAuthTokenSource, type OAuthTokenSourceOptions, type TokenEndpointSender } from './oauth-token.js';

export type { TokenSource } from './token-source.js';

export function staticToken(token: string): TokenSource {
  if (typeof token !== 'string' || token.trim() === '') throw new TypeError('Expected `token` to be a non-empty string');
  const value = token.trim();
  return { token: async () => value };
}

/** Environment variables for OAuth2 (documented in docs/api-client.md). */
export const OAUTH_ENV = {
  clientId: 'MANAGEMENT_API_OAUTH_CLIENT_ID',
  clientSecret: 'MANAGEMENT_API_OAUTH_CLIENT_SECRET',
  refreshToken: 'MANAGEMENT_API_OAUTH_REFRESH_TOKEN',
  refreshTokenFile: 'MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE',
} as const;

/** The command-line options the choice of token source reads (the parsed values of any command). */
export type AuthOptionValues = Readonly<Partial<Record<'token-file' | 'state-dir' | 'api-url', string | boolean>>>;

/** The file the rotated refresh token goes to when none is named: inside the state directory. */
export const DEFAULT_REFRESH_TOKEN_FILE = 'oauth-refresh-token';

function nonEmpty(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Chooses the token source from options and environment. Exactly one method may be configured:
 * a personal access token (`MANAGEMENT_API_TOKEN`), a token file (`--token-file` or
 * `MANAGEMENT_API_TOKEN_FILE`), or OAuth2 (`MANAGEMENT_API_OAUTH_CLIENT_ID` and its companions).
 * Two at once is an error rather than a silent precedence: a stale variable should not win.
 */
export function tokenSourceFromEnvironment(
  values: AuthOptionValues,
  env: NodeJS.ProcessEnv,
  /** `stateDir`: the resolved state directory (default: `--state-dir` as given, relative to the process). */
  options: { clock?: Clock; stateDir?: string } = {},
): TokenSource {
  const token = nonEmpty(env.MANAGEMENT_API_TOKEN);
  const file = nonEmpty(values['token-file']) ?? nonEmpty(env.MANAGEMENT_API_TOKEN_FILE);
  const clientId = nonEmpty(env[OAUTH_ENV.clientId]);
  const configured = [token && 'MANAGEMENT_API_TOKEN', file && '--token-file/MANAGEMENT_API_TOKEN_FILE', clientId && OAUTH_ENV.clientId].filter(Boolean);
  if (configured.length === 0) {
    throw new AuthConfigError(`No credentials: set MANAGEMENT_API_TOKEN, or --token-file PATH (MANAGEMENT_API_TOKEN_FILE), or ${OAUTH_ENV.clientId} with ${OAUTH_ENV.clientSecret} and ${OAUTH_ENV.refreshToken} or ${OAUTH_ENV.refreshTokenFile}`);
  }
  if (configured.length > 1) {
    throw new AuthConfigError(`Configure one way to authenticate, not several: found ${configured.join(' and ')}`);
  }
  if (token) return staticToken(token);
  if (file) return tokenFile(file, options.clock ? { clock: options.clock } : {});
  const clientSecret = nonEmpty(env[OAUTH_ENV.clientSecret]);
  if (!clientSecret) throw new AuthConfigError(`${OAUTH_ENV.clientId} is set but ${OAUTH_ENV.clientSecret} is not`);
  const refreshToken = nonEmpty(env[OAUTH_ENV.refreshToken]);
  const stateDir = options.stateDir ?? nonEmpty(values['state-dir']) ?? nonEmpty(env.RECONCILE_STATE_DIR) ?? '.reconcile';
  const refreshTokenFile = nonEmpty(env[OAUTH_ENV.refreshTokenFile]) ?? join(stateDir, DEFAULT_REFRESH_TOKEN_FILE);
  const baseUrl = nonEmpty(values['api-url']) ?? nonEmpty(env.MANAGEMENT_API_URL);
  if (!baseUrl) throw new AuthConfigError('OAuth2 needs the API URL for its token endpoint: set --api-url or MANAGEMENT_API_URL');
  return oauthTokenSource({
    baseUrl,
    clientId: clientId!,
    clientSecret,
    refreshTokenFile,
    ...(refreshToken ? { refreshToken } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}
