import type { Clock } from '../../../src/util/clock.js';
import { ManualClock } from '../../../src/util/clock.js';
import type { Transport, TransportRequest, TransportResponse } from '../../../src/api/transport.js';

export interface Sent {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
}

export type Reply = TransportResponse | Error | ((request: TransportRequest) => TransportResponse | Error);

export function reply(status: number, body: unknown = {}, headers: Record<string, string> = {}): TransportResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, bytes: new TextEncoder().encode(JSON.stringify(body)) };
}

/** A scripted transport on an injected clock: answers per path (a queue each), default 200 `{}`. */
export function fakeTransport(clock: Clock, options: { latencyMs?: number } = {}) {
  const sent: Sent[] = [];
  const scripts = new Map<string, Reply[]>();
  let fallback: Reply = reply(200, {});
  const transport: Transport = {
    async send(request) {
      sent.push({ at: clock.now(), method: request.method, path: request.path, headers: request.headers });
      const key = `${request.method} ${request.path}`;
      const queue = scripts.get(key);
      const next = queue && queue.length > 0 ? queue.shift()! : fallback;
      if (options.latencyMs) await clock.sleep(options.latencyMs);
      const answer = typeof next === 'function' ? next(request) : next;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    async close() {},
  };
  return {
    transport,
    sent,
    script(method: string, path: string, ...replies: Reply[]) {
      scripts.set(`${method} ${path}`, [...(scripts.get(`${method} ${path}`) ?? []), ...replies]);
    },
    setDefault(next: Reply) {
      fallback = next;
    },
  };
}

/**
 * Advances a manual clock timer by timer until `done()` or the step budget runs out. While no
 * timer is pending the clock stands still and only I/O runs (the request window's writes are
 * real file writes): a slow disk must not be mistaken for time passing, nor use up the steps.
 */
export async function runUntil(clock: ManualClock, done: () => boolean, maxSteps = 10_000): Promise<void> {
  for (let step = 0; step < maxSteps && !done(); ) {
    const next = clock.nextAt();
    if (next === undefined) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      continue;
    }
    await clock.advance(Math.max(1, next - clock.now()));
    step++;
  }
  if (!done()) throw new Error('runUntil: condition not reached');
}

/** Wraps promises so a test can see which have settled without awaiting them. */
export function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown; promise: Promise<void> } {
  const state: { settled: boolean; value?: T; error?: unknown; promise: Promise<void> } = { settled: false, promise: Promise.resolve() };
  state.promise = promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}
