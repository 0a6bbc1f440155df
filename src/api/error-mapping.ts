import {
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  TransientError,
  UnauthorizedError,
  type ApiError,
  type ApiErrorContext,
} from './errors.js';
import type { ApiRequest, BinaryBody } from './request.js';
import type { TransportResponse } from './transport.js';
import { maxHeaderWaitMs } from './budget.js';
import { parseRateLimitHeaders } from './rate-limit-headers.js';
import { hasDocumentedShape } from './response-shapes.js';
import { BINARY_ANSWERS } from './operation-facts.js';

const MAX_SERVICE_MESSAGE = 500;

function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function serviceMessage(response: TransportResponse): string | undefined {
  if (!isJsonType(response.headers['content-type'])) return undefined;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(response.bytes)) as { message?: unknown };
    if (typeof parsed?.message === 'string') return parsed.message.slice(0, MAX_SERVICE_MESSAGE);
  } catch {
    // An unreadable error body leaves only the status to go on.
  }
  return undefined;
}

/** Maps a non-success answer to its typed error. `windowMs`: the wait when a 429 names none. */
export function errorForResponse(request: Pick<ApiRequest, 'method' | 'route'>, response: TransportResponse, windowMs: number): ApiError {
  const context: ApiErrorContext = { method: request.method, route: request.route, status: response.status };
  const message = serviceMessage(response);
  if (message !== undefined) context.serviceMessage = message;
  const status = response.status;
  if (status === 401) return new UnauthorizedError(context, 'unauthorized: the token is missing, invalid or expired');
  if (status === 403) return new ForbiddenError(context, 'forbidden');
  if (status === 404) return new NotFoundError(context, 'not found');
  if (status === 429) return new RateLimitedError(context, parseRateLimitHeaders(response.headers, { maxWaitMs: maxHeaderWaitMs(windowMs) }).resetMs ?? windowMs);
  if (status >= 400 && status < 500) return new InvalidRequestError(context, message ?? 'rejected');
  // A 5xx may come after the service acted (a commit whose answer failed): its effect is unknown.
  return new TransientError(context, `server error${message ? `: ${message}` : ''}`, true);
}

/** One decoder for every answer: a whole body is decoded in one call, so it keeps no state between answers. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a success answer at the boundary: JSON where JSON is expected (a malformed or
 * non-JSON body is transient: a proxy page or a truncated answer), a BinaryBody where the
 * operation may answer other media, `undefined` for an empty body.
 */
export function readSuccessBody(request: Pick<ApiRequest, 'method' | 'route' | 'operationId'>, response: TransportResponse): unknown {
  const context: ApiErrorContext = { method: request.method, route: request.route, status: response.status };
  if (response.bytes.byteLength === 0) return undefined;
  const contentType = response.headers['content-type'];
  if (isJsonType(contentType)) {
    let value: unknown;
    try {
      value = JSON.parse(STRICT_UTF8.decode(response.bytes));
    } catch (error) {
      throw new TransientError(context, 'malformed JSON in the answer', true, { cause: error });
    }
    // An array where the spec promises an object (or the reverse) is not an answer to this call.
    if (response.status < 300 && !hasDocumentedShape(request.operationId, value)) {
      throw new TransientError(context, 'the answer does not have the documented shape', true);
    }
    return value;
  }
  if (BINARY_ANSWERS.has(request.operationId)) {
    const body: BinaryBody = { contentType: contentType ?? 'application/octet-stream', bytes: response.bytes };
    return body;
  }
  // Redirects (the OAuth authorize answer) carry their meaning in the Location header.
  if (response.status >= 300 && response.status < 400) return undefined;
  throw new TransientError(context, `expected a JSON answer, got ${contentType ? contentType.split(';')[0] : 'no content type'}`, true);
}
