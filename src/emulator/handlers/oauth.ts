import { createHash, timingSafeEqual } from 'node:crypto';
import { badRequest, EmulatorHttpError } from '../errors.js';
import { newUuid, randomHex } from '../random.js';
import { parseRedirectPattern, parseRedirectUri, redirectMatches } from '../redirect-uri.js';
import type { OAuthAppRecord, OAuthGrantRecord } from '../state.js';
import { created, requireUser, type Handler, type HandlerContext } from './context.js';

const CODE_TTL_MS = 10 * 60_000;

/** The request's redirect_uri when it is well formed and registered; else 400, and no redirect. */
function allowedRedirect(app: OAuthAppRecord, uri: string): URL {
  let url: URL;
  try {
    url = parseRedirectUri(uri);
  } catch (error) {
    throw badRequest(`Invalid \`redirect_uri\`: ${(error as Error).message}`);
  }
  // Seeds are checked when loaded, so every registered pattern parses.
  if (!app.redirectUris.some((pattern) => redirectMatches(parseRedirectPattern(pattern), url))) {
    throw badRequest('`redirect_uri` is not registered for this application');
  }
  return url;
}

function redirect(target: URL, params: Record<string, string | undefined>): { status: number; headers: Record<string, string> } {
  const url = new URL(target);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return { status: 303, headers: { location: url.toString() } };
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The application's credentials: from the body, or HTTP Basic. Wrong credentials answer 401. */
function authenticateClient(context: HandlerContext, body: { client_id?: string; client_secret?: string }): OAuthAppRecord {
  let clientId = body.client_id;
  let clientSecret = body.client_secret;
  const basic = /^Basic\s+(\S+)$/i.exec(String(context.headers.authorization ?? ''));
  if (basic && clientId === undefined) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    clientId = decodeURIComponent(decoded.slice(0, colon));
    clientSecret = decodeURIComponent(decoded.slice(colon + 1));
  }
  const app = clientId ? context.state.oauthApps.get(clientId) : undefined;
  if (!app || clientSecret === undefined || !safeEqual(app.clientSecret, clientSecret)) {
    throw new EmulatorHttpError(401, 'Invalid client credentials');
  }
  return app;
}

export const authorize: Handler = (context) => {
  const user = requireUser(context);
  const q = context.query as {
    client_id: string; response_type: string; redirect_uri: string; state?: string; scope?: string;
    code_challenge?: string; code_challenge_method?: string;
  };
  const app = context.state.oauthApps.get(q.client_id);
  // Never redirect to a URI the application did not register: answer the browser directly.
  if (!app) throw badRequest(`Unknown \`client_id\` ${q.client_id}`);
  const target = allowedRedirect(app, q.redirect_uri);
  if (q.response_type !== 'code') return redirect(target, { error: 'unsupported_response_type', state: q.state });
  if (q.code_challenge_method !== undefined && q.code_challenge === undefined) {
    return redirect(target, { error: 'invalid_request', error_description: 'code_challenge_method without code_challenge', state: q.state });
  }
  const code = randomHex(20);
  context.state.oauthCodes.set(code, {
    code, clientId: app.clientId, userId: user.id, redirectUri: q.redirect_uri, scope: q.scope,
    challenge: q.code_challenge,
    challengeMethod: q.code_challenge === undefined ? undefined : q.code_challenge_method === 'plain' ? 'plain' : q.code_challenge_method === undefined ? 'plain' : 'S256',
    expiresAt: context.wallNow + CODE_TTL_MS,
  });
  return redirect(target, { code, state: q.state });
};

function issue(context: HandlerContext, grant: OAuthGrantRecord, ttlSeconds: number) {
  const accessToken = `oat_${randomHex(24)}`;
  const refreshToken = `ort_${randomHex(24)}`;
  context.state.tokens.set(accessToken, { token: accessToken, userId: grant.userId, kind: 'oauth', expiresAt: context.wallNow + ttlSeconds * 1000, grantId: grant.id });
  grant.refreshToken = refreshToken;
  context.state.refreshTokens.set(refreshToken, grant.id);
  return created({ access_token: accessToken, refresh_token: refreshToken, expires_in: ttlSeconds, token_type: 'Bearer' });
}

export function tokenHandler(ttlSeconds: () => number): Handler {
  return (context) => {
    const body = context.body as {
      grant_type?: string; client_id?: string; client_secret?: string; code?: string; code_verifier?: string; redirect_uri?: string; refresh_token?: string;
    };
    if (!body.grant_type) throw badRequest('`grant_type` is required');
    const app = authenticateClient(context, body);
    if (body.grant_type === 'authorization_code') {
      if (!body.code) throw badRequest('`code` is required for grant_type authorization_code');
      const code = context.state.oauthCodes.get(body.code);
      if (!code || code.clientId !== app.clientId || code.expiresAt <= context.wallNow) throw badRequest('invalid_grant: the authorization code is invalid, expired or already used');
      if (body.redirect_uri !== undefined && body.redirect_uri !== code.redirectUri) throw badRequest('invalid_grant: `redirect_uri` does not match the authorization request');
      if (code.challenge !== undefined) {
        if (!body.code_verifier) throw badRequest('invalid_grant: `code_verifier` is required (the authorization used PKCE)');
        const computed = code.challengeMethod === 'S256' ? createHash('sha256').update(body.code_verifier).digest('base64url') : body.code_verifier;
        if (!safeEqual(computed, code.challenge)) throw badRequest('invalid_grant: `code_verifier` does not match the code challenge');
      }
      context.state.oauthCodes.delete(code.code);
      const grant: OAuthGrantRecord = { id: newUuid(), clientId: app.clientId, userId: code.userId, refreshToken: '', revoked: false };
      context.state.oauthGrants.set(grant.id, grant);
      return issue(context, grant, ttlSeconds());
    }
    if (!body.refresh_token) throw badRequest('`refresh_token` is required for grant_type refresh_token');
    const grantId = context.state.refreshTokens.get(body.refresh_token);
    const grant = grantId ? context.state.oauthGrants.get(grantId) : undefined;
    if (!grant || grant.clientId !== app.clientId || grant.revoked) throw badRequest('invalid_grant: the refresh token is invalid or revoked');
    // Refresh tokens rotate: only the latest one works.
    if (grant.refreshToken !== body.refresh_token) throw badRequest('invalid_grant: the refresh token was already used');
    return issue(context, grant, ttlSeconds());
  };
}

export const revoke: Handler = (context) => {
  const body = context.body as { client_id: string; client_secret: string; refresh_token: string };
  const app = authenticateClient(context, body);
  const grantId = context.state.refreshTokens.get(body.refresh_token);
  const grant = grantId ? context.state.oauthGrants.get(grantId) : undefined;
  if (grant && grant.clientId === app.clientId) {
    grant.revoked = true;
    for (const [token, record] of context.state.tokens) if (record.grantId === grant.id) context.state.tokens.delete(token);
  }
  return { status: 204 };
};
