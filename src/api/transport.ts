import { Http1Pool, WireError, type WireTimeouts } from './http1.js';

export interface TransportRequest {
  method: string;
  /** Path and query, relative to the base URL's origin (the base path already prefixed). */
  path: string;
  headers: Record<string, string>;
  body: string | FormData | undefined;
  signal?: AbortSignal;
}

export interface TransportResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  bytes: Uint8Array;
}

/** Sends one HTTP exchange. No retries, no budget, no auth: the client composes those. */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

type TransportFailureKind = 'connect' | 'timeout' | 'reset' | 'protocol';

/** The exchange failed below HTTP. `mayHaveApplied`: the request may have reached the service. */
export class TransportFailure extends Error {
  readonly kind: TransportFailureKind;
  readonly mayHaveApplied: boolean;
  constructor(kind: TransportFailureKind, mayHaveApplied: boolean, detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = 'TransportFailure';
    this.kind = kind;
    this.mayHaveApplied = mayHaveApplied;
  }
}

type TransportTimeouts = WireTimeouts;

export const DEFAULT_TIMEOUTS: TransportTimeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 60_000 };

const TIMEOUTS = new Set(['HEADERS_TIMEOUT', 'BODY_TIMEOUT']);
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'SOCKET_CLOSED']);

/**
 * `host:port` of an origin, the port spelled out even when it is the scheme's default: a
 * refused connection is about a port. Built from the parsed URL's host parts, so a user name or
 * password in the configured URL never reaches a message.
 */
export function endpointOf(origin: string): string {
  const url = new URL(origin);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * A failure below HTTP, told apart by whether a byte of the request reached the socket: before
 * that (no connection, a refused or failed TLS handshake, a connect timeout, a closed
 * transport) the service cannot have acted on it.
 */
function classify(error: WireError, endpoint: string): TransportFailure {
  const code = error.code;
  // The detail names the failure class and the endpoint only: a socket's message can quote request data.
  if (code === 'TRANSPORT_CLOSED') return new TransportFailure('connect', false, `the connections to ${endpoint} are closed (${code})`, { cause: error });
  if (!error.sent) return new TransportFailure('connect', false, `cannot reach ${endpoint} (${code})`, { cause: error });
  if (TIMEOUTS.has(code)) return new TransportFailure('timeout', true, `timed out waiting for ${endpoint} (${code})`, { cause: error });
  if (RESETS.has(code)) return new TransportFailure('reset', true, `connection to ${endpoint} reset (${code})`, { cause: error });
  return new TransportFailure('protocol', true, `transport failure talking to ${endpoint} (${code})`, { cause: error });
}

/**
 * The transport: one keep-alive pool of HTTP/1.1 connections per origin (`Http1Pool`), with
 * connect, headers and body timeouts. A body timeout while reading the answer is a timeout too
 * (the service answered, so the request may well have applied). A multipart body is encoded
 * by the platform's own `Response` (boundary and content type), then sent with its length.
 */
export function httpTransport(options: { origin: string; timeouts: TransportTimeouts; connections: number }): Transport {
  const pool = new Http1Pool(options.origin, options.timeouts, options.connections);
  const endpoint = endpointOf(options.origin);
  return {
    async send(request) {
      let headers = request.headers;
      let body: string | Uint8Array | undefined;
      // A string or no body is told apart first: the first use of the FormData global loads
      // Node's own fetch implementation, tens of milliseconds before a pass's first request.
      if (typeof request.body === 'string' || request.body === undefined) {
        body = request.body;
      } else {
        const encoded = new Response(request.body);
        headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
        body = new Uint8Array(await encoded.arrayBuffer());
      }
      try {
        const answer = await pool.request({ method: request.method, path: request.path, headers, body, signal: request.signal });
        return { status: answer.status, headers: answer.headers, bytes: answer.bytes };
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (!(error instanceof WireError)) throw error;
        throw classify(error, endpoint);
      }
    },
    close: () => pool.close(),
  };
}
