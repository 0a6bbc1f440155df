import { connect as netConnect, isIP, type Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { AbortWatch } from './abort-watch.js';
import { ResponseParser, type ParsedResponse } from './http1-parser.js';

/**
 * HTTP/1.1 exchanges over keep-alive sockets of one origin (`node:net`, or `node:tls` loaded
 * when the origin is https), one exchange per connection at a time, at most `connections` at
 * once. It is the transport's wire: the request is written as one buffer, the answer read by
 * `ResponseParser`. Failures carry a `code` (a socket's own, or one of CONNECT_TIMEOUT,
 * HEADERS_TIMEOUT, BODY_TIMEOUT, SOCKET_CLOSED, BAD_RESPONSE, TRANSPORT_CLOSED) and `sent`:
 * whether a byte of the request was handed to the socket.
 */

export interface WireTimeouts {
  connectMs: number;
  /** From the request written to the answer's headers read. */
  headersMs: number;
  /** The longest pause between two reads of an answer's body. */
  bodyMs: number;
}

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | string | undefined;
  signal?: AbortSignal | undefined;
}

/** How long an idle connection is kept when the service states nothing (its own default is longer). */
const IDLE_MS = 4_000;
/** A connection is dropped this long before the service says it will close it. */
const IDLE_MARGIN_MS = 1_000;

/** A body is written in pieces of this size at most. */
const PIECE_BYTES = 64 * 1024;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const PATH = /^\/[\x21-\x7e]*$/;
const METHOD = /^[A-Z]+$/;

export class WireError extends Error {
  readonly code: string;
  readonly sent: boolean;
  constructor(code: string, message: string, sent: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WireError';
    this.code = code;
    this.sent = sent;
  }
}

/** A request that could never be sent as written (a bad header or path): a programming error. */
export class InvalidRequestLine extends TypeError {}

function wireError(error: unknown, sent: boolean): WireError {
  if (error instanceof WireError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  return new WireError(typeof code === 'string' ? code : 'SOCKET_ERROR', (error as Error)?.message ?? String(error), sent, { cause: error });
}

/**
 * The request's bytes: request line, headers, and a body of known length; one buffer, or the
 * head and the body as given (a large body is not copied).
 */
export function serializeRequest(hostHeader: string, request: WireRequest): Buffer[] {
  if (!METHOD.test(request.method)) throw new InvalidRequestLine(`invalid method ${JSON.stringify(request.method)}`);
  if (!PATH.test(request.path)) throw new InvalidRequestLine('invalid request path (it must start with / and hold no space or control character)');
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${hostHeader}\r\n`;
  for (const name in request.headers) {
    const value = request.headers[name];
    if (value === undefined) continue;
    if (!TOKEN.test(name)) throw new InvalidRequestLine(`invalid header name ${JSON.stringify(name)}`);
    // The value itself is never quoted: it can be a credential.
    if (!VALUE.test(value)) throw new InvalidRequestLine(`invalid value of header ${name}`);
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') continue;
    head += `${name}: ${value}\r\n`;
  }
  const body = request.body;
  if (body === undefined) {
    if (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH') head += 'content-length: 0\r\n';
    return [Buffer.from(`${head}\r\n`, 'latin1')];
  }
  if (typeof body === 'string') {
    const length = Buffer.byteLength(body);
    const headBytes = Buffer.byteLength(head, 'latin1') + `content-length: ${length}\r\n\r\n`.length;
    const bytes = Buffer.allocUnsafe(headBytes + length);
    const written = bytes.write(`${head}content-length: ${length}\r\n\r\n`, 0, 'latin1');
    bytes.write(body, written, 'utf8');
    return [bytes];
  }
  return [Buffer.from(`${head}content-length: ${body.byteLength}\r\n\r\n`, 'latin1'), Buffer.from(body.buffer, body.byteOffset, body.byteLength)];
}

let tlsModule: Promise<typeof import('node:tls')> | undefined;

interface Exchange {
  request: WireRequest;
  bytes: Buffer[];
  resolve(response: ParsedResponse): void;
  reject(error: unknown): void;
  sent: boolean;
  /** Resolved or rejected: a connection made for it afterwards is not used for it. */
  settled: boolean;
  connection: Connection | undefined;
}

class Connection {
  readonly socket: Socket;
  readonly parser = new ResponseParser();
  exchange: Exchange | undefined;
  connected = false;
  alive = true;
  private timer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Http1Pool,
    socket: Socket,
  ) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('error', (error) => this.fail(wireError(error, this.exchange?.sent ?? false)));
    socket.on('close', () => this.fail(new WireError('SOCKET_CLOSED', 'the connection closed before the answer was whole', this.exchange?.sent ?? false)));
  }

  /** Starts the connect timeout; once the socket (and TLS) is ready, the waiting request is written. */
  awaitConnect(event: 'connect' | 'secureConnect', timeoutMs: number): void {
    this.timer = setTimeout(() => this.fail(new WireError('CONNECT_TIMEOUT', 'the connection was not made in time', false)), timeoutMs);
    this.timer.unref();
    this.socket.once(event, () => {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.connected = true;
      if (this.exchange) this.write(this.exchange);
    });
  }

  start(exchange: Exchange): void {
    this.exchange = exchange;
    exchange.connection = this;
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    this.socket.ref();
    if (this.connected) this.write(exchange);
  }

  private write(exchange: Exchange): void {
    this.parser.begin(exchange.request.method);
    exchange.sent = true;
    this.armTimer('HEADERS_TIMEOUT', this.pool.timeouts.headersMs);
    const parts = exchange.bytes;
    if (parts.length === 1 && parts[0]!.length <= PIECE_BYTES) {
      this.socket.write(parts[0]!);
      return;
    }
    // A large body is written a piece at a time, each once the one before has left: the
    // headers timeout restarts with every piece, so it counts from the end of the upload, and
    // an upload that stalls times out as surely as an answer that does not come.
    let part = 0;
    let offset = 0;
    const next = (): void => {
      if (this.exchange !== exchange || !this.alive) return;
      this.timer?.refresh();
      if (part >= parts.length) return;
      const buffer = parts[part]!;
      const end = Math.min(offset + PIECE_BYTES, buffer.length);
      const piece = buffer.subarray(offset, end);
      offset = end;
      if (offset >= buffer.length) {
        part += 1;
        offset = 0;
      }
      this.socket.write(piece, next);
    };
    next();
  }

  private armTimer(code: 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT', ms: number): void {
    if (this.timer) {
      this.timer.refresh();
      return;
    }
    const timer = setTimeout(() => this.fail(new WireError(code === 'HEADERS_TIMEOUT' && !this.parser.inHead ? 'BODY_TIMEOUT' : code, 'no answer in time', true)), ms);
    timer.unref();
    this.timer = timer;
  }

  private onData(chunk: Buffer): void {
    if (!this.exchange) {
      // The service spoke with no request waiting: the connection cannot be trusted again.
      this.close();
      return;
    }
    let response: ParsedResponse | undefined;
    const wasHead = this.parser.inHead;
    try {
      response = this.parser.push(chunk);
    } catch (error) {
      this.fail(wireError(error, true));
      return;
    }
    if (response) {
      this.complete(response);
      return;
    }
    if (wasHead && !this.parser.inHead) {
      // The headers are in: from now on the pause between reads is what is timed.
      clearTimeout(this.timer);
      this.timer = undefined;
      this.armTimer('BODY_TIMEOUT', this.pool.timeouts.bodyMs);
    } else if (!this.parser.inHead) {
      this.timer?.refresh();
    }
  }

  private onEnd(): void {
    if (!this.exchange || !this.exchange.sent) {
      this.fail(new WireError('SOCKET_CLOSED', 'the connection closed', false));
      return;
    }
    let response: ParsedResponse | undefined;
    try {
      response = this.parser.finish();
    } catch (error) {
      this.fail(wireError(error, true));
      return;
    }
    if (response) this.complete({ ...response, keepAlive: false });
    else this.fail(new WireError('SOCKET_CLOSED', 'the connection closed', true));
  }

  private complete(response: ParsedResponse): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const exchange = this.exchange!;
    this.exchange = undefined;
    exchange.connection = undefined;
    if (response.keepAlive && this.alive) {
      const stated = response.keepAliveSeconds === undefined ? Infinity : response.keepAliveSeconds * 1000 - IDLE_MARGIN_MS;
      const idleMs = Math.min(IDLE_MS, stated);
      if (idleMs > 0) {
        this.socket.unref();
        this.idleTimer = setTimeout(() => this.close(), idleMs);
        this.idleTimer.unref();
        this.pool.release(this);
      } else {
        this.close();
      }
    } else {
      this.close();
    }
    exchange.resolve(response);
  }

  /** Ends the connection; an exchange on it fails with `error`. */
  fail(error: WireError): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    this.close();
    if (exchange) {
      exchange.connection = undefined;
      exchange.reject(error);
    }
  }

  close(): void {
    clearTimeout(this.timer);
    clearTimeout(this.idleTimer);
    this.timer = undefined;
    this.idleTimer = undefined;
    if (this.alive) {
      this.alive = false;
      this.socket.destroy();
      this.pool.forget(this);
    }
  }
}

/** A keep-alive pool of connections to one origin. */
export class Http1Pool {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly waiting: Exchange[] = [];
  /** Requests whose connection is being made (a TLS connection loads `node:tls` first). */
  private readonly connecting = new Set<Exchange>();
  /** The signals of unsettled requests, one listener each (a pass gives all its requests one signal). */
  private readonly signals = new AbortWatch((signal) => this.aborted(signal));
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Connections being made (counted against the limit before they exist). */
  private opening = 0;
  private drained: (() => void) | undefined;
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private readonly secure: boolean;

  constructor(
    origin: string,
    readonly timeouts: WireTimeouts,
    private readonly connections: number,
  ) {
    const url = new URL(origin);
    this.secure = url.protocol === 'https:';
    this.host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.port = Number(url.port || (this.secure ? 443 : 80));
    this.hostHeader = url.host;
  }

  /** Sends one request and reads its whole answer. */
  request(request: WireRequest): Promise<ParsedResponse> {
    if (this.closed) return Promise.reject(new WireError('TRANSPORT_CLOSED', 'the transport is closed', false));
    const signal = request.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const bytes = serializeRequest(this.hostHeader, request);
    return new Promise<ParsedResponse>((resolve, reject) => {
      /** Marks the exchange ended, once; false when it already was. */
      const end = (): boolean => {
        if (exchange.settled) return false;
        exchange.settled = true;
        if (signal) this.signals.unwatch(signal);
        return true;
      };
      const exchange: Exchange = {
        request,
        bytes,
        sent: false,
        settled: false,
        connection: undefined,
        resolve: (response) => {
          if (!end()) return;
          resolve(response);
          this.settled();
        },
        reject: (error) => {
          if (!end()) return;
          reject(error);
          this.settled();
        },
      };
      if (signal) this.signals.watch(signal);
      this.dispatch(exchange);
    });
  }

  /** `signal` aborted: each unsettled request that carries it fails with its reason; one in flight closes its connection. */
  private aborted(signal: AbortSignal): void {
    const carries = (exchange: Exchange | undefined): exchange is Exchange => exchange !== undefined && exchange.request.signal === signal;
    // Waiting for a connection, or for one being made: not sent.
    const failed: Exchange[] = [];
    const kept: Exchange[] = [];
    for (const exchange of this.waiting) (carries(exchange) ? failed : kept).push(exchange);
    if (failed.length > 0) {
      this.waiting.length = 0;
      for (const exchange of kept) this.waiting.push(exchange);
    }
    for (const exchange of failed) exchange.reject(signal.reason);
    for (const exchange of [...this.connecting].filter(carries)) exchange.reject(signal.reason);
    for (const connection of [...this.all]) {
      const exchange = connection.exchange;
      if (!carries(exchange)) continue;
      connection.exchange = undefined;
      exchange.connection = undefined;
      connection.close();
      exchange.reject(signal.reason);
    }
  }

  private dispatch(exchange: Exchange): void {
    for (;;) {
      const connection = this.idle.pop();
      if (!connection) break;
      if (connection.alive && !connection.socket.destroyed && connection.socket.readable) {
        connection.start(exchange);
        return;
      }
      connection.close();
    }
    if (this.all.size + this.opening < this.connections) {
      this.opening += 1;
      this.open(exchange).catch((error: unknown) => exchange.reject(wireError(error, false)));
      return;
    }
    this.waiting.push(exchange);
  }

  /**
   * Makes a connection for `exchange`. It is counted in `opening` from the call, and in `all`
   * from the moment its socket exists; the exchange is on it before any of its events can come.
   */
  private async open(exchange: Exchange): Promise<void> {
    let opened = false;
    try {
      let socket: Socket;
      let event: 'connect' | 'secureConnect';
      if (this.secure) {
        tlsModule ??= import('node:tls');
        this.connecting.add(exchange);
        let tls: typeof import('node:tls');
        try {
          tls = await tlsModule;
        } finally {
          // Left in the same step as the check below: an abort in between would find it nowhere.
          this.connecting.delete(exchange);
        }
        if (exchange.settled) return;
        const options: ConnectionOptions = { host: this.host, port: this.port, ALPNProtocols: ['http/1.1'] };
        if (isIP(this.host) === 0) options.servername = this.host;
        socket = tls.connect(options);
        event = 'secureConnect';
      } else {
        socket = netConnect({ host: this.host, port: this.port });
        event = 'connect';
      }
      socket.setKeepAlive(true, 60_000);
      const connection = new Connection(this, socket);
      this.opening -= 1;
      opened = true;
      this.all.add(connection);
      connection.awaitConnect(event, this.timeouts.connectMs);
      connection.start(exchange);
    } finally {
      if (!opened) {
        this.opening -= 1;
        // A place freed without a connection: the next waiting request tries its own.
        if (this.waiting.length > 0 && this.all.size + this.opening < this.connections) this.dispatch(this.waiting.shift()!);
        this.settled();
      }
    }
  }

  /** A connection whose answer is complete: it takes the next waiting request, or waits itself. */
  release(connection: Connection): void {
    const next = this.waiting.shift();
    if (next) connection.start(next);
    else if (this.closed) connection.close();
    else this.idle.push(connection);
  }

  forget(connection: Connection): void {
    this.all.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    // A place freed: a waiting request opens a connection of its own (also while closing: a
    // request taken before `close` is still sent).
    if (this.waiting.length > 0 && this.all.size + this.opening < this.connections) this.dispatch(this.waiting.shift()!);
  }

  /** Called when an exchange ends: `close` waits for the last. */
  settled(): void {
    if (this.closed && this.drained && this.busy() === 0) this.drained();
  }

  private busy(): number {
    let count = this.waiting.length + this.opening;
    for (const connection of this.all) if (connection.exchange) count += 1;
    return count;
  }

  /**
   * Refuses new requests, lets those taken before it finish (in flight or waiting for a
   * connection), then closes every connection. Every call waits for the same end.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      for (const connection of this.idle.splice(0)) connection.close();
      if (this.busy() > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      for (const connection of [...this.all]) connection.close();
    })();
    return this.closing;
  }
}
