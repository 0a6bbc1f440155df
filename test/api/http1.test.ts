// The HTTP/1.1 connection pool against loopback servers that speak byte by byte: keep-alive
// reuse and its limits, the connection count, timeouts, aborts, closing, TLS, and what a
// failure says about whether the request was sent.
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Pool, WireError, serializeRequest } from '../../src/api/http1.js';
import { httpTransport, TransportFailure } from '../../src/api/transport.js';

const TIMEOUTS = { connectMs: 2_000, headersMs: 2_000, bodyMs: 2_000 };
let cleanup: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

/** A raw TCP server: `onRequest` gets each request's head and the socket, and writes what it likes. */
async function rawServer(onRequest: (head: string, socket: Socket, index: number) => void, wrap?: (s: Server) => void) {
  const sockets = new Set<Socket>();
  let connections = 0;
  let requests = 0;
  const heads: string[] = [];
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.slice(end + 4 + length);
        heads.push(head);
        onRequest(head, socket, requests++);
      }
    });
  });
  wrap?.(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  cleanup.push(close);
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    heads,
    sockets,
    get connections() {
      return connections;
    },
    close,
  };
}

function ok(body = '{}', extra = ''): string {
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function pool(origin: string, connections = 2, timeouts = TIMEOUTS): Http1Pool {
  const p = new Http1Pool(origin, timeouts, connections);
  cleanup.push(() => p.close());
  return p;
}

const get = (path = '/v1/projects') => ({ method: 'GET', path, headers: { authorization: 'Bearer tok-secret-1' }, body: undefined });

/** Polls `done` on each turn of the event loop (no timer), failing after many turns. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('the condition did not come true');
}

async function failure(promise: Promise<unknown>): Promise<WireError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WireError);
  return error as WireError;
}

describe('HTTP/1.1 pool', () => {
  it('writes the request line, host, headers and the body with its length', async () => {
    const server = await rawServer((_h, s) => s.write(ok('{"a":1}')));
    const p = pool(server.origin);
    const answer = await p.request({ method: 'POST', path: '/v1/projects?x=1', headers: { 'content-type': 'application/json' }, body: '{"name":"ü"}' });
    expect(answer.status).toBe(200);
    expect(Buffer.from(answer.bytes).toString()).toBe('{"a":1}');
    expect(server.heads[0]!.split('\r\n')).toEqual(['POST /v1/projects?x=1 HTTP/1.1', `host: 127.0.0.1:${server.port}`, 'content-type: application/json', 'content-length: 13']);
  });

  it('reuses one connection for requests in turn, and opens no more than its limit at once', async () => {
    const server = await rawServer((_h, s) => setTimeout(() => s.write(ok()), 5));
    const p = pool(server.origin, 3);
    for (let i = 0; i < 5; i++) await p.request(get());
    expect(server.connections).toBe(1);
    await Promise.all(Array.from({ length: 20 }, () => p.request(get())));
    expect(server.connections).toBe(3);
    expect(server.heads).toHaveLength(25);
  });

  it('opens a new connection after an answer that closes its own, or states a keep-alive too short to use', async () => {
    let n = 0;
    const server = await rawServer((_h, s) => {
      n += 1;
      if (n === 1) s.end(ok('{}', 'connection: close\r\n'));
      else if (n === 2) s.write(ok('{}', 'keep-alive: timeout=1\r\n'));
      else s.write(ok());
    });
    const p = pool(server.origin, 1);
    await p.request(get());
    await p.request(get());
    await p.request(get());
    expect(server.connections).toBe(3);
  });

  it('reads an answer framed by the connection\'s end', async () => {
    const server = await rawServer((_h, s) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nsome ');
      setTimeout(() => s.end('text'), 10);
    });
    const answer = await pool(server.origin).request(get());
    expect(Buffer.from(answer.bytes).toString()).toBe('some text');
  });

  it('does not send on a connection the service closed while it was idle', async () => {
    const server = await rawServer((_h, s) => s.end(ok()));
    const p = pool(server.origin, 1);
    await p.request(get());
    await new Promise((r) => setTimeout(r, 20));
    await p.request(get());
    expect(server.connections).toBe(2);
  });

  it('drops a connection on which the service spoke unasked, and the next request still succeeds', async () => {
    const server = await rawServer((_h, s) => {
      s.write(ok());
      setTimeout(() => s.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'), 5);
    });
    const p = pool(server.origin, 1);
    await p.request(get());
    await new Promise((r) => setTimeout(r, 30));
    await p.request(get());
    expect(server.connections).toBe(2);
  });

  it('tells a refused connection (not sent) from one reset after the request was written (sent)', async () => {
    const gone = await rawServer(() => undefined);
    await gone.close();
    const refused = await failure(pool(gone.origin).request(get()));
    expect(refused.code).toBe('ECONNREFUSED');
    expect(refused.sent).toBe(false);

    const server = await rawServer((_h, s) => s.destroy());
    const reset = await failure(pool(server.origin).request(get()));
    expect(['ECONNRESET', 'SOCKET_CLOSED']).toContain(reset.code);
    expect(reset.sent).toBe(true);
  });

  it('times out waiting for the headers, and for a body that stops coming', async () => {
    const silent = await rawServer(() => undefined);
    const headers = await failure(pool(silent.origin, 1, { ...TIMEOUTS, headersMs: 100 }).request(get()));
    expect(headers.code).toBe('HEADERS_TIMEOUT');
    expect(headers.sent).toBe(true);

    const slow = await rawServer((_h, s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
    const body = await failure(pool(slow.origin, 1, { ...TIMEOUTS, bodyMs: 100 }).request(get()));
    expect(body.code).toBe('BODY_TIMEOUT');
  });

  it('keeps a slow body alive while its bytes keep coming', async () => {
    const server = await rawServer((_h, s) => {
      s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      let i = 0;
      const tick = setInterval(() => {
        if (i++ < 10) s.write('1\r\na\r\n');
        else {
          clearInterval(tick);
          s.write('0\r\n\r\n');
        }
      }, 40);
    });
    // Ten pieces 40 ms apart: the body takes longer than its timeout, no pause as long.
    const answer = await pool(server.origin, 1, { ...TIMEOUTS, bodyMs: 300 }).request(get());
    expect(Buffer.from(answer.bytes).toString()).toBe('a'.repeat(10));
  });

  it('times out a connection that is never made, as not sent', async () => {
    // A listening socket whose backlog is full never completes a handshake: simulate with a
    // TLS origin on a plain server that never answers the handshake.
    const server = await rawServer(() => undefined);
    const p = new Http1Pool(server.origin.replace('http:', 'https:'), { ...TIMEOUTS, connectMs: 100 }, 1);
    cleanup.push(() => p.close());
    const error = await failure(p.request(get()));
    expect(error.code).toBe('CONNECT_TIMEOUT');
    expect(error.sent).toBe(false);
  });

  it('aborts a request in flight, and one still waiting for a connection without sending it', async () => {
    const server = await rawServer((_h, s, i) => {
      if (i > 0) s.write(ok());
    });
    const p = pool(server.origin, 1);
    const first = new AbortController();
    const inFlight = p.request({ ...get(), signal: first.signal });
    const second = new AbortController();
    const waiting = p.request({ ...get('/waiting'), signal: second.signal });
    await new Promise((r) => setTimeout(r, 20));
    second.abort(new Error('stop waiting'));
    await expect(waiting).rejects.toThrow('stop waiting');
    first.abort(new Error('stop'));
    await expect(inFlight).rejects.toThrow('stop');
    expect(server.heads.some((h) => h.startsWith('GET /waiting'))).toBe(false);
    await p.request(get('/after'));
    expect(server.heads.at(-1)).toMatch(/^GET \/after /);
  });

  it('puts one listener on a signal however many requests carry it, and aborting it fails those requests alone', async () => {
    const held: Array<() => void> = [];
    const server = await rawServer((_h, s) => held.push(() => s.write(ok())));
    const p = pool(server.origin, 2);
    const shared = new AbortController();
    const other = new AbortController();
    const carried = Array.from({ length: 5 }, (_, i) => p.request({ ...get(`/shared/${i}`), signal: shared.signal }));
    const outcomes = carried.map((request) => request.then(() => 'answered', (error: Error) => error.message));
    // Two in flight, three waiting for a connection: still one listener on the shared signal.
    await waitFor(() => held.length === 2);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    shared.abort(new Error('pass stopped'));
    expect(await Promise.all(outcomes)).toEqual(Array(5).fill('pass stopped'));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    // The waiting ones were never sent; a request with another signal goes out and is answered.
    const next = p.request({ ...get('/other'), signal: other.signal });
    await waitFor(() => held.length === 3);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(1);
    held[2]!();
    await expect(next).resolves.toMatchObject({ status: 200 });
    // Settled: the listener is gone, and the signal may live on without the pool.
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    expect(server.heads.map((h) => h.split(' ')[1])).toEqual(['/shared/0', '/shared/1', '/other']);
  });

  it('fails a request aborted at any point while its TLS connection is being made, without sending it', async () => {
    const server = await rawServer(() => undefined);
    // The abort comes 0 to 20 microtasks after the request: each step of loading the TLS module
    // and making the connection (a handshake the raw server never answers).
    for (let hops = 0; hops <= 20; hops++) {
      const p = new Http1Pool(`https://127.0.0.1:${server.port}`, TIMEOUTS, 1);
      const controller = new AbortController();
      const request = p.request({ ...get(), signal: controller.signal });
      for (let i = 0; i < hops; i++) await Promise.resolve();
      controller.abort(new Error(`stopped after ${hops}`));
      await expect(request).rejects.toThrow(`stopped after ${hops}`);
      await p.close();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
    expect(server.heads).toEqual([]);
  });

  it('does not make a connection for a request aborted while its TLS module loads', async () => {
    const server = await rawServer(() => undefined);
    const p = new Http1Pool(`https://127.0.0.1:${server.port}`, TIMEOUTS, 1);
    const controller = new AbortController();
    const request = p.request({ ...get(), signal: controller.signal });
    controller.abort(new Error('stopped before connecting'));
    await expect(request).rejects.toThrow('stopped before connecting');
    await p.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.connections).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('lets requests in flight finish when closed, then refuses new ones as not sent', async () => {
    const server = await rawServer((_h, s) => setTimeout(() => s.write(ok('{"late":true}')), 50));
    const p = new Http1Pool(server.origin, TIMEOUTS, 2);
    const pending = p.request(get());
    await new Promise((r) => setTimeout(r, 10));
    const closing = p.close();
    const answer = await pending;
    expect(Buffer.from(answer.bytes).toString()).toBe('{"late":true}');
    await closing;
    const after = await failure(p.request(get()));
    expect(after.code).toBe('TRANSPORT_CLOSED');
    expect(after.sent).toBe(false);
  });

  it('refuses a header or path that would break the request line, without quoting the value', () => {
    expect(() => serializeRequest('h', { method: 'GET', path: '/x', headers: { authorization: 'Bearer a\r\nx-evil: 1' }, body: undefined })).toThrow(/^invalid value of header authorization$/);
    expect(() => serializeRequest('h', { method: 'GET', path: '/x y', headers: {}, body: undefined })).toThrow(/request path/);
    expect(() => serializeRequest('h', { method: 'GET', path: '/x', headers: { 'bad name': 'v' }, body: undefined })).toThrow(/header name/);
    expect(() => serializeRequest('h', { method: 'GE T', path: '/x', headers: {}, body: undefined })).toThrow(/method/);
  });

  it('sends an empty body\'s length for a POST, none for a GET, and leaves out a header without a value', () => {
    const text = (request: Parameters<typeof serializeRequest>[1]) => Buffer.concat(serializeRequest('h', request)).toString();
    expect(text({ method: 'POST', path: '/x', headers: {}, body: undefined })).toBe('POST /x HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n');
    expect(text({ method: 'GET', path: '/x', headers: { 'x-opt': undefined as unknown as string }, body: undefined })).toBe('GET /x HTTP/1.1\r\nhost: h\r\n\r\n');
  });

  it('sends the requests that waited for a connection when closed, then closes', async () => {
    const server = await rawServer((_h, s) => setTimeout(() => s.write(ok()), 20));
    const p = new Http1Pool(server.origin, TIMEOUTS, 1);
    const first = p.request(get('/a'));
    const second = p.request(get('/b'));
    await new Promise((r) => setTimeout(r, 5));
    const closing = p.close();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    await closing;
    await p.close();
    expect(server.heads.map((h) => h.split(' ')[1])).toEqual(['/a', '/b']);
  });

  /**
   * A server that reads an upload and stops reading for `stallMs` each time it has received
   * another `every` bytes (for good when `stallMs` is Infinity), then answers once it has `size`.
   */
  async function stallingReader(every: number, stallMs: number, size: number) {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      let received = 0;
      let nextStall = every;
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= size) {
          socket.write(ok());
        } else if (received >= nextStall) {
          nextStall += every;
          socket.pause();
          if (stallMs !== Infinity) setTimeout(() => socket.resume(), stallMs);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('restarts the headers timeout while an upload moves, so only a stall or a late answer times out', async () => {
    // Four stalls of 300 ms while 128 MiB go up (far more than the kernel's buffers hold, so
    // the writer waits each time): 1.2 s in all, longer than the 800 ms timeout, no single
    // pause as long.
    const size = 128 * 1024 * 1024;
    const origin = await stallingReader(28 * 1024 * 1024, 300, size);
    const p = pool(origin, 1, { ...TIMEOUTS, headersMs: 800 });
    const started = performance.now();
    const answer = await p.request({ method: 'POST', path: '/upload', headers: {}, body: new Uint8Array(size) });
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThan(800);
  });

  it('times out an upload the service stops reading', async () => {
    const origin = await stallingReader(1024 * 1024, Infinity, Infinity);
    const p = pool(origin, 1, { ...TIMEOUTS, headersMs: 200 });
    const error = await failure(p.request({ method: 'POST', path: '/upload', headers: {}, body: new Uint8Array(64 * 1024 * 1024) }));
    expect(error.code).toBe('HEADERS_TIMEOUT');
    expect(error.sent).toBe(true);
  });
});

describe('the transport over the pool', () => {
  it('sends multipart FormData with its boundary and length to a real HTTP server', async () => {
    let received = { type: '', length: '', body: '' };
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received = { type: req.headers['content-type'] ?? '', length: req.headers['content-length'] ?? '', body: Buffer.concat(chunks).toString() };
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const transport = httpTransport({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeouts: TIMEOUTS, connections: 1 });
    cleanup.push(() => transport.close());
    const form = new FormData();
    form.append('metadata', '{"name":"hello"}');
    form.append('file', new Blob(['export default 1;\n']), 'index.ts');
    const answer = await transport.send({ method: 'POST', path: '/v1/projects/r/functions/deploy', headers: {}, body: form });
    expect(answer.status).toBe(201);
    expect(received.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(Number(received.length)).toBe(Buffer.byteLength(received.body));
    expect(received.body).toContain('export default 1;');
  });

  it('classifies a failure by whether the request was sent, and names only the endpoint', async () => {
    const server = await rawServer((_h, s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: nope\r\n\r\n'));
    const transport = httpTransport({ origin: server.origin, timeouts: TIMEOUTS, connections: 1 });
    cleanup.push(() => transport.close());
    const error = await transport.send({ ...get(), body: undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportFailure);
    expect(error).toMatchObject({ kind: 'protocol', mayHaveApplied: true, message: `transport failure talking to 127.0.0.1:${server.port} (BAD_RESPONSE)` });
    expect(String(error)).not.toContain('tok-secret-1');
  });
});

describe('TLS', () => {
  const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
  const key = readFileSync(`${fixtures}loopback-key.pem`);
  const cert = readFileSync(`${fixtures}loopback-cert.pem`);

  async function tlsServer() {
    const server = createTlsServer({ key, cert }, (socket) => {
      socket.on('error', () => undefined);
      socket.on('data', () => socket.write(ok('{"secure":true}')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return (server.address() as AddressInfo).port;
  }

  it('refuses a certificate it cannot verify before sending a byte', async () => {
    const port = await tlsServer();
    const p = pool(`https://localhost:${port}`, 1);
    const error = await failure(p.request(get()));
    expect(error.sent).toBe(false);
    expect(error.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
  });

  it('speaks HTTP over TLS to a server whose certificate the process trusts (NODE_EXTRA_CA_CERTS)', async () => {
    const port = await tlsServer();
    // The built module, as the command runs it (the test command builds first).
    const module = new URL('../../dist/api/http1.js', import.meta.url).href;
    const script = `const { Http1Pool } = await import(${JSON.stringify(module)});
      const p = new Http1Pool('https://localhost:${port}', { connectMs: 2000, headersMs: 2000, bodyMs: 2000 }, 1);
      const a = await p.request({ method: 'GET', path: '/x', headers: {}, body: undefined });
      process.stdout.write(Buffer.from(a.bytes).toString()); await p.close();`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: `${fixtures}loopback-cert.pem` },
    });
    expect(stdout).toBe('{"secure":true}');
  });
});
