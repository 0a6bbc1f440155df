// A small HTTP proxy in front of the emulator that misbehaves on purpose, as a real service or
// a gateway can: it acknowledges a function deploy without forwarding it, or answers a write
// with an error that quotes the request body back.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'forward' | 'drop-deploy' | 'echo-writes';

export interface FaultyProxy {
  url: string;
  mode: ProxyMode;
  /** Request bodies the proxy answered with an echo, as received. */
  echoed: string[];
  /** Deploys acknowledged and not forwarded. */
  dropped: string[];
  close(): Promise<void>;
}

const DEPLOY = /^\/v1\/projects\/[^/]+\/functions\/deploy(\?|$)/;

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFaultyProxy(target: string): Promise<FaultyProxy> {
  const upstream = new URL(target);
  const proxy: FaultyProxy = { url: '', mode: 'forward', echoed: [], dropped: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const path = req.url ?? '/';
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (proxy.mode === 'drop-deploy' && req.method === 'POST' && DEPLOY.test(path)) {
        const slug = new URL(path, 'http://proxy').searchParams.get('slug') ?? 'unknown';
        proxy.dropped.push(slug);
        const now = Date.now();
        send(201, { id: `dropped-${slug}`, slug, name: slug, status: 'ACTIVE', version: 1, created_at: now, updated_at: now });
        return;
      }
      if (proxy.mode === 'echo-writes' && req.method !== 'GET' && body.byteLength > 0) {
        const text = body.toString('utf8');
        proxy.echoed.push(text);
        send(400, { message: `invalid request body: ${text}` });
        return;
      }
      const forwarded = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}
