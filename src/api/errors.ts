/**
 * Errors are typed at the HTTP boundary; callers branch on the class, never on message text.
 * Each carries the method, the route template and the status, never a token, a secret or a
 * request body.
 */
export interface ApiErrorContext {
  method: string;
  route: string;
  status?: number;
  /** The service's `{"message"}` text, when it sent one. */
  serviceMessage?: string;
}

export abstract class ApiError extends Error {
  readonly method: string;
  readonly route: string;
  readonly status: number | undefined;
  readonly serviceMessage: string | undefined;
  abstract readonly code: string;

  constructor(context: ApiErrorContext, detail?: string, options?: ErrorOptions) {
    const status = context.status === undefined ? '' : ` ${context.status}`;
    super(`${context.method} ${context.route}:${status}${detail ? ` ${detail}` : ''}`, options);
    this.name = new.target.name;
    this.method = context.method;
    this.route = context.route;
    this.status = context.status;
    this.serviceMessage = context.serviceMessage;
  }
}

/** 401: the token is missing, invalid or expired. Stop and say so. */
export class UnauthorizedError extends ApiError {
  readonly code = 'unauthorized';
}

/** 403: the user may not act on this resource. */
export class ForbiddenError extends ApiError {
  readonly code = 'forbidden';
}

/** 404. */
export class NotFoundError extends ApiError {
  readonly code = 'not_found';
}

/** Other 4xx: the service rejected the request; terminal for that resource until its input changes. */
export class InvalidRequestError extends ApiError {
  readonly code = 'invalid';
}

/** 429: the user's budget is spent; nothing may be sent until `waitMs` has passed. */
export class RateLimitedError extends ApiError {
  readonly code = 'rate_limited';
  readonly waitMs: number;
  constructor(context: ApiErrorContext, waitMs: number, options?: ErrorOptions) {
    super(context, `rate limited, retry in ${Math.ceil(waitMs / 1000)}s`, options);
    this.waitMs = waitMs;
  }
}

/** 5xx, timeouts, connection resets, lost answers: may succeed later. */
export class TransientError extends ApiError {
  readonly code = 'transient';
  /** True when the request may have reached the service (its effect is unknown). */
  readonly mayHaveApplied: boolean;
  constructor(context: ApiErrorContext, detail: string, mayHaveApplied: boolean, options?: ErrorOptions) {
    super(context, detail, options);
    this.mayHaveApplied = mayHaveApplied;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
