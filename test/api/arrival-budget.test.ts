// The budget at arrival: the service counts a request when it arrives, which may be long after
// its send. A proxy on 127.0.0.1 in front of the emulator holds each request for 50 ms to 2 s
// (from a seeded generator) before passing it on; the emulator's log then holds the arrival
// times, and no window of them, starting anywhere, may hold more than the budget.
import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { seededRandom } from '../../src/emulator/random.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { systemClock } from '../../src/util/clock.js';
import { maxInAnyWindow } from '../../src/bench/window.js';

const SEED = {
  users: [{ id: 'alice', name: 'Alice', tokens: ['alice-token-0001'] }],
  organizations: [{ name: 'Acme', slug: 'acme', members: [{ user: 'alice' }] }],
};

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

/** A proxy that holds every request for a latency drawn from `latencyMs` before forwarding it. */
async function latencyProxy(target: string, latencyMs: () => number): Promise<{ url: string; close: () => Promise<void> }> {
  const origin = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void systemClock.sleep(latencyMs()).then(() => {
        const upstream = httpRequest(
          { host: origin.hostname, port: origin.port, method: req.method, path: req.url, headers: req.headers, agent },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(Buffer.concat(chunks));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

describe('budget at arrival', () => {
  it('with 50 ms to 2 s of added latency per request, no window of arrivals holds more than the budget', async () => {
    const rate = { limit: 20, windowMs: 3_000 };
    const emu: RunningEmulator = await startEmulator({ port: 0, seed: SEED, rateLimit: rate });
    cleanup.push(() => emu.close());
    const random = seededRandom(20260101);
    const proxy = await latencyProxy(emu.url, () => 50 + Math.floor(random() * 1_950));
    cleanup.push(() => proxy.close());
    // Eight at once: fast and slow requests overlap, so late arrivals meet early ones of the next window.
    const client = await createClient({ baseUrl: proxy.url, auth: staticToken('alice-token-0001'), rate, concurrency: 8 });
    cleanup.push(() => client.close());

    const calls = 45;
    await Promise.all(Array.from({ length: calls }, () => client.api.listAllOrganizations()));

    const arrivals = emu.requests().filter((e) => e.path.startsWith('/v1/'));
    expect(arrivals).toHaveLength(calls);
    expect(arrivals.filter((e) => e.status === 429)).toEqual([]);
    expect(maxInAnyWindow(arrivals.map((e) => e.time), rate.windowMs)).toBeLessThanOrEqual(rate.limit);
    expect(client.stats()).toMatchObject({ sent: calls, rateLimited: 0 });
  });
});
