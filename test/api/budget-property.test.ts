import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from '../../src/util/clock.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import type { Transport, TransportRequest, TransportResponse } from '../../src/api/transport.js';
import { TransportFailure } from '../../src/api/transport.js';
import type { Priority } from '../../src/api/request.js';

type Outcome = 'ok' | '5xx' | 'reset' | 'refused' | '429';

interface Arrival {
  at: number;
  priority: Priority;
  project: number;
  write: boolean;
  outcomes: Outcome[];
  latency: number;
  remaining: number | undefined;
}

const arrivalArb = fc.record({
  at: fc.integer({ min: 0, max: 4_000 }),
  priority: fc.constantFrom<Priority>('write', 'verify', 'drift'),
  project: fc.integer({ min: 0, max: 3 }),
  write: fc.boolean(),
  outcomes: fc.array(fc.constantFrom<Outcome>('ok', 'ok', 'ok', '5xx', 'reset', 'refused', '429'), { maxLength: 4 }),
  latency: fc.integer({ min: 0, max: 400 }),
  remaining: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
});

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The largest number of sends inside any half-open window [t, t + windowMs). */
function maxInAnyWindow(sends: number[], windowMs: number): number {
  const sorted = [...sends].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[j]! < sorted[i]! - windowMs + 1e-9 && j < i) j++;
    // Sends in (sorted[i] - windowMs, sorted[i]]: the densest windows end at a send.
    while (j < i && sorted[i]! - sorted[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('request budget (property)', () => {
  it('no sliding window ever holds more sends than the budget, whatever arrives and fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 100, max: 1_500 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(arrivalArb, { minLength: 1, maxLength: 40 }),
        fc.integer(),
        async (limit, windowMs, concurrency, arrivals, seed) => {
          const clock = new ManualClock();
          const start = clock.now();
          const sends: number[] = [];
          const cursor = new Map<number, number>();
          const transport: Transport = {
            async send(request: TransportRequest): Promise<TransportResponse> {
              sends.push(clock.now());
              const index = Number(new URL(request.path, 'http://x').searchParams.get('i'));
              const arrival = arrivals[index]!;
              const n = cursor.get(index) ?? 0;
              cursor.set(index, n + 1);
              const outcome = arrival.outcomes[n] ?? 'ok';
              await clock.sleep(arrival.latency);
              if (outcome === 'reset') throw new TransportFailure('reset', true, 'connection reset');
              if (outcome === 'refused') throw new TransportFailure('connect', false, 'could not connect');
              const headers: Record<string, string> = { 'content-type': 'application/json' };
              if (arrival.remaining !== undefined) {
                headers['x-ratelimit-remaining'] = String(arrival.remaining);
                headers['x-ratelimit-reset'] = String(windowMs / 1000);
              }
              if (outcome === '429') {
                headers['x-ratelimit-reset'] = String((arrival.latency % 3) * windowMs / 1000);
                return { status: 429, headers, bytes: new TextEncoder().encode('{"message":"Too many requests"}') };
              }
              if (outcome === '5xx') return { status: 503, headers, bytes: new TextEncoder().encode('{"message":"unavailable"}') };
              return { status: 200, headers, bytes: new TextEncoder().encode(request.method === 'POST' ? '{}' : '[]') };
            },
            async close() {},
          };
          const client = await createClient({
            baseUrl: 'http://127.0.0.1:1',
            auth: staticToken('t0ken'),
            rate: { limit, windowMs },
            clock,
            concurrency,
            transport,
            random: seeded(seed),
            retry: { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 400, maxRateLimitRetries: 2 },
          });
          let settled = 0;
          arrivals.forEach((arrival, i) => {
            clock.schedule(() => {
              const options = { priority: arrival.priority, project: `p${arrival.project}`, query: { i } };
              const call = arrival.write
                ? client.api.createAProject({ name: 'x', organization_id: 'o', db_pass: 'pw', region: 'us-east-1' } as never, options)
                : client.api.listAllProjects(options);
              call.then(() => undefined, () => undefined).finally(() => { settled += 1; });
            }, arrival.at);
          });
          for (let guard = 0; settled < arrivals.length && guard < 100_000; guard++) {
            const next = clock.nextAt();
            await clock.advance(next === undefined ? 1 : Math.max(1, next - clock.now()));
          }
          expect(settled).toBe(arrivals.length);
          expect(sends.length).toBeGreaterThanOrEqual(arrivals.length);
          expect(maxInAnyWindow(sends.map((t) => t - start), windowMs)).toBeLessThanOrEqual(limit);
          await client.close();
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('priority order (property)', () => {
  it('no call is sent while a call of a higher priority that arrived earlier still waits for its first send', async () => {
    const rank: Record<Priority, number> = { write: 0, verify: 1, drift: 2 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 100, max: 1_000 }),
        fc.array(arrivalArb, { minLength: 2, maxLength: 30 }),
        fc.integer(),
        async (limit, windowMs, arrivals, seed) => {
          const clock = new ManualClock();
          const arrivedAt = new Map<number, number>();
          const firstSentAt = new Map<number, number>();
          const violations: string[] = [];
          const cursor = new Map<number, number>();
          const transport: Transport = {
            async send(request: TransportRequest): Promise<TransportResponse> {
              const index = Number(new URL(request.path, 'http://x').searchParams.get('i'));
              const now = clock.now();
              if (!firstSentAt.has(index)) {
                for (const [other, at] of arrivedAt) {
                  if (at < now && !firstSentAt.has(other) && rank[arrivals[other]!.priority] < rank[arrivals[index]!.priority]) {
                    violations.push(`${index} (${arrivals[index]!.priority}) sent at ${now} while ${other} (${arrivals[other]!.priority}) waited since ${at}`);
                  }
                }
                firstSentAt.set(index, now);
              }
              const n = cursor.get(index) ?? 0;
              cursor.set(index, n + 1);
              const outcome = arrivals[index]!.outcomes[n] ?? 'ok';
              await clock.sleep(arrivals[index]!.latency);
              if (outcome === 'reset') throw new TransportFailure('reset', true, 'connection reset');
              if (outcome === '429') return { status: 429, headers: { 'x-ratelimit-reset': '0.2' }, bytes: new Uint8Array() };
              if (outcome === '5xx') return { status: 500, headers: {}, bytes: new Uint8Array() };
              return { status: 200, headers: { 'content-type': 'application/json' }, bytes: new TextEncoder().encode('[]') };
            },
            async close() {},
          };
          const client = await createClient({
            baseUrl: 'http://127.0.0.1:1',
            auth: staticToken('t0ken'),
            rate: { limit, windowMs },
            clock,
            concurrency: 1,
            transport,
            random: seeded(seed),
            retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 50, maxRateLimitRetries: 1 },
          });
          let settled = 0;
          arrivals.forEach((arrival, i) => {
            clock.schedule(() => {
              arrivedAt.set(i, clock.now());
              client.api
                .listAllProjects({ priority: arrival.priority, project: `p${arrival.project}`, query: { i } })
                .then(() => undefined, () => undefined)
                .finally(() => {
                  settled += 1;
                });
            }, arrival.at);
          });
          for (let guard = 0; settled < arrivals.length && guard < 100_000; guard++) {
            const next = clock.nextAt();
            await clock.advance(next === undefined ? 1 : Math.max(1, next - clock.now()));
          }
          expect(settled).toBe(arrivals.length);
          expect(violations).toEqual([]);
          await client.close();
        },
      ),
      { numRuns: 100 },
    );
  });
});
