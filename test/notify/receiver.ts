// A local HTTP receiver on 127.0.0.1 that records what it is sent and answers as told.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Behaviour = 'ok' | 'error' | 'hang';

export interface TestReceiver {
  url: string;
  received: Received[];
  behaviour: Behaviour;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Behaviour = 'ok'): Promise<TestReceiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  let waiters: Array<() => void> = [];
  const receiver: TestReceiver = {
    url: '',
    received,
    behaviour,
    waitFor: (count) =>
      new Promise((resolve) => {
        const check = () => {
          if (received.length >= count) resolve();
          else waiters.push(check);
        };
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        for (const response of hanging) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const wake = waiters;
      waiters = [];
      for (const fn of wake) fn();
      if (receiver.behaviour === 'hang') {
        hanging.push(response);
        return;
      }
      response.writeHead(receiver.behaviour === 'ok' ? 201 : 500, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
