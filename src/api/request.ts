/** A query parameter's value, as the endpoint functions accept it. */
export type QueryValue = string | number | boolean | string[] | undefined;

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Scheduling class of a request. The queue serves them in this order:
 * `write` — the writes a new git revision or a user's run asks for;
 * `verify` — the reads that plan and verify that work;
 * `drift` — periodic drift re-checks in the background.
 */
export type Priority = 'write' | 'verify' | 'drift';
export const PRIORITIES: readonly Priority[] = ['write', 'verify', 'drift'];

/** Per-call options, accepted by every endpoint method. */
export interface CallOptions<Q extends Record<string, QueryValue> = Record<string, QueryValue>> {
  /** Scheduling class; default `verify` for reads and `write` for writes. */
  priority?: Priority;
  /** The project this call is for (a manifest name or a ref), for fairness across projects. */
  project?: string;
  signal?: AbortSignal;
  query?: Q;
  /** Extra request headers (for example `Accept: multipart/form-data`). */
  headers?: Record<string, string>;
  /** Overrides whether the call may be retried inline on a transient error. */
  idempotent?: boolean;
}

/** A request as the endpoint functions describe it: nothing about transport or budget. */
export interface ApiRequest extends CallOptions {
  operationId: string;
  method: HttpMethod;
  /** Path template as in the spec, for example `/v1/projects/{ref}/secrets`. Used as the `route` metric label. */
  route: string;
  params: Record<string, string>;
  bodyKind: 'none' | 'json' | 'form' | 'multipart';
  body?: unknown;
  idempotent: boolean;
}

/** A response body that is not JSON (function bodies). */
export interface BinaryBody {
  contentType: string;
  bytes: Uint8Array;
}

export interface ApiResponse<T> {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, `undefined` for an empty body, or a BinaryBody for other media types. */
  body: T;
}

/** What the endpoint functions call: implemented by the client (transport + auth + budget + retries). */
export interface RequestCaller {
  call<T>(request: ApiRequest): Promise<ApiResponse<T>>;
}

/** Each route template split once: its literal parts, with the parameter names between them. */
const splitRoutes = new Map<string, { literals: string[]; names: string[] }>();

function splitRoute(route: string): { literals: string[]; names: string[] } {
  let split = splitRoutes.get(route);
  if (!split) {
    const parts = route.split(/\{(\w+)\}/);
    split = { literals: parts.filter((_, index) => index % 2 === 0), names: parts.filter((_, index) => index % 2 === 1) };
    // Routes are the endpoints' templates, a fixed set; a bound all the same.
    if (splitRoutes.size < 1024) splitRoutes.set(route, split);
  }
  return split;
}

/** Fills a route template with URL-encoded parameters. */
export function fillRoute(route: string, params: Record<string, string>): string {
  const { literals, names } = splitRoute(route);
  let path = literals[0]!;
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!;
    const value = params[name];
    if (value === undefined || value === '') throw new TypeError(`Missing path parameter \`${name}\` for ${route}`);
    path += encodeURIComponent(value) + literals[index + 1]!;
  }
  return path;
}
