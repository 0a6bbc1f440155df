// The two rate models, in the emulator and in the client, and the defaults that add up.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/emulator/rate-limiter.js';
import { BudgetSet, rateKey, USER_KEY } from '../../src/api/rate-model.js';
import { parseCommandLine } from '../../src/cli/main.js';
import { resolveRate, resolveRateModel } from '../../src/cli/api-session.js';
import type { CommandContext } from '../../src/cli/context.js';
import { passByModel } from '../../src/bench/scenarios.js';

function context(argv: string[], env: NodeJS.ProcessEnv = {}): CommandContext {
  const parsed = parseCommandLine(argv, env);
  return { positionals: parsed.positionals, values: parsed.values, flags: parsed.flags, env, cwd: process.cwd(), stdout: new PassThrough(), stderr: new PassThrough(), signal: new AbortController().signal };
}

describe('emulator rate models', () => {
  it('user: one count per user across every route', () => {
    const limiter = new RateLimiter({ limit: 3, windowMs: 1_000 });
    const a = limiter.bucket('u', 'GET', '/v1/projects/{ref}/secrets', { ref: 'a' });
    const b = limiter.bucket('u', 'GET', '/v1/projects', {});
    expect(a).toEqual(b);
    expect([1, 2, 3].map(() => limiter.take('u', 0, a).allowed)).toEqual([true, true, true]);
    expect(limiter.take('u', 1, b)).toMatchObject({ allowed: false, limit: 3, remaining: 0 });
  });

  it('scoped: per user, scope and endpoint; lists against the user; custom hostname writes at 10', () => {
    const limiter = new RateLimiter({ limit: 3, windowMs: 1_000 }, 'scoped');
    const secretsA = limiter.bucket('u', 'GET', '/v1/projects/{ref}/secrets', { ref: 'a' });
    const secretsB = limiter.bucket('u', 'GET', '/v1/projects/{ref}/secrets', { ref: 'b' });
    const functionsA = limiter.bucket('u', 'GET', '/v1/projects/{ref}/functions', { ref: 'a' });
    const projects = limiter.bucket('u', 'GET', '/v1/projects', {});
    const organizations = limiter.bucket('u', 'GET', '/v1/organizations', {});
    expect(new Set([secretsA.id, secretsB.id, functionsA.id, projects.id]).size).toBe(4);
    expect(projects).toEqual(organizations);
    for (const bucket of [secretsA, secretsB, functionsA]) expect([1, 2, 3].map(() => limiter.take('u', 0, bucket).allowed)).toEqual([true, true, true]);
    expect(limiter.take('u', 0, secretsA)).toMatchObject({ allowed: false, limit: 3 });
    // A full project count leaves the user's lists and the other project alone.
    expect(limiter.take('u', 0, projects)).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(limiter.take('u', 1, organizations)).toMatchObject({ allowed: true, remaining: 1 });
    const wide = new RateLimiter({ limit: 60, windowMs: 1_000 }, 'scoped');
    const initialize = wide.bucket('u', 'POST', '/v1/projects/{ref}/custom-hostname/initialize', { ref: 'a' });
    expect(initialize.limit).toBe(10);
    expect(Array.from({ length: 11 }, () => wide.take('u', 0, initialize).allowed).filter(Boolean)).toHaveLength(10);
  });
});

describe('client budgets by key', () => {
  it('keys requests as the scoped service counts them', () => {
    expect(rateKey('user', 'GET', '/v1/projects/{ref}/secrets', { ref: 'a' })).toBe(USER_KEY);
    expect(rateKey('scoped', 'GET', '/v1/projects', {})).toBe(USER_KEY);
    expect(rateKey('scoped', 'GET', '/v1/organizations/{slug}/members', { slug: 'acme' })).toBe('organization:acme GET /v1/organizations/{slug}/members');
    expect(rateKey('scoped', 'GET', '/v1/projects/{ref}/secrets', { ref: 'a' })).toBe('project:a GET /v1/projects/{ref}/secrets');
  });

  it('starts an unseen key at its share of the strictest limit, then takes its share of the announced one', () => {
    const budgets = new BudgetSet({ model: 'scoped', rate: { limit: 45, windowMs: 60_000 } });
    const key = rateKey('scoped', 'GET', '/v1/projects/{ref}/secrets', { ref: 'a' });
    expect(budgets.user.limit).toBe(45);
    expect(budgets.get(key).limit).toBe(7);
    budgets.learn(key, { limit: 120 });
    expect(budgets.get(key).limit).toBe(90);
    const user = new BudgetSet({ model: 'user', rate: { limit: 45, windowMs: 60_000 } });
    user.learn(USER_KEY, { limit: 120 });
    expect(user.get(USER_KEY).limit).toBe(45);
  });
});

describe('default budgets', () => {
  it('a daemon and a one-shot run on one identity stay within the spec\'s 60 per minute; --rate-limit and the environment override', () => {
    const daemon = resolveRate(context(['--watch']));
    const oneShot = resolveRate(context(['--dry-run']));
    expect(daemon).toEqual({ limit: 45, windowMs: 60_000 });
    expect(oneShot).toEqual({ limit: 15, windowMs: 60_000 });
    expect(daemon.limit * (60_000 / daemon.windowMs) + oneShot.limit * (60_000 / oneShot.windowMs)).toBeLessThanOrEqual(60);
    expect(resolveRate(context(['--watch', '--rate-limit', '30/60s']))).toEqual({ limit: 30, windowMs: 60_000 });
    expect(resolveRate(context(['--dry-run'], { RECONCILE_RATE_LIMIT: '20/60s' }))).toEqual({ limit: 20, windowMs: 60_000 });
    expect(resolveRateModel(context([]))).toBe('user');
    expect(resolveRateModel(context([], { RECONCILE_RATE_MODEL: 'scoped' }))).toBe('scoped');
    expect(() => resolveRateModel(context(['--rate-model', 'team']))).toThrow('--rate-model: Expected a rate model, one of user, scoped, got `team`');
  });
});

describe('scoped model end to end', () => {
  it('a no-change pass over 100 projects: the same requests as per user, one against the user, zero 429s', async () => {
    const scoped = await passByModel('scoped', 100);
    expect(scoped.requests).toBe(scoped.lowerBound);
    expect(scoped.userScoped).toBe(1);
    expect(scoped.rateLimited).toBe(0);
  }, 120_000);
});
