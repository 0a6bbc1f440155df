import { describe, expect, it } from 'vitest';
import { SlidingWindow } from '../../src/api/sliding-window.js';
import { PriorityScheduler } from '../../src/api/priority-scheduler.js';
import { RequestBudget } from '../../src/api/budget.js';
import { backoffDelay, validateRetryPolicy } from '../../src/api/backoff.js';
import { parseRateLimitHeaders } from '../../src/api/rate-limit-headers.js';

describe('SlidingWindow', () => {
  it('allows a send exactly when the limit-th latest send has left the window', () => {
    const window = new SlidingWindow(1_000, [0, 100, 200]);
    expect(window.delayFor(300, 3)).toBe(700);
    expect(window.delayFor(1_000, 3)).toBe(0);
    expect(window.delayFor(1_000, 2)).toBe(100);
    expect(window.count(1_150)).toBe(1);
  });

  it('never records a time earlier than the last one (a clock stepping back)', () => {
    const window = new SlidingWindow(1_000);
    window.answered(window.record(500), 500);
    window.answered(window.record(400), 450);
    expect(window.sends(600)).toEqual([500, 500]);
  });

  it('holds a place from the send until a window after the answer; an open request holds it throughout', () => {
    const window = new SlidingWindow(1_000);
    const slow = window.record(0);
    const fast = window.record(10);
    window.answered(fast, 20);
    expect(window.delayFor(500, 2)).toBe(520);
    expect(window.delayFor(500, 1)).toBe(1_000);
    expect(window.count(5_000)).toBe(1);
    expect(window.sends(5_000)).toEqual([5_000]);
    window.answered(slow, 5_000);
    expect(window.delayFor(5_500, 1)).toBe(500);
    expect(window.delayFor(6_000, 1)).toBe(0);
  });
});

describe('PriorityScheduler', () => {
  it('takes out the waiting items a test accepts (an aborted signal\'s calls) and keeps the turn order of the others', () => {
    const queue = new PriorityScheduler<string>();
    queue.push('a1', 'drift', 'a');
    queue.push('b1', 'drift', 'b');
    queue.push('a2', 'drift', 'a');
    queue.push('c1', 'drift', 'c');
    queue.push('b2', 'write', 'b');
    queue.push('c2', 'drift', 'c');
    const removed = queue.removeWhere((item) => item.startsWith('b') || item === 'c2');
    expect(removed.map((entry) => `${entry.item}:${entry.priority}`).sort()).toEqual(['b1:drift', 'b2:write', 'c2:drift']);
    expect(queue.removeWhere((item) => item.startsWith('b'))).toEqual([]);
    expect([queue.depth('write'), queue.depth('drift')]).toEqual([0, 3]);
    expect([queue.shift()?.item, queue.shift()?.item, queue.shift()?.item, queue.shift()]).toEqual(['a1', 'c1', 'a2', undefined]);
  });

  it('puts a retry at the front of its project line', () => {
    const queue = new PriorityScheduler<string>();
    queue.push('x1', 'write', 'x');
    queue.push('x0', 'write', 'x', true);
    expect(queue.shift()?.item).toBe('x0');
  });
});

describe('RequestBudget', () => {
  it('a 429 explained by our own sends is expected and keeps the limit', () => {
    const budget = new RequestBudget({ rate: { limit: 5, windowMs: 1_000 }, random: () => 0 });
    for (let i = 0; i < 5; i++) budget.answered(budget.recordSend(i), i);
    budget.observe(10, { limit: 5, remaining: 0, resetMs: 990 }, 0);
    const outcome = budget.rateLimited(11, { resetMs: 990 });
    expect(outcome).toEqual({ waitMs: 990, unexpected: false, effectiveLimit: 5 });
    // The block ends at 1001; our own window (first send at 0, 10 ms guard) frees a place at 1010.
    expect(budget.delay(12)).toBe(998);
  });

  it('validates its rate', () => {
    expect(() => new RequestBudget({ rate: { limit: 1.5, windowMs: 1 } })).toThrow('Expected `rate.limit` to be a whole number >= 1, got `1.5` (number)');
    expect(() => new RequestBudget({ rate: { limit: 1, windowMs: -1 } })).toThrow('Expected `rate.windowMs` to be a finite number > 0, got `-1` (number)');
  });
});

describe('backoff', () => {
  it('caps the exponential ceiling and spreads the delay over all of it (full jitter)', () => {
    const policy = validateRetryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000 });
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0.999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay(policy, 3, () => 0)).toBe(0);
    expect(() => validateRetryPolicy({ maxAttempts: 0 })).toThrow('Expected `retry.maxAttempts` to be a whole number >= 1, got `0` (number)');
  });
});

describe('rate-limit headers', () => {
  it('reads seconds, prefers milliseconds when given, and ignores what it cannot read', () => {
    expect(parseRateLimitHeaders({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '12' })).toEqual({ limit: 60, remaining: 3, resetMs: 12_000 });
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '1', 'x-ratelimit-reset-ms': '250' })).toEqual({ resetMs: 250 });
    expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': 'soon', 'x-ratelimit-reset': '-4' })).toEqual({});
  });
});

describe('window file', () => {
  it('counts a claim as sends at its end, and refuses a malformed one', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadWindow } = await import('../../src/api/window-store.js');
    const dir = await mkdtemp(join(tmpdir(), 'window-file-'));
    try {
      await writeFile(join(dir, 'request-window.json'), JSON.stringify({ version: 1, windowMs: 1000, sends: [1, 2], blockedUntil: 0, claim: { count: 3, until: 50 } }));
      expect(await loadWindow(dir)).toEqual({ sends: [1, 2, 50, 50, 50], blockedUntil: 0 });
      await writeFile(join(dir, 'request-window.json'), JSON.stringify({ version: 1, windowMs: 1000, sends: [], blockedUntil: 0, claim: { count: 'x' } }));
      await expect(loadWindow(dir)).rejects.toThrow('expected `claim` to be { count, until } with numbers');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('window file errors', () => {
  it('names the file and the reason when the state directory cannot hold it', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createClient } = await import('../../src/api/client.js');
    const { staticToken } = await import('../../src/api/auth.js');
    const dir = await mkdtemp(join(tmpdir(), 'window-err-'));
    try {
      await writeFile(join(dir, 'file'), '');
      await expect(createClient({ baseUrl: 'http://127.0.0.1:1', auth: staticToken('t'), stateDir: join(dir, 'file') })).rejects.toThrow(
        `${join(dir, 'file', 'request-window.json')}: cannot read the request window: ENOTDIR`,
      );
      await writeFile(join(dir, 'request-window.json'), '{"sends": [');
      await expect(createClient({ baseUrl: 'http://127.0.0.1:1', auth: staticToken('t'), stateDir: dir })).rejects.toThrow(/not valid JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
