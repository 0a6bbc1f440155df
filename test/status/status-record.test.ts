import { describe, expect, it } from 'vitest';
import { buildFleetView } from '../../src/status/fleet-view.js';
import { emptyStatusRecord, foldFailure, foldManifests, foldPass, MAX_RECENT_ERRORS } from '../../src/status/status-record.js';
import { renderFleetViewText } from '../../src/status/fleet-view-text.js';
import { renderStatusPage } from '../../src/status/status-page.js';
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
  it('drops a project released from management (its manifest gone, deletion policy orphan): it is no longer in sync, it is no longer managed', () => {
    const first = foldPass(emptyStatusRecord(), clean(['shop', 'blog']), {}, AT);
    const released = clean(['shop'], {
      plan: {
        entries: [
          { id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', project: 'shop', name: 'auth', action: 'noop', changes: [] },
          { id: 'Project/blog', kind: 'Project', name: 'blog', action: 'noop', changes: [], released: true, reason: 'manifest removed; deletion policy `orphan`: the project is left in place and no longer managed' },
        ],
        summary: { create: 0, update: 0, delete: 0, noop: 2, blocked: 0 },
        hasChanges: false,
      },
      resources: [resource('shop', 'ProjectAuth', 'auth', 'in_sync'), { id: 'Project/blog', kind: 'Project', name: 'blog', state: 'in_sync', observedAt: AT }],
    });
    const next = foldPass(first, released, {}, AT + 60_000);
    expect(Object.keys(next.projects)).toEqual(['shop']);
    // Also when a pass limited to some projects keeps the others' records.
    expect(Object.keys(foldPass(first, released, { projects: ['shop'] }, AT + 60_000).projects)).toEqual(['shop']);
    expect(buildFleetView(next, { now: AT + 61_000, source: 'state-dir' }).condition).toEqual({ state: 'in_sync', message: 'all 1 project in sync' });
  });

  it('says the last pass failed when it failed before it saw the fleet, until a pass succeeds', () => {
    const unreachable = passResult({ result: 'failed', projects: [], resources: [], outcomes: [], plan: { entries: [], summary: { create: 0, update: 0, delete: 0, noop: 0, blocked: 0 }, hasChanges: false } });
    const failedFirst = foldFailure(emptyStatusRecord(), 'Project/*: TransientError: GET /v1/projects: cannot reach 127.0.0.1:1 (ECONNREFUSED)', AT);
    expect(buildFleetView(failedFirst, { now: AT + 1000, source: 'state-dir' }).condition).toEqual({
      state: 'failed',
      message: 'the last pass failed: Project/*: TransientError: GET /v1/projects: cannot reach 127.0.0.1:1 (ECONNREFUSED)',
    });
    const healthy = foldPass(emptyStatusRecord(), clean(['shop']), {}, AT);
    const failed = foldFailure(foldPass(healthy, unreachable, {}, AT + 60_000), 'the scheduled pass failed (see the daemon\'s log)', AT + 60_000);
    const view = buildFleetView(failed, { now: AT + 61_000, source: 'daemon' });
    expect(view.condition.state).toBe('failed');
    expect(view.projects.map((p) => [p.name, p.state])).toEqual([['shop', 'in_sync']]);
    const again = foldPass(failed, clean(['shop']), {}, AT + 120_000);
    expect(buildFleetView(again, { now: AT + 121_000, source: 'daemon' }).condition.state).toBe('in_sync');
  });

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

  it('lists declared projects never observed as pending, and held changes as held', () => {
    const record = foldPass(emptyStatusRecord(), clean(['shop']), {}, AT);
    record.projects.shop!.pending.push({ id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', name: 'auth', action: 'update', waitingFor: 'approval', reason: 'rollout tenants: wave rest waits for an approval', since: AT });
    const view = buildFleetView(record, { now: AT + 5_000, source: 'daemon', projects: ['shop', 'new-one'] });
    expect(view.projects.map((p) => [p.name, p.state])).toEqual([
      ['new-one', 'pending'],
      ['shop', 'in_sync'],
    ]);
    expect(view.projects[1]!.pending.map((c) => [c.state, c.waitingFor])).toEqual([['held', 'approval']]);
    expect(view.summary.heldChanges).toBe(1);
    expect(view.projects[1]!.ageSeconds).toBe(6);
  });

  it('clears an error once its resource is applied or read back in sync: no old error beside in_sync', () => {
    const failing = foldPass(emptyStatusRecord(), passResult(), {}, AT);
    expect(failing.projects.shop!.lastError?.resource).toBe('Secret/shop/STRIPE_KEY');
    const fixed = foldPass(failing, clean(['shop']), { projects: ['shop'] }, AT + 60_000);
    const view = buildFleetView(fixed, { now: AT + 61_000, source: 'daemon' });
    const shop = view.projects.find((p) => p.name === 'shop')!;
    expect(shop.state).toBe('in_sync');
    expect(shop.lastError).toBeUndefined();
    // The history keeps it, with its time.
    expect(view.recentErrors[0]!.resource).toBe('Secret/shop/STRIPE_KEY');
    // A pass limited to another project keeps it; one that finds it failed again keeps it too.
    expect(foldPass(failing, clean(['blog']), { projects: ['blog'] }, AT + 1).projects.shop!.lastError?.resource).toBe('Secret/shop/STRIPE_KEY');
    const still = passResult({ outcomes: [], resources: [resource('shop', 'Secret', 'STRIPE_KEY', 'failed')] });
    expect(foldPass(failing, still, { projects: ['shop'] }, AT + 2).projects.shop!.lastError?.resource).toBe('Secret/shop/STRIPE_KEY');
  });

  it('holds back changes as held, with the reason, each once; out-of-band drift stays drifted', () => {
    const entries = [
      { id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', project: 'shop', name: 'auth', action: 'update', changes: [{ path: 'auth.site_url' }], held: { reason: 'approval', message: 'rollout tenants: needs approval' } },
      { id: 'ProjectPostgres/shop/postgres', kind: 'ProjectPostgres', project: 'shop', name: 'postgres', action: 'update', changes: [{ path: 'max_connections' }], held: { reason: 'window', message: 'waits for window nightly' } },
      { id: 'ProjectRestapi/blog/restapi', kind: 'ProjectRestapi', project: 'blog', name: 'restapi', action: 'update', changes: [{ path: 'max_rows' }], held: { reason: 'wave', message: 'wave rest waits for wave canary' } },
      { id: 'ProjectAuth/blog/auth', kind: 'ProjectAuth', project: 'blog', name: 'auth', action: 'update', changes: [{ path: 'auth.jwt_exp' }] },
    ] as PassResult['plan']['entries'];
    const result = passResult({
      plan: { entries, summary: { create: 0, update: 4, delete: 0, noop: 0, blocked: 0 }, hasChanges: true },
      outcomes: [{ entryId: 'ProjectAuth/blog/auth', kind: 'ProjectAuth', action: 'update', result: 'interrupted' }],
      resources: [],
      projects: [{ name: 'shop', observedAt: AT }, { name: 'blog', observedAt: AT }],
      result: 'success',
    });
    const view = buildFleetView(foldPass(emptyStatusRecord(), result, {}, AT), { now: AT, source: 'daemon' });
    const states = Object.fromEntries(view.projects.flatMap((p) => p.resources.map((r) => [r.id, r.state])));
    expect(states).toEqual({ 'ProjectAuth/shop/auth': 'held', 'ProjectPostgres/shop/postgres': 'held', 'ProjectRestapi/blog/restapi': 'held', 'ProjectAuth/blog/auth': 'drifted' });
    const changes = view.projects.flatMap((p) => p.pending.map((c) => [c.id, c.state, c.waitingFor]));
    expect(changes).toEqual([
      ['ProjectRestapi/blog/restapi', 'held', 'wave'],
      ['ProjectAuth/blog/auth', 'pending', 'not-applied'],
      ['ProjectAuth/shop/auth', 'held', 'approval'],
      ['ProjectPostgres/shop/postgres', 'held', 'window'],
    ]);
    expect(view.summary).toMatchObject({ pendingChanges: 4, heldChanges: 3, projectStates: { held: 1, drifted: 1 } });
    expect(view.condition).toEqual({ state: 'drifted', message: '1 project drifted; 3 changes held (waiting for wave, approval, window)' });
    // Each change once on the page and in the text.
    const page = renderStatusPage(view, { refreshSeconds: 0 });
    expect(page.match(/waits for window nightly/g)).toHaveLength(1);
    expect(page.match(/rollout tenants: needs approval/g)).toHaveLength(1);
    const text = renderFleetViewText(view, { color: false, from: 'x' });
    expect(text.match(/rollout tenants: needs approval/g)).toHaveLength(1);
  });

  it('keeps the rollout\'s own wave states: soaking and halted never read applying', () => {
    const rollout = {
      name: 'tenants', revision: REVISION, waiting: [], revisions: {}, events: [],
      waves: [
        { name: 'canary', state: 'halted' as const, projects: 1, members: ['shop'], reason: 'shop: failed' },
        { name: 'rest', state: 'waiting' as const, projects: 1, members: ['blog'] },
      ],
      halted: { wave: 'canary', reason: 'shop: failed', at: AT },
    };
    const soaking = { ...rollout, halted: undefined, waves: [{ name: 'canary', state: 'soaking' as const, projects: 1, members: ['shop'], soakUntil: AT + 600_000 }, rollout.waves[1]!] };
    const halted = buildFleetView(foldPass(emptyStatusRecord(), clean(['shop', 'blog'], { rollout }), {}, AT), { now: AT, source: 'daemon' });
    expect(halted.rollouts![0]!.waves.map((w) => [w.name, w.state, w.detail])).toEqual([['canary', 'halted', 'shop: failed'], ['rest', 'waiting', 'the rollout is halted at wave canary']]);
    expect(halted.condition.message).toContain('rollout tenants halted at wave canary');
    const soak = buildFleetView(foldPass(emptyStatusRecord(), clean(['shop', 'blog'], { rollout: soaking }), {}, AT), { now: AT, source: 'daemon' });
    expect(soak.rollouts![0]!.waves.map((w) => w.state)).toEqual(['soaking', 'waiting']);
    expect(soak.condition.message).toBe('rollout tenants: wave canary soaking');
  });

  it('a broken revision names each error by file and line, keeps the last good revision, and clears when a revision loads', () => {
    const good = foldPass(emptyStatusRecord(), clean(['shop']), {}, AT);
    const broken = foldManifests(good, 'bbbb000011112222333344445555666677778888', [
      { file: 'projects/shop.yaml', line: 7, column: 3, path: '/spec/auth/site_ur', message: `unknown field; value "${CANARY}"`, hint: 'did you mean `site_url`?' },
    ], AT + 1_000);
    const view = buildFleetView(broken, { now: AT + 2_000, source: 'daemon', revision: REVISION });
    expect(view.condition.state).toBe('broken-revision');
    expect(view.condition.message).toBe('broken revision bbbb00001111: projects/shop.yaml:7 /spec/auth/site_ur: unknown field; value "…" (did you mean `site_url`?); revision a1b2c3d4e5f6 stays applied');
    expect(view.brokenRevision).toMatchObject({ revision: 'bbbb000011112222333344445555666677778888', lastGoodRevision: REVISION, errorCount: 1, errors: [{ file: 'projects/shop.yaml', line: 7, column: 3, field: '/spec/auth/site_ur' }] });
    expect(JSON.stringify(view)).not.toContain(CANARY);
    expect(view.projects[0]!.revision).toBe(REVISION);
    expect(renderFleetViewText(view, { color: false, from: 'x' })).toContain('  projects/shop.yaml:7:3 /spec/auth/site_ur: unknown field');
    expect(renderStatusPage(view, { refreshSeconds: 0 })).toContain('<th scope="row">projects/shop.yaml</th><td>7:3</td>');
    // The daemon's drift passes from the last good revision keep it broken; a clean reading clears it.
    const drift = foldPass(broken, clean(['shop']), {}, AT + 3_000);
    expect(drift.broken?.revision).toBe('bbbb000011112222333344445555666677778888');
    expect(foldManifests(drift, 'cccc', [], AT + 4_000).broken).toBeUndefined();
    // A one-shot pass reads the newest checkout: it clears it too.
    expect(foldPass(broken, clean(['shop']), { newestCheckout: true }, AT + 5_000).broken).toBeUndefined();
  });
});
