// Waits derived from headers are bounded: no answer can make the client wait, or persist a
// block, beyond maxHeaderWaitMs (ten windows, at least two minutes).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { createClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { maxHeaderWaitMs } from '../../src/api/budget.js';
import { parseRateLimitHeaders } from '../../src/api/rate-limit-headers.js';
import { fakeTransport, reply, track } from './helpers/fake-transport.js';

/**
 * Fires the clock's timers in order until `done()`. While no timer is due the clock stands
 * still and only I/O runs (the window file's writes are real), so no clock time passes for it.
 */
async function runUntil(clock: ManualClock, done: () => boolean): Promise<void> {
  while (!done()) {
    const next = clock.nextAt();
    if (next === undefined) await new Promise<void>((resolve) => setImmediate(resolve));
    else await clock.advance(Math.max(0, next - clock.now()));
  }
}

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('rate-limit headers are validated and capped', () => {
  const cap = { maxWaitMs: 120_000, now: Date.UTC(2026, 0, 1) };

  it('cuts absurd waits to the cap instead of obeying or ignoring them', () => {
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset-ms': '1e300' }, cap)).toEqual({ resetMs: 120_000 });
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset-ms': '1e999' }, cap)).toEqual({});
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset-ms': '1' + '0'.repeat(300) }, cap)).toEqual({ resetMs: 120_000 });
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '99999999999' }, cap)).toEqual({ resetMs: 120_000 });
    expect(parseRateLimitHeaders({ 'retry-after': '86400' }, cap)).toEqual({ resetMs: 120_000 });
  });

  it('treats non-finite, negative and non-decimal values as absent', () => {
    for (const value of ['Infinity', '-Infinity', 'NaN', '-5', '0x10', '-1e3', '', ' ', '12abc']) {
      expect(parseRateLimitHeaders({ 'x-ratelimit-reset-ms': value, 'x-ratelimit-reset': value, 'x-ratelimit-remaining': value, 'x-ratelimit-limit': value, 'retry-after': value }, cap)).toEqual({});
    }
    expect(parseRateLimitHeaders({ 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '99999999' }, cap)).toEqual({});
  });

  it('reads Retry-After as seconds or an HTTP date, and keeps the longer of it and the reset', () => {
    expect(parseRateLimitHeaders({ 'retry-after': '7', 'x-ratelimit-reset-ms': '2000' }, cap)).toEqual({ resetMs: 7_000 });
    expect(parseRateLimitHeaders({ 'retry-after': '1', 'x-ratelimit-reset-ms': '2000' }, cap)).toEqual({ resetMs: 2_000 });
    expect(parseRateLimitHeaders({ 'retry-after': new Date(cap.now + 30_000).toUTCString() }, cap)).toEqual({ resetMs: 30_000 });
    expect(parseRateLimitHeaders({ 'retry-after': new Date(cap.now - 30_000).toUTCString() }, cap)).toEqual({ resetMs: 0 });
  });

  it('caps at ten windows, never below two minutes', () => {
    expect(maxHeaderWaitMs(1_000)).toBe(120_000);
    expect(maxHeaderWaitMs(60_000)).toBe(600_000);
  });
});

describe('a 429 announcing an endless block', () => {
  it('blocks for the cap at most, on disk too: a new run may send once the cap has passed', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'bounded-wait-'));
    dirs.push(stateDir);
    const clock = new ManualClock();
    const fake = fakeTransport(clock, { latencyMs: 10 });
    const rate = { limit: 10, windowMs: 1_000 };
    const cap = maxHeaderWaitMs(rate.windowMs);
    fake.script('GET', '/v1/projects', reply(429, { message: 'Too many' }, { 'x-ratelimit-reset-ms': '1' + '0'.repeat(300), 'x-ratelimit-remaining': '0' }));
    fake.setDefault(reply(200, []));
    let limitedAt = 0;
    const telemetry = { requestFinished: () => undefined, budget: () => undefined, queueDepth: () => undefined, rateLimited: () => (limitedAt = clock.now()) };
    const client = await createClient({ baseUrl: 'http://api.test', auth: staticToken('tok'), clock, transport: fake.transport, rate, stateDir, telemetry, random: () => 0.99 });
    const call = track(client.api.listAllProjects());
    await runUntil(clock, () => client.stats().rateLimited === 1);
    expect(client.budget().remaining).toBe(0);
    await client.close();
    expect(call.settled).toBe(true);
    const saved = JSON.parse(await readFile(join(stateDir, 'request-window.json'), 'utf8')) as { blockedUntil: number };
    expect(saved.blockedUntil).toBeGreaterThan(limitedAt);
    expect(saved.blockedUntil).toBeLessThanOrEqual(limitedAt + cap);

    // A new run reads the block and keeps it, but not a moment past the cap.
    const again = await createClient({ baseUrl: 'http://api.test', auth: staticToken('tok'), clock, transport: fake.transport, rate, stateDir });
    expect(again.budget().remaining).toBe(0);
    await clock.advance(limitedAt + cap - clock.now());
    expect(again.budget().remaining).toBeGreaterThan(0);
    await again.close();
  });

  it('a tampered window file cannot hold a start beyond the cap', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'bounded-wait-'));
    dirs.push(stateDir);
    const clock = new ManualClock();
    const fake = fakeTransport(clock);
    await writeFile(join(stateDir, 'request-window.json'), JSON.stringify({ version: 1, windowMs: 1_000, sends: [], blockedUntil: 1e300 }));
    const client = await createClient({ baseUrl: 'http://api.test', auth: staticToken('tok'), clock, transport: fake.transport, rate: { limit: 10, windowMs: 1_000 }, stateDir });
    expect(client.budget().remaining).toBe(0);
    await clock.advance(maxHeaderWaitMs(1_000));
    expect(client.budget().remaining).toBe(10);
    await client.close();
  });
});
