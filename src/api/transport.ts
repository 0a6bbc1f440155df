import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Pool as UndiciPool } from 'undici';

/**
 * undici's pool, required alone: the package's index loads all of undici (fetch, WebSocket,
 * caches, mocks, proxies: about 110 modules) where the pool needs about 20, a tenth of a
 * second of every process's start before its first request. undici declares no `exports`, so
 * the file is reachable; the version is the lockfile's, and every test that sends a request
 * goes through it.
 */
const Pool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof UndiciPool;

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

/** Lower-case names (undici gives them so); repeated headers joined with `, `. The object is used as it is when nothing repeats. */
function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  for (const name in raw) {
    if (typeof raw[name] !== 'string') return copyHeaders(raw);
  }
  return raw as Record<string, string>;
}

function copyHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The answer's chunks as one array of its own (a chunk is a view into the socket's read buffer). */
function joinChunks(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** What one exchange needs of undici's pool: a dispatch with a handler (no stream per answer). */
type DispatchPool = Pick<UndiciPool, 'dispatch'>;

/**
 * One exchange through the pool's dispatch: the answer's chunks are collected and joined once
 * it ends. Failures before the answer and while its body is read reject alike with undici's
 * error (or the signal's reason), classified by the caller.
 */
function dispatchOnce(
  pool: DispatchPool,
  request: { method: string; path: string; headers: Record<string, string>; body: string | Readable | null; signal?: AbortSignal | undefined },
): Promise<TransportResponse> {
  return new Promise((resolve, reject) => {
    const signal = request.signal;
    const chunks: Uint8Array[] = [];
    let length = 0;
    let status = 0;
    let headers: Record<string, string> = {};
    let abort: ((reason: unknown) => void) | undefined;
    const onAbort = () => abort?.(signal!.reason);
    const done = () => signal?.removeEventListener('abort', onAbort);
    if (signal) {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
    }
    pool.dispatch(
      { method: request.method as 'GET', path: request.path, headers: request.headers, body: request.body },
      {
        onRequestStart(controller) {
          abort = (reason) => controller.abort(reason instanceof Error ? reason : new Error(String(reason)));
          // Aborted while it waited in the pool's queue: it is not sent.
          if (signal?.aborted) abort(signal.reason);
        },
        onResponseStart(_controller, statusCode, raw) {
          if (statusCode < 200) return;
          status = statusCode;
          headers = flattenHeaders(raw as Record<string, string | string[] | undefined>);
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
          length += chunk.byteLength;
        },
        onResponseEnd() {
          done();
          resolve({ status, headers, bytes: joinChunks(chunks, length) });
        },
        onResponseError(_controller, error) {
          done();
          reject(error);
        },
      },
    );
  });
}

/**
 * The undici transport: one keep-alive pool per origin, with connect, headers and body
 * timeouts. A body timeout while reading the answer is a timeout too (the service answered,
 * so the request may well have applied). Each answer is collected by a handler of the pool's
 * dispatch, without a stream, an async resource or a parsed copy of its headers per answer.
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
      // A string or no body is told apart first: the first use of the FormData global loads
      // Node's own fetch implementation, tens of milliseconds before a pass's first request.
      if (typeof request.body === 'string') {
        body = request.body;
      } else if (request.body !== undefined) {
        // undici takes only FormData of its own package instance: serialise through the
        // platform's encoder and stream it, so large sources are not held twice in memory.
        const encoded = new Response(request.body);
        headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
        body = Readable.fromWeb(encoded.body as WebReadableStream<Uint8Array>);
      }
      try {
        return await dispatchOnce(pool, { method: request.method, path: request.path, headers, body, signal: request.signal });
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if ((error as { code?: string }).code === 'UND_ERR_INVALID_ARG') throw error;
        throw classify(error, endpoint);
      }
    },
    async close() {
      await pool.close();
    },
  };
}
