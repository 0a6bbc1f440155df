import { describe, expect, it } from 'vitest';
import { buildFleetView } from '../../src/status/fleet-view.js';
import { emptyStatusRecord, foldFailure, foldPass, MAX_RECENT_ERRORS } from '../../src/status/status-record.js';
import type { PassResult } from '../../src/reconcile/types.js';
import { passResult, resource } from '../daemon/fixtures.js';

const CANARY = 'sk_live_CANARY_9f8e7d6c5b4a39281706';
const REVISION = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const AT = Date.UTC(2026, 0, 1, 0, 1, 0);

function clean(projects: string[], overrides: Partial<PassResult> = {}): PassResult {
  return passResult({
    plan: { entries: projects.map((p) => ({ id: `ProjectAuth/${p}/auth`, kind: 'ProjectAuth', project: p, name: 'auth', action: 'noop', changes: [] })), summary: { create: 0, update: 0, delete: 0, noop: projects.length, blocked: 0 }, hasChanges: false },
    outcomes: [],
    resources: projects.map((p) => resource(p, 'ProjectAuth', 'auth', 'in_sync')),
    projects: projects.map((name) => ({ name, ref: `ref-${name}`, status: 'ACTIVE_HEALTHY', observedAt: AT - 1000 })),
    result: 'success',
    ...overrides,
  });
}

describe('status record', () => {
  it('records a failed write with its error scrubbed, the project failed and its applied revision unchanged', () => {
    const first = foldPass(emptyStatusRecord(), clean(['shop', 'blog']), {}, AT);
    expect(first.projects.shop!.revision).toBe(REVISION);
    const failing = passResult({
      revision: 'ffff000011112222333344445555666677778888',
      outcomes: [
        { entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'failed', error: { type: 'ApiError', message: `PATCH answered 400: value "${CANARY}" is not valid; token ${CANARY}` } },
      ],
    });
    const next = foldPass(first, failing, { projects: ['shop'] }, AT + 60_000);
    expect(JSON.stringify(next)).not.toContain(CANARY);
    expect(next.projects.shop!.lastError?.message).toMatch(/^ApiError: PATCH answered 400/);
    expect(next.projects.shop!.revision).toBe(REVISION);
    expect(next.errors[0]).toMatchObject({ project: 'shop', resource: 'ProjectAuth/shop/auth' });
    // The pass was limited to shop: blog keeps its record.
    expect(next.projects.blog).toEqual(first.projects.blog);
    const view = buildFleetView(next, { now: AT + 120_000, source: 'daemon' });
    expect(view.projects.find((p) => p.name === 'shop')!.state).toBe('failed');
    expect(view.projects.find((p) => p.name === 'blog')!.state).toBe('in_sync');
    expect(view.recentErrors[0]!.message).not.toContain(CANARY);
  });

  it('says why a change waits: a dry run, a block, a change on the service side', () => {
    const result = passResult({
      dryRun: true,
      outcomes: [],
      plan: {
        entries: [
          { id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', project: 'shop', name: 'auth', action: 'update', changes: [{ path: 'auth.site_url' }] },
          { id: 'Secret/shop/KEY', kind: 'Secret', project: 'shop', name: 'KEY', action: 'blocked', changes: [], reason: 'the secret variable is not set' },
          { id: 'ProjectCustomHostname/shop/custom_hostname', kind: 'ProjectCustomHostname', project: 'shop', name: 'custom_hostname', action: 'noop', changes: [], pending: true, reason: 'waiting for DNS verification' },
        ] as PassResult['plan']['entries'],
        summary: { create: 0, update: 1, delete: 0, noop: 1, blocked: 1 },
        hasChanges: true,
      },
      resources: [],
      projects: [{ name: 'shop', ref: 'ref-shop', observedAt: AT }],
    });
    const record = foldPass(emptyStatusRecord(), result, {}, AT);
    expect(record.projects.shop!.pending.map((c) => [c.id, c.waitingFor])).toEqual([
      ['ProjectAuth/shop/auth', 'dry-run'],
      ['Secret/shop/KEY', 'blocked'],
      ['ProjectCustomHostname/shop/custom_hostname', 'service'],
    ]);
    expect(record.projects.shop!.revision).toBeUndefined();
    // The same wait found again keeps its start.
    const again = foldPass(record, result, {}, AT + 30_000);
    expect(again.projects.shop!.pending[0]!.since).toBe(AT);
    const view = buildFleetView(again, { now: AT + 60_000, source: 'state-dir' });
    expect(view.summary.pendingChanges).toBe(3);
    expect(view.projects[0]!.state).toBe('failed');
    expect(view.waiting).toBeUndefined();
  });

  it('a full pass drops projects it no longer saw; a pass that failed early keeps them', () => {
    const both = foldPass(emptyStatusRecord(), clean(['shop', 'blog']), {}, AT);
    const early = passResult({ result: 'failed', projects: [], resources: [], outcomes: [], plan: { entries: [], summary: { create: 0, update: 0, delete: 0, noop: 0, blocked: 0 }, hasChanges: false } });
    expect(Object.keys(foldPass(both, early, {}, AT + 1).projects).sort()).toEqual(['blog', 'shop']);
    expect(Object.keys(foldPass(both, clean(['shop']), {}, AT + 2).projects)).toEqual(['shop']);
  });

  it('keeps the newest errors only', () => {
    let record = emptyStatusRecord();
    for (let i = 0; i < MAX_RECENT_ERRORS + 5; i++) record = foldFailure(record, `failure ${i}`, AT + i);
    expect(record.errors).toHaveLength(MAX_RECENT_ERRORS);
    expect(record.errors[0]!.message).toBe(`failure ${MAX_RECENT_ERRORS + 4}`);
  });

  it('lists declared projects never observed as pending, and held changes under waiting', () => {
    const record = foldPass(emptyStatusRecord(), clean(['shop']), {}, AT);
    record.projects.shop!.pending.push({ id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', name: 'auth', action: 'update', waitingFor: 'approval', reason: 'rollout tenants: wave rest waits for an approval', since: AT });
    const view = buildFleetView(record, { now: AT + 5_000, source: 'daemon', projects: ['shop', 'new-one'] });
    expect(view.projects.map((p) => [p.name, p.state])).toEqual([
      ['new-one', 'pending'],
      ['shop', 'in_sync'],
    ]);
    expect(view.waiting?.map((c) => c.waitingFor)).toEqual(['approval']);
    expect(view.projects[1]!.ageSeconds).toBe(6);
  });
});
