// The built daemon's port holds at most 64 connections (MAX_CONNECTIONS, docs/operations.md), 32
// of them from one client address: a client that opens more finds each one past the cap closed
// without an answer, and once its
// connections end the port answers again. Without a status token, `GET /status` answers the
// loopback client (the test binds to loopback only; other addresses are refused, see
// test/status/status-page.test.ts).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS } from '../../src/daemon/http-server.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { DaemonProcess, assertBuilt } from './daemon-process.js';

let emulator: RunningEmulator;
let work: string;
let daemon: DaemonProcess | undefined;
let url: string;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 60_000 }, seed: { organizations: [{ slug: 'acme', name: 'acme' }] } });
  work = await mkdtemp(join(tmpdir(), 'reconciler-doors-e2e-'));
  await mkdir(join(work, 'manifests'));
  await writeFile(join(work, 'manifests', 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
  daemon = new DaemonProcess(
    [join(work, 'manifests'), '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--observe', 'none'],
    { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: join(work, 'state'), RECONCILE_RATE_LIMIT: '1000/1s' },
  );
  url = await daemon.metricsUrl();
  await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'));
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await emulator?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Opens a connection and sends one keep-alive request: `answered` with the connection kept, or `closed` unanswered. */
function open(port: number, from = '127.0.0.1'): Promise<{ socket: Socket; outcome: 'answered' | 'closed' }> {
  return new Promise((resolveOpen, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    let settled = false;
    const settle = (outcome: 'answered' | 'closed') => {
      if (settled) return;
      settled = true;
      resolveOpen({ socket, outcome });
    };
    socket.on('data', () => settle('answered'));
    socket.on('close', () => settle('closed'));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? settle('closed') : reject(error)));
    socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: daemon\r\nConnection: keep-alive\r\n\r\n'));
  });
}

describe("the daemon's doors", () => {
  it('without a status token, GET /status answers the loopback client', async () => {
    const response = await fetch(`${url}/status`, { headers: { connection: 'close' } });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  it(`holds at most ${MAX_CONNECTIONS} connections; the next ones are closed unanswered, and the port answers again when they end`, async () => {
    expect(MAX_CONNECTIONS).toBe(64);
    const port = Number(new URL(url).port);
    const sockets: Socket[] = [];
    const outcomes: string[] = [];
    try {
      // From two loopback addresses (each holds at most MAX_CONNECTIONS_PER_ADDRESS), then a third.
      for (let i = 0; i < MAX_CONNECTIONS + 6; i++) {
        const { socket, outcome } = await open(port, i < MAX_CONNECTIONS_PER_ADDRESS ? '127.0.0.2' : i < MAX_CONNECTIONS ? '127.0.0.3' : '127.0.0.4');
        sockets.push(socket);
        outcomes.push(outcome);
      }
      const answered = outcomes.filter((outcome) => outcome === 'answered').length;
      expect(answered).toBeLessThanOrEqual(MAX_CONNECTIONS);
      expect(answered).toBeGreaterThanOrEqual(MAX_CONNECTIONS - 2);
      expect(outcomes.slice(-6)).toEqual(Array(6).fill('closed'));
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    // The server sees the ends asynchronously: the first connections after may still be dropped.
    let status: number | undefined;
    for (let attempt = 0; attempt < 100 && status === undefined; attempt++) {
      const { socket, outcome } = await open(port);
      socket.destroy();
      if (outcome === 'answered') status = 200;
      else await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    expect(status).toBe(200);
    await daemon!.waitFor((l) => l.msg === "too many connections to the daemon's port: new ones are closed until some end");
  }, 120_000);

  it(`lets one client address hold at most ${MAX_CONNECTIONS_PER_ADDRESS} connections, so a probe from another still gets in`, async () => {
    expect(MAX_CONNECTIONS_PER_ADDRESS).toBe(32);
    const port = Number(new URL(url).port);
    const sockets: Socket[] = [];
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS_PER_ADDRESS + 8; i++) {
        const { socket, outcome } = await open(port, '127.0.0.5');
        sockets.push(socket);
        outcomes.push(outcome);
      }
      expect(outcomes.filter((outcome) => outcome === 'answered').length).toBe(MAX_CONNECTIONS_PER_ADDRESS);
      expect(outcomes.slice(-8)).toEqual(Array(8).fill('closed'));
      // The noisy client still holds its connections: a probe from another address is answered.
      const probe = await open(port, '127.0.0.1');
      probe.socket.destroy();
      expect(probe.outcome).toBe('answered');
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 120_000);
});
