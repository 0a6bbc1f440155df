import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../reconcile/types.js';

export interface ListenAddress {
  host: string;
  port: number;
}

export class InvalidAddressError extends Error {
  constructor(readonly text: string) {
    super(`Expected --metrics-addr as HOST:PORT such as \`0.0.0.0:9464\` or \`[::1]:9464\` (port 0 to 65535), got \`${text}\``);
    this.name = 'InvalidAddressError';
  }
}

/** Parses `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (all interfaces). */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!match) throw new InvalidAddressError(text);
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidAddressError(text);
  const host = match[1] ?? (match[2] || '0.0.0.0');
  return { host, port };
}

export interface HttpEndpoints {
  /** Exposition text and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
  readiness(): { ready: boolean; reasons: string[] };
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
 * accepted the token recently; 503 with the reasons otherwise).
 */
export async function startHttpServer(address: ListenAddress, endpoints: HttpEndpoints, log: Logger): Promise<RunningHttpServer> {
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return send(response, 405, 'application/json', JSON.stringify({ message: 'Method Not Allowed' }));
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
