import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../reconcile/types.js';

import { parseListenAddress, type ListenAddress } from './listen-address.js';

export { InvalidAddressError, parseListenAddress } from './listen-address.js';

interface HttpEndpoints {
  /** Exposition text and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
  readiness(): { ready: boolean; reasons: string[] };
  /** POST routes by path (`/reconcile`...): off unless given. */
  post?: Record<string, PostRoute>;
  /** More GET (and HEAD) routes by path (`/status`, `/`): off unless given. */
  get?: Record<string, GetRoute>;
}

export interface GetRequest {
  headers: IncomingHttpHeaders;
  query: URLSearchParams;
  /** The client's address as the connection shows it (`127.0.0.1`, `::1`, `::ffff:10.0.0.5`...). */
  remoteAddress?: string;
}

/** Connections the daemon's port holds at once; more are closed as they arrive (docs/operations.md). */
export const MAX_CONNECTIONS = 64;

/** Connections one client address may hold at once: a single noisy client leaves room for the probes. */
export const MAX_CONNECTIONS_PER_ADDRESS = 32;

/** Whether an address is the host's own (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || address === '::1';
}

export interface GetAnswer {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export interface GetRoute {
  handle(request: GetRequest): Promise<GetAnswer>;
}

export interface PostRequest {
  headers: IncomingHttpHeaders;
  query: URLSearchParams;
  /** The body, or its first `keepBytes` bytes when `truncated`. */
  body: Buffer;
  /** More than `keepBytes` arrived: `body` holds the head only (`sink` saw all of it). */
  truncated: boolean;
  /** What the route's `open` returned: it saw every chunk of the body as it arrived. */
  sink?: BodySink;
}

/** Sees the body while it streams in (a signature computed without holding the body). */
export interface BodySink {
  update(chunk: Buffer): void;
}

export interface PostAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface PostRoute {
  /** Longer bodies are refused with 413 before they are read further. */
  maxBodyBytes: number;
  /** Bytes of the body kept for `handle` (default: all, up to maxBodyBytes); the rest only reaches the sink. */
  keepBytes?: number;
  /** Bodies of this route read at once, at most; more are refused with 503 before they are read. */
  maxConcurrent?: number;
  /**
   * Runs before the body is read: an answer refuses the request unread (a missing or wrong
   * credential, a stale timestamp); a sink sees every chunk of the body.
   */
  open?(request: { headers: IncomingHttpHeaders; query: URLSearchParams }): Promise<PostAnswer | BodySink | undefined>;
  handle(request: PostRequest): Promise<PostAnswer>;
}

class BodyTooLargeError extends Error {}
/** The client went away before the body ended: nothing to answer. */
class BodyAbortedError extends Error {}

/** Streams the body through `sink`, keeping its first `keep` bytes; rejects past `limit`. */
function readBody(request: IncomingMessage, limit: number, keep: number, sink: BodySink | undefined): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let kept = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.pause();
        reject(new BodyTooLargeError());
        return;
      }
      sink?.update(chunk);
      if (kept < keep) {
        const part = chunk.length <= keep - kept ? chunk : chunk.subarray(0, keep - kept);
        chunks.push(Buffer.from(part));
        kept += part.length;
      }
    });
    let ended = false;
    request.on('end', () => {
      ended = true;
      resolve({ body: Buffer.concat(chunks), truncated: size > kept });
    });
    // A connection closed mid-body frees its reading slot at once (settling twice is harmless).
    request.on('error', () => reject(new BodyAbortedError()));
    request.on('close', () => {
      if (!ended) reject(new BodyAbortedError());
    });
  });
}

function isAnswer(value: PostAnswer | BodySink | undefined): value is PostAnswer {
  return value !== undefined && 'status' in value;
}

/** Answers and closes the connection without reading the rest of the body. */
function refuse(request: IncomingMessage, response: ServerResponse, answer: PostAnswer): void {
  response.setHeader('connection', 'close');
  for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
  response.on('finish', () => request.destroy());
  send(response, answer.status, 'application/json', JSON.stringify(answer.body));
}

async function handlePost(route: PostRoute, reading: Map<PostRoute, number>, request: IncomingMessage, response: ServerResponse, query: URLSearchParams): Promise<void> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > route.maxBodyBytes) {
    return refuse(request, response, { status: 413, body: { message: `The body is longer than ${route.maxBodyBytes} bytes` } });
  }
  const active = reading.get(route) ?? 0;
  if (route.maxConcurrent !== undefined && active >= route.maxConcurrent) {
    return refuse(request, response, { status: 503, body: { message: 'too many requests are being read; retry later' }, headers: { 'retry-after': '1' } });
  }
  reading.set(route, active + 1);
  let read: { body: Buffer; truncated: boolean };
  let sink: BodySink | undefined;
  try {
    const opened = await route.open?.({ headers: request.headers, query });
    if (isAnswer(opened)) return refuse(request, response, opened);
    sink = opened;
    read = await readBody(request, route.maxBodyBytes, route.keepBytes ?? route.maxBodyBytes, sink);
  } catch (error) {
    if (error instanceof BodyAbortedError) {
      response.destroy();
      return;
    }
    if (!(error instanceof BodyTooLargeError)) throw error;
    return refuse(request, response, { status: 413, body: { message: `The body is longer than ${route.maxBodyBytes} bytes` } });
  } finally {
    reading.set(route, (reading.get(route) ?? 1) - 1);
  }
  const answer = await route.handle({ headers: request.headers, query, ...read, ...(sink ? { sink } : {}) });
  for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
  send(response, answer.status, 'application/json', JSON.stringify(answer.body));
}

export interface RunningHttpServer {
  /** `http://HOST:PORT` as bound (the real port when 0 was asked). */
  url: string;
  address: ListenAddress;
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(body);
}

/**
 * `/metrics`, `/healthz` (the process answers: alive) and `/readyz` (manifests loaded and the API
 * accepted the token recently; 503 with the reasons otherwise), and the POST routes given.
 */
export async function startHttpServer(address: ListenAddress, endpoints: HttpEndpoints, log: Logger): Promise<RunningHttpServer> {
  const reading = new Map<PostRoute, number>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const [path = '/', search = ''] = (request.url ?? '/').split('?');
    const post = Object.hasOwn(endpoints.post ?? {}, path) ? endpoints.post![path] : undefined;
    if (post) {
      if (request.method === 'POST') return handlePost(post, reading, request, response, new URLSearchParams(search));
      response.setHeader('allow', 'POST');
      return send(response, 405, 'application/json', JSON.stringify({ message: 'Method Not Allowed' }));
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return send(response, 405, 'application/json', JSON.stringify({ message: 'Method Not Allowed' }));
    }
    const get = Object.hasOwn(endpoints.get ?? {}, path) ? endpoints.get![path] : undefined;
    if (get) {
      const remoteAddress = request.socket.remoteAddress;
      const answer = await get.handle({ headers: request.headers, query: new URLSearchParams(search), ...(remoteAddress !== undefined ? { remoteAddress } : {}) });
      for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
      return send(response, answer.status, answer.contentType, answer.body);
    }
    switch (path) {
      case '/metrics': {
        const { contentType, body } = await endpoints.metrics();
        return send(response, 200, contentType, body);
      }
      case '/healthz':
        return send(response, 200, 'application/json', JSON.stringify({ status: 'alive' }));
      case '/readyz': {
        const readiness = endpoints.readiness();
        return readiness.ready
          ? send(response, 200, 'application/json', JSON.stringify({ status: 'ready' }))
          : send(response, 503, 'application/json', JSON.stringify({ status: 'not ready', reasons: readiness.reasons }));
      }
      default:
        return send(response, 404, 'application/json', JSON.stringify({ message: 'Not Found' }));
    }
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log.error({ err: error, url: request.url }, 'metrics endpoint failed');
      if (!response.headersSent) send(response, 500, 'application/json', JSON.stringify({ message: 'Internal Server Error' }));
      else response.destroy();
    });
  });
  // Scrapes are short; a stuck client must not hold shutdown.
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  // A flood of connections (idle or slow) cannot exhaust the process: past the cap, a new
  // connection is closed at once, said in the log at most once a minute.
  server.maxConnections = MAX_CONNECTIONS;
  let lastDropLog = Number.NEGATIVE_INFINITY;
  let dropped = 0;
  const drop = () => {
    dropped++;
    const now = performance.now();
    if (now - lastDropLog < 60_000) return;
    lastDropLog = now;
    log.warn({ maxConnections: MAX_CONNECTIONS, maxConnectionsPerAddress: MAX_CONNECTIONS_PER_ADDRESS, dropped }, 'too many connections to the daemon\'s port: new ones are closed until some end');
    dropped = 0;
  };
  server.on('drop', drop);
  // Nor can one client address take every place: past its share, its new connections are closed.
  const perAddress = new Map<string, number>();
  server.on('connection', (socket) => {
    const key = socket.remoteAddress ?? '';
    const held = perAddress.get(key) ?? 0;
    if (held >= MAX_CONNECTIONS_PER_ADDRESS) {
      drop();
      socket.destroy();
      return;
    }
    perAddress.set(key, held + 1);
    socket.once('close', () => {
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left > 0) perAddress.set(key, left);
      else perAddress.delete(key);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}`,
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
