import { readFile } from 'node:fs/promises';
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { ManifestsTreeWriteError } from '../util/manifests-tree.js';
import { StateLockLostError } from '../util/state-fence.js';
import type { TokenSource } from './token-source.js';
import { AuthConfigError } from './auth-errors.js';
import { errorForResponse } from './error-mapping.js';
import { TransientError, UnauthorizedError } from './errors.js';
import { DEFAULT_TIMEOUTS, httpTransport, TransportFailure, type TransportResponse } from './transport.js';

export const OAUTH_TOKEN_ROUTE = '/v1/oauth/token';

/** Posts a form to the token endpoint. The client supplies one that spends the request budget. */
export type TokenEndpointSender = (form: string, signal?: AbortSignal) => Promise<TransportResponse>;

export interface OAuthTokenSourceOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The first refresh token, used only while `refreshTokenFile` does not exist yet. */
  refreshToken?: string;
  /** Where the current refresh token is kept; rewritten atomically on every rotation. */
  refreshTokenFile: string;
  clock?: Clock;
  /** Refresh this long before the access token expires (default: a tenth of its life, at most 60 s). */
  refreshMarginMs?: number;
}

/** A TokenSource whose token requests can be routed through the client's budget. */
export interface OAuthTokenSource extends TokenSource {
  attachSender(send: TokenEndpointSender): void;
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

function isTokenAnswer(value: unknown): value is TokenAnswer {
  const v = value as Partial<TokenAnswer> | null;
  return typeof v === 'object' && v !== null && typeof v.access_token === 'string' && v.access_token !== ''
    && typeof v.refresh_token === 'string' && v.refresh_token !== '' && typeof v.expires_in === 'number' && v.expires_in > 0;
}

function directSender(baseUrl: string): TokenEndpointSender {
  const url = new URL(baseUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}${OAUTH_TOKEN_ROUTE}`;
  return async (form, signal) => {
    // A connection of its own, only when a token is asked for without the client.
    const transport = httpTransport({ origin: url.origin, timeouts: DEFAULT_TIMEOUTS, connections: 1 });
    try {
      return await transport.send({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        signal,
      });
    } catch (error) {
      if (error instanceof TransportFailure) {
        throw new TransientError({ method: 'POST', route: OAUTH_TOKEN_ROUTE }, error.message, error.mayHaveApplied, { cause: error });
      }
      throw error;
    } finally {
      await transport.close();
    }
  };
}

/**
 * OAuth2 with a client id, secret and refresh token. Refresh tokens rotate and the old one
 * stops working at once, so the new refresh token is written to `refreshTokenFile` (atomically)
 * BEFORE the new access token is used: a crash after the write loses nothing, and a crash
 * before it never used a token whose successor was lost.
 */
export function oauthTokenSource(options: OAuthTokenSourceOptions): OAuthTokenSource {
  for (const name of ['baseUrl', 'clientId', 'clientSecret', 'refreshTokenFile'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') {
      throw new TypeError(`Expected \`${name}\` to be a non-empty string, got \`${typeof options[name]}\``);
    }
  }
  const clock = options.clock ?? systemClock;
  let send: TokenEndpointSender = directSender(options.baseUrl);
  let access: { token: string; refreshAt: number } | undefined;
  let refreshing: Promise<string> | undefined;

  async function currentRefreshToken(): Promise<string> {
    try {
      const text = (await readFile(options.refreshTokenFile, 'utf8')).trim();
      if (text !== '') return text;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        throw new AuthConfigError(`Cannot read the refresh token file ${options.refreshTokenFile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
      }
    }
    if (options.refreshToken) return options.refreshToken;
    throw new AuthConfigError(`No refresh token: ${options.refreshTokenFile} does not exist and no initial refresh token was given`);
  }

  async function refresh(): Promise<string> {
    const refreshToken = await currentRefreshToken();
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: options.clientId,
      client_secret: options.clientSecret,
      refresh_token: refreshToken,
    }).toString();
    const context = { method: 'POST' as const, route: OAUTH_TOKEN_ROUTE };
    const response = await send(form);
    if (response.status >= 300) {
      const error = errorForResponse(context, response, 60_000);
      // A refused refresh token (400 invalid_grant or 401) will not start working by itself.
      if (response.status === 400 || response.status === 401) {
        throw new UnauthorizedError({ ...context, status: response.status }, 'the refresh token was refused', { cause: error });
      }
      throw error;
    }
    let answer: unknown;
    try {
      answer = JSON.parse(new TextDecoder().decode(response.bytes));
    } catch (error) {
      throw new TransientError({ ...context, status: response.status }, 'malformed JSON in the token answer', true, { cause: error });
    }
    if (!isTokenAnswer(answer)) {
      throw new TransientError({ ...context, status: response.status }, 'the token answer lacks access_token, refresh_token or expires_in', true);
    }
    // Persist first: the old refresh token is already dead.
    try {
      await writeFileAtomic(options.refreshTokenFile, `${answer.refresh_token}\n`, 0o600);
    } catch (error) {
      const why = error instanceof ManifestsTreeWriteError || error instanceof StateLockLostError ? error.message : ((error as NodeJS.ErrnoException).code ?? 'error');
      throw new AuthConfigError(`Cannot store the rotated refresh token in ${options.refreshTokenFile}: ${why}`, { cause: error });
    }
    const lifeMs = answer.expires_in * 1000;
    const margin = options.refreshMarginMs ?? Math.min(60_000, lifeMs / 10);
    access = { token: answer.access_token, refreshAt: clock.now() + Math.max(0, lifeMs - margin) };
    return answer.access_token;
  }

  return {
    async token(signal) {
      if (access && clock.now() < access.refreshAt) return access.token;
      // One refresh at a time: a second would present a refresh token the first just rotated away.
      // Not abortable: abandoning it halfway could lose the rotated refresh token.
      void signal;
      refreshing ??= refresh().finally(() => {
        refreshing = undefined;
      });
      return refreshing;
    },
    async invalidate() {
      access = undefined;
    },
    attachSender(next) {
      send = next;
    },
  };
}
