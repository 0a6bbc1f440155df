// One attempt of a call (token, request, answer), and what a failed attempt means for it: give
// up, or go round again and when.
import { backoffDelay } from './backoff.js';
import type { ClientSettings } from './client-settings.js';
import type { Exchanges } from './client-exchange.js';
import type { AcquireSend } from './dispatcher.js';
import { errorForResponse, readSuccessBody } from './error-mapping.js';
import { RateLimitedError, TransientError, UnauthorizedError } from './errors.js';
import { OAUTH_TOKEN_ROUTE } from './oauth-token.js';
import { encodeBody, withQuery } from './request-body.js';
import { fillRoute, type ApiRequest, type ApiResponse, type Priority } from './request.js';
import { TransportFailure, type TransportResponse } from './transport.js';

/** A call of the client, from its request to its settling. */
export interface Call {
  readonly request: ApiRequest;
  readonly priority: Priority;
  readonly project: string;
  readonly key: string;
  readonly resolve: (response: ApiResponse<unknown>) => void;
  readonly reject: (error: unknown) => void;
  transientRetries: number;
  rateLimitRetries: number;
  reauthenticated: boolean;
}

/** What one attempt came to. */
export type Outcome =
  | { kind: 'done'; response: ApiResponse<unknown> }
  | { kind: 'failed'; error: unknown }
  | { kind: 'again'; afterMs: number };

/** Sends the call once, with a token, and reads its answer. */
export async function attemptOnce(call: Call, acquire: AcquireSend, settings: ClientSettings, exchanges: Exchanges): Promise<Outcome> {
  const { request } = call;
  const signal = request.signal;
  const context = { method: request.method, route: request.route };
  let token: string;
  try {
    token = await settings.auth.token(signal);
  } catch (error) {
    return { kind: 'failed', error };
  }
  const encoded = encodeBody(request);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'fleet-reconciler' };
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  if (encoded.contentType) headers['content-type'] = encoded.contentType;
  headers.authorization = `Bearer ${token}`;
  const path = withQuery(`${settings.basePath}${fillRoute(request.route, request.params)}`, request.query);
  let response: TransportResponse;
  try {
    response = await exchanges.send({ method: request.method, route: request.route, key: call.key }, { path, headers, body: encoded.body }, acquire, signal);
  } catch (error) {
    if (error instanceof TransportFailure) {
      return { kind: 'failed', error: new TransientError(context, error.message, error.mayHaveApplied, { cause: error }) };
    }
    return { kind: 'failed', error };
  }
  if (response.status < 400) {
    try {
      return { kind: 'done', response: { status: response.status, headers: response.headers, body: readSuccessBody(request, response) } };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }
  return { kind: 'failed', error: errorForResponse(request, response, settings.rate.windowMs) };
}

/** Decides what a failure means for the call: give up, or go round again (and when). */
export async function decide(call: Call, error: unknown, settings: ClientSettings): Promise<Outcome> {
  const { auth, log, policy, random } = settings;
  const { request } = call;
  const fields = { method: request.method, route: request.route };
  // A refused refresh token will not be accepted on a second try: only the API's 401 re-authenticates.
  if (error instanceof UnauthorizedError && error.route !== OAUTH_TOKEN_ROUTE && !call.reauthenticated && auth.invalidate) {
    // A rotated token or an expired access token: fetch a fresh one, once.
    call.reauthenticated = true;
    await auth.invalidate();
    log.info(fields, 'unauthorized: fetching a fresh token and trying once more');
    return { kind: 'again', afterMs: 0 };
  }
  if (error instanceof RateLimitedError) {
    // A 429 was refused, not applied: sending it again after the block is safe for any method.
    if (call.rateLimitRetries < policy.maxRateLimitRetries) {
      call.rateLimitRetries += 1;
      return { kind: 'again', afterMs: 0 };
    }
    return { kind: 'failed', error };
  }
  if (error instanceof TransientError) {
    // A request that may have applied is repeated only when repeating it is harmless.
    const safe = request.idempotent || !error.mayHaveApplied;
    if (safe && call.transientRetries + 1 < policy.maxAttempts) {
      call.transientRetries += 1;
      const afterMs = backoffDelay(policy, call.transientRetries, random);
      log.debug({ ...fields, status: error.status, afterMs }, 'transient failure: retrying');
      return { kind: 'again', afterMs };
    }
    return { kind: 'failed', error };
  }
  return { kind: 'failed', error };
}
