import { describe, expect, it } from 'vitest';
import { buildStatusReport, renderStatusJson, renderStatusText } from '../../src/reconcile/kinds/status-report.js';
import type { PassResult } from '../../src/reconcile/types.js';
import type { ObservedProjectState } from '../../src/reconcile/kinds/observed.js';

const T = Date.UTC(2026, 10, 22, 1, 0, 0);

function result(): PassResult {
  return {
    startedAt: T,
    finishedAt: T + 1000,
    dryRun: true,
    manifestErrors: [],
    plan: {
      entries: [
        { id: 'Secret/shop/API_KEY', kind: 'Secret', project: 'shop', name: 'API_KEY', action: 'update', changes: [{ path: 'value', sensitive: true }] },
        { id: 'Secret/shop/OTHER', kind: 'Secret', project: 'shop', name: 'OTHER', action: 'noop', changes: [] },
        { id: 'Function/shop/hello', kind: 'Function', project: 'shop', name: 'hello', action: 'create', changes: [{ path: 'sources', after: 'sha256:abc' }] },
        { id: 'Branch/shop/dev', kind: 'Branch', project: 'shop', name: 'dev', action: 'blocked', changes: [], reason: 'the project sets branching_disabled: true' },
      ],
      summary: { create: 1, update: 1, delete: 0, noop: 1, blocked: 1 },
      hasChanges: true,
    },
    outcomes: [],
    resources: [
      { id: 'Function/shop/other', kind: 'Function', project: 'shop', name: 'other', state: 'drifted', fields: ['verify_jwt'], observedAt: T + 500 },
    ],
    projects: [{ name: 'shop', ref: 'abcdefghijklmnopqrst', status: 'ACTIVE_HEALTHY', observedAt: T + 200 }],
    result: 'success',
    requests: 5,
  };
}

const observed: ObservedProjectState = {
  ref: 'abcdefghijklmnopqrst',
  observedAt: T + 2000,
  networkBans: { bannedIpv4: ['10.0.0.1'] },
  apiKeys: [{ name: 'anon', type: 'publishable', prefix: 'pk_', id: 'k1' }],
  backups: { walgEnabled: true, pitrEnabled: false, count: 2, latestBackupAt: '2026-11-21T00:00:00.000Z' },
  readOnly: { enabled: false, overrideEnabled: false },
  health: [{ name: 'db', healthy: true, status: 'ACTIVE_HEALTHY' }, { name: 'auth', healthy: false, status: 'COMING_UP' }],
  upgrade: null,
  errors: [],
};

describe('status report', () => {
  it('gives every managed resource a state, its drifted fields and its observation time', () => {
    const report = buildStatusReport(result(), new Map([[observed.ref, observed]]), T + 3000);
    expect(report.counts).toEqual({ in_sync: 1, drifted: 2, held: 0, pending: 1, failed: 1 });
    const shop = report.projects[0]!;
    expect(shop.resources.map((r) => [r.kind, r.name, r.state])).toEqual([
      ['Branch', 'dev', 'failed'],
      ['Function', 'hello', 'pending'],
      ['Function', 'other', 'drifted'],
      ['Secret', 'API_KEY', 'drifted'],
      ['Secret', 'OTHER', 'in_sync'],
    ]);
    expect(shop.resources.find((r) => r.name === 'API_KEY')!.fields).toEqual(['value']);
    expect(shop.resources.find((r) => r.name === 'other')!.observedAt).toBe('2026-11-22T01:00:00.500Z');
    expect(shop.observed).toBe(observed);
  });

  it('a failed apply outcome marks its resource failed', () => {
    const r = result();
    r.outcomes.push({ entryId: 'Secret/shop/API_KEY', kind: 'Secret', action: 'update', result: 'failed', error: { type: 'TransientError', message: 'POST /v1/projects/{ref}/secrets: 503' } });
    const report = buildStatusReport(r, new Map(), T);
    const item = report.projects[0]!.resources.find((x) => x.name === 'API_KEY')!;
    expect(item.state).toBe('failed');
    expect(item.message).toBe('TransientError: POST /v1/projects/{ref}/secrets: 503');
  });

  it('renders a table per project with the observed-only facts', () => {
    const text = renderStatusText(buildStatusReport(result(), new Map([[observed.ref, observed]]), T + 3000), { color: false });
    expect(text).toContain('Status at 2026-11-22T01:00:03.000Z: 1 in sync, 2 drifted, 1 pending, 1 failed');
    expect(text).toContain('Project shop (ref abcdefghijklmnopqrst, ACTIVE_HEALTHY), observed 2026-11-22T01:00:00.200Z');
    expect(text).toMatch(/Secret\s+API_KEY\s+drifted\s+2026-11-22T01:00:01.000Z\s+fields: value/);
    expect(text).toContain('health: 1/2 services healthy (not healthy: auth COMING_UP)');
    expect(text).toContain('network bans: 10.0.0.1');
    expect(text).toContain('API keys: anon (publishable, prefix pk_)');
    expect(text).toContain('backups: 2, latest 2026-11-21T00:00:00.000Z; PITR off');
    expect(text).toContain('upgrade: none');
    expect(text).not.toContain('\u001b[');
    expect(renderStatusText(buildStatusReport(result(), new Map(), T), { color: true })).toContain('\u001b[33mdrifted');
  });

  it('cuts a long field list in the table but keeps all of it in JSON', () => {
    const r = result();
    r.resources.push({ id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', project: 'shop', name: 'auth', state: 'drifted', fields: Array.from({ length: 12 }, (_, i) => `auth.f${i}`) });
    const report = buildStatusReport(r, new Map(), T);
    expect(renderStatusText(report, { color: false })).toContain('fields: auth.f0, auth.f1, auth.f2, auth.f3, auth.f4, auth.f5, auth.f6, auth.f7 (+4 more)');
    expect(report.projects[0]!.resources.find((x) => x.name === 'auth')!.fields).toHaveLength(12);
  });

  it('JSON output parses back to the report', () => {
    const report = buildStatusReport(result(), new Map(), T);
    expect(JSON.parse(renderStatusJson(report))).toEqual(JSON.parse(JSON.stringify(report)));
  });
});
