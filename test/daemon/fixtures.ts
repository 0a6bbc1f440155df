import type { CronTrigger } from '../../src/daemon/cron-trigger.js';
import type { ObservedProjectState } from '../../src/reconcile/kinds/observed.js';
import type { PassResult, ResourceStatus } from '../../src/reconcile/types.js';

/** A PassResult with everything a metrics consumer reads, for the given resources. */
export function passResult(overrides: Partial<PassResult> = {}): PassResult {
  return {
    startedAt: Date.UTC(2026, 0, 1, 0, 0, 0),
    finishedAt: Date.UTC(2026, 0, 1, 0, 0, 3),
    dryRun: false,
    revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
    manifestErrors: [],
    plan: {
      entries: [
        { id: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', project: 'shop', name: 'auth', action: 'update', changes: [{ path: 'auth.smtp_pass', sensitive: true }] },
        { id: 'Secret/shop/STRIPE_KEY', kind: 'Secret', project: 'shop', name: 'STRIPE_KEY', action: 'create', changes: [{ path: 'value', sensitive: true }] },
      ],
      summary: { create: 1, update: 1, delete: 0, noop: 0, blocked: 0 },
      hasChanges: true,
    },
    outcomes: [
      { entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'success', durationMs: 12 },
      { entryId: 'Secret/shop/STRIPE_KEY', kind: 'Secret', action: 'create', result: 'failed', error: { type: 'TransientError', message: 'POST /v1/projects/{ref}/secrets answered 503' } },
    ],
    resources: [
      resource('shop', 'ProjectAuth', 'auth', 'in_sync'),
      resource('shop', 'Secret', 'STRIPE_KEY', 'drifted'),
      resource('blog', 'Function', 'hello', 'drifted'),
      resource('blog', 'Function', 'bye', 'in_sync'),
    ],
    projects: [
      { name: 'shop', ref: 'abcdefghijklmnopqrst', status: 'ACTIVE_HEALTHY', health: { db: true, auth: true, rest: false }, observedAt: Date.UTC(2026, 0, 1, 0, 0, 2) },
      { name: 'blog', ref: 'tsrqponmlkjihgfedcba', status: 'INACTIVE', health: {}, observedAt: Date.UTC(2026, 0, 1, 0, 0, 2) },
    ],
    result: 'failed',
    requests: 9,
    ...overrides,
  };
}

export function resource(project: string, kind: ResourceStatus['kind'], name: string, state: ResourceStatus['state']): ResourceStatus {
  return { id: `${kind}/${project}/${name}`, kind, project, name, state, observedAt: Date.UTC(2026, 0, 1, 0, 0, 2) };
}

/** Stand-ins for a key and its hash: they must never reach /metrics. */
export const CANARY_API_KEY = 'sec_CANARY_b5e1f0c9a7d3e2f4a6b8';
export const CANARY_KEY_HASH = 'f00dfeedcafe0123456789abcdef0123456789abcdef0123456789abcdef0123';

/** Every observed-only fact of one project, as `observeProject` returns it. */
export function observedState(overrides: Partial<ObservedProjectState> = {}): ObservedProjectState {
  return {
    ref: 'abcdefghijklmnopqrst',
    observedAt: Date.UTC(2026, 0, 1, 0, 0, 2),
    networkBans: { bannedIpv4: ['192.0.2.7', '198.51.100.23', '203.0.113.9'] },
    apiKeys: [
      { name: 'anon', type: 'legacy', id: 'anon' },
      { name: 'service_role', type: 'legacy', id: 'service_role' },
      { name: 'default', type: 'publishable', prefix: 'pub_0123abcd', id: '3f1e7c1a-0000-4000-8000-000000000001' },
      { name: 'ci-deployer', type: 'secret', prefix: CANARY_API_KEY.slice(0, 12), id: '3f1e7c1a-0000-4000-8000-000000000002' },
    ],
    backups: {
      walgEnabled: true,
      pitrEnabled: true,
      count: 3,
      latestBackupAt: '2025-12-31T00:00:00.000Z',
      pitrWindow: { earliest: Date.UTC(2025, 11, 25) / 1000, latest: Date.UTC(2026, 0, 1, 0, 0, 1) / 1000 },
    },
    readOnly: { enabled: true, overrideEnabled: true, overrideActiveUntil: '2026-01-01T00:15:00.000Z' },
    health: [
      { name: 'auth', healthy: true, status: 'ACTIVE_HEALTHY' },
      { name: 'db', healthy: false, status: 'UNHEALTHY' },
    ],
    upgrade: { targetVersion: 17, progress: '5_initiated_data_upgrade', status: 1, initiatedAt: '2026-01-01T00:00:00.000Z', latestStatusAt: '2026-01-01T00:00:01.000Z' },
    errors: [],
    ...overrides,
  };
}

/** A cron trigger the test fires by hand. */
export function manualTrigger(intervalMs: number): CronTrigger & { tick(): void } {
  let onTick: (() => void) | undefined;
  return {
    start: (fn) => {
      onTick = fn;
    },
    stop: () => {
      onTick = undefined;
    },
    intervalMs: () => intervalMs,
    tick: () => onTick?.(),
  };
}
