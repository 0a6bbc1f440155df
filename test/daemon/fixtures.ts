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
