import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Pool } from 'undici';

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

interface TransportTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

export const DEFAULT_TIMEOUTS: TransportTimeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 60_000 };

// Failures that happen before a byte of the request can have reached the service.
const BEFORE_SEND = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

/**
 * `host:port` of an origin, the port spelled out even when it is the scheme's default: a
 * refused connection is about a port. Built from the parsed URL's host parts, so a user name or
 * password in the configured URL never reaches a message.
 */
export function endpointOf(origin: string): string {
  const url = new URL(origin);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

function classify(error: unknown, endpoint: string): TransportFailure {
  const code = (error as { code?: string } | undefined)?.code ?? '';
  // The detail names the failure class and the endpoint only: undici messages can quote request data.
  if (BEFORE_SEND.has(code)) return new TransportFailure('connect', false, `cannot reach ${endpoint} (${code})`, { cause: error });
  if (TIMEOUTS.has(code)) return new TransportFailure('timeout', true, `timed out waiting for ${endpoint} (${code})`, { cause: error });
  if (RESETS.has(code)) return new TransportFailure('reset', true, `connection to ${endpoint} reset (${code})`, { cause: error });
  return new TransportFailure('protocol', true, `transport failure talking to ${endpoint} (${code || (error as Error)?.name || 'unknown'})`, { cause: error });
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * The undici transport: one keep-alive pool per origin, with connect, headers and body
 * timeouts. A body timeout while reading the answer is a timeout too (the service answered,
 * so the request may well have applied).
 */
export function undiciTransport(options: { origin: string; timeouts: TransportTimeouts; connections: number }): Transport {
  const pool = new Pool(options.origin, {
    connections: options.connections,
    connectTimeout: options.timeouts.connectMs,
    headersTimeout: options.timeouts.headersMs,
    bodyTimeout: options.timeouts.bodyMs,
    keepAliveTimeout: 4_000,
  });
  const endpoint = endpointOf(options.origin);
  return {
    async send(request) {
      let headers = request.headers;
      let body: string | Readable | null = null;
      if (request.body instanceof FormData) {
        // undici takes only FormData of its own package instance: serialise through the
        // platform's encoder and stream it, so large sources are not held twice in memory.
        const encoded = new Response(request.body);
        headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
        body = Readable.fromWeb(encoded.body as WebReadableStream<Uint8Array>);
      } else if (request.body !== undefined) {
        body = request.body;
      }
      let response;
      try {
        response = await pool.request({
          method: request.method as 'GET',
          path: request.path,
          headers,
          body,
          signal: request.signal ?? null,
        });
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if ((error as { code?: string }).code === 'UND_ERR_INVALID_ARG') throw error;
        throw classify(error, endpoint);
      }
      try {
        const bytes = new Uint8Array(await response.body.arrayBuffer());
        return { status: response.statusCode, headers: flattenHeaders(response.headers), bytes };
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        throw classify(error, endpoint);
      }
    },
    async close() {
      await pool.close();
    },
  };
}
