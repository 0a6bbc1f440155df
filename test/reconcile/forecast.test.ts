// The forecast a plan gives before a wait: reads at the pass's budget, and a pull request's
// apply at the daemon's budget with its soaks, approvals and windows as named waits.
import { describe, expect, it } from 'vitest';
import { aboutDuration, applyForecast, applyForecastLine, rateText, readsForecast } from '../../src/reconcile/forecast.js';
import { renderMarkdown } from '../../src/reconcile/render/markdown.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import type { PassResult, PlanEntry } from '../../src/reconcile/types.js';

const ONE_SHOT = { limit: 15, windowMs: 60_000 };
const DAEMON = { limit: 45, windowMs: 60_000 };

function update(project: string, wave?: string, held?: PlanEntry['held']): PlanEntry {
  return { id: `ProjectAuth/${project}/auth`, kind: 'ProjectAuth', project, name: 'auth', action: 'update', changes: [{ path: 'auth.site_url', before: 'a', after: 'b' }], ...(wave ? { wave } : {}), ...(held ? { held } : {}) };
}

function result(entries: PlanEntry[], overrides: Partial<PassResult> = {}): PassResult {
  return {
    startedAt: 0, finishedAt: 1, dryRun: true, manifestErrors: [], plan: summarizePlan(entries), outcomes: [], resources: [], projects: [], result: 'success', requests: 40,
    ...overrides,
  };
}

const rollout = (waves: string[], soakMs: number): PassResult['rollout'] => ({
  name: 'fleet', revision: 'r1', waves: waves.map((name) => ({ name, state: 'waiting' as const, projects: 1, members: [name] })), waiting: [], revisions: {}, soakMs, events: [],
});

describe('the reads forecast', () => {
  it('says how many reads and how long at the budget, as the issue\'s 40 projects do', () => {
    expect(readsForecast(402, ONE_SHOT)).toBe('402 reads at 15/60s: about 27 min');
    expect(readsForecast(402, { limit: 50, windowMs: 60_000 })).toBe('402 reads at 50/60s: about 8 min');
    expect(readsForecast(1, ONE_SHOT)).toBe('1 read at 15/60s: under a minute');
    expect(rateText({ limit: 60, windowMs: 1_000 })).toBe('60/1s');
    expect(aboutDuration(125 * 60_000)).toBe('about 2 h 5 min');
    expect(aboutDuration(120 * 60_000)).toBe('about 2 h');
  });
});

describe('the apply forecast', () => {
  it('counts the plan\'s reads again, one write and one verifying read per change, at the daemon\'s budget', () => {
    const forecast = applyForecast(result([update('a'), update('b')], { requests: 40 }), DAEMON);
    expect(forecast).toEqual({ reads: 42, writes: 2, soaks: [], waits: [], ms: (44 / 45) * 60_000 });
    expect(applyForecastLine(forecast, DAEMON, "the daemon's default budget")).toBe("Apply forecast: 44 requests (2 writes, 42 reads) at the daemon's default budget (45/60s): about 1 min.");
  });

  it('adds a soak between waves with changes, and names approvals and windows with no time on them', () => {
    const entries = [
      update('canary', 'canary'),
      update('tenant-1', 'tenants', { reason: 'wave', message: 'waits for canary' }),
      update('tenant-2', 'tenants', { reason: 'approval', name: 'enterprise', message: 'needs approval (enterprise)' }),
      update('tenant-3', 'tenants', { reason: 'window', name: 'nights', message: 'waits for maintenance window nights' }),
      update('tenant-4', 'tenants', { reason: 'window', name: 'nights', message: 'waits for maintenance window nights' }),
      update('last', 'last', { reason: 'wave', message: 'waits for tenants' }),
    ];
    const forecast = applyForecast(result(entries, { requests: 30, rollout: rollout(['canary', 'tenants', 'last'], 30 * 60_000) }), DAEMON);
    expect(forecast.writes).toBe(3);
    expect(forecast.soaks).toEqual([{ wave: 'canary', ms: 30 * 60_000 }, { wave: 'tenants', ms: 30 * 60_000 }]);
    expect(forecast.waits).toEqual([{ reason: 'approval', name: 'enterprise', changes: 1 }, { reason: 'window', name: 'nights', changes: 2 }]);
    expect(applyForecastLine(forecast, DAEMON, "the daemon's default budget")).toBe(
      "Apply forecast: 36 requests (3 writes, 33 reads) at the daemon's default budget (45/60s), plus soaks 1 h (canary, tenants): about 1 h 1 min; then, with no time put on them: approval enterprise (1 change), window nights (2 changes).",
    );
  });

  it('is in the markdown plan of a dry run with changes, and not in one without', () => {
    const options = { forecast: { rate: DAEMON, budget: "the daemon's default budget" } };
    expect(renderMarkdown(result([update('a')], { requests: 20 }), options)).toContain("Apply forecast: 22 requests (1 write, 21 reads) at the daemon's default budget (45/60s): under a minute.");
    const noop: PlanEntry = { id: 'Organization/acme', kind: 'Organization', name: 'acme', action: 'noop', changes: [] };
    expect(renderMarkdown(result([noop]), options)).not.toContain('Apply forecast');
    expect(renderMarkdown(result([update('a')], { dryRun: false }), options)).not.toContain('Apply forecast');
  });
});
