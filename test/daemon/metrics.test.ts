import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { METRIC_DEFINITIONS, createMetrics } from '../../src/daemon/metrics.js';
import { CANARY_API_KEY, observedState, passResult, resource } from './fixtures.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the exposition text (enough of it for these assertions). */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparsed line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { types, samples };
}

function exercise(metrics: ReturnType<typeof createMetrics>): void {
  metrics.requestFinished({ method: 'GET', route: '/v1/projects/{ref}/secrets', code: '200', durationSeconds: 0.04 });
  metrics.requestFinished({ method: 'POST', route: '/v1/projects/{ref}/secrets', code: '503', durationSeconds: 0.2 });
  metrics.rateLimited();
  metrics.budget(37, 50);
  metrics.queueDepth('drift', 4);
  metrics.setManifestErrors(0);
  metrics.setSourceRevision('a1b2c3d4e5f60718293a4b5c6d7e8f9012345678');
  // A re-check with `--observe all` (before the pass: the pass's own observations replace status and health).
  metrics.setProjectObservations([{ name: 'shop', ref: 'abcdefghijklmnopqrst', status: 'ACTIVE_HEALTHY', observed: observedState() }]);
  metrics.recordPass(
    withMigration(passResult({
      rollout: {
        name: 'tenants',
        revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
        waves: [{ name: 'canary', state: 'soaking', projects: 1, soakUntil: Date.UTC(2026, 0, 1, 0, 10, 0) }, { name: 'rest', state: 'waiting', projects: 1 }],
        waiting: [{ id: 'ProjectPostgres/shop/postgres', reason: 'window', project: 'shop', since: Date.UTC(2026, 0, 1), message: 'postgres-restart: waits for maintenance window nightly' }],
        revisions: { shop: { revision: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', appliedAt: Date.UTC(2026, 0, 1) } },
        events: [],
      },
    })),
    { trigger: 'resync' },
  );
}

/** The pass also applied a migration of shop (the migrations metrics have samples). */
function withMigration(result: ReturnType<typeof passResult>): ReturnType<typeof passResult> {
  const entry = { id: 'Migration/shop/schema/20260101000000_items', kind: 'Migration' as const, project: 'shop', name: 'schema/20260101000000_items', action: 'create' as const, changes: [] };
  return {
    ...result,
    plan: { ...result.plan, entries: [...result.plan.entries, entry] },
    outcomes: [...result.outcomes, { entryId: entry.id, kind: entry.kind, action: entry.action, result: 'success' }],
  };
}

describe('createMetrics', () => {
  it('exports every INTERFACE metric with exactly its type and label names after a pass', async () => {
    const metrics = createMetrics(undefined, { clock: new ManualClock(Date.UTC(2026, 0, 1, 0, 1, 0)), build: { version: '1.2.3', revision: 'abc123' } });
    exercise(metrics);
    const { types, samples } = parseExposition(await metrics.render());
    for (const [name, definition] of Object.entries(METRIC_DEFINITIONS)) {
      expect(types.get(name), name).toBe(definition.type);
      const own = samples.filter((s) =>
        definition.type === 'histogram' ? s.name === `${name}_count` : s.name === name,
      );
      expect(own.length, `${name} has samples`).toBeGreaterThan(0);
      for (const sample of own) {
        const expected = [...definition.labels].sort();
        expect(Object.keys(sample.labels).sort(), name).toEqual(expected);
      }
    }
  });

  it('lists exactly the INTERFACE names under the reconciler_ prefix', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false, build: { version: '1.2.3', revision: 'abc123' } });
    exercise(metrics);
    const { types } = parseExposition(await metrics.render());
    expect([...types.keys()].filter((n) => n.startsWith('reconciler_')).sort()).toEqual(Object.keys(METRIC_DEFINITIONS).sort());
  });

  it('exports the default process metrics', async () => {
    const metrics = createMetrics();
    const text = await metrics.render();
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('counts drift per project and kind and marks each resource in sync or not', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(passResult());
    const { samples } = parseExposition(await metrics.render());
    const drift = samples.filter((s) => s.name === 'reconciler_drift_resources');
    expect(drift).toEqual(
      expect.arrayContaining([
        { name: 'reconciler_drift_resources', labels: { project: 'shop', kind: 'Secret' }, value: 1 },
        // Found drifted by this pass and repaired by it: still drift the daemon found, until the next observation.
        { name: 'reconciler_drift_resources', labels: { project: 'shop', kind: 'ProjectAuth' }, value: 1 },
        { name: 'reconciler_drift_resources', labels: { project: 'blog', kind: 'Function' }, value: 1 },
      ]),
    );
    const inSync = samples.filter((s) => s.name === 'reconciler_resource_in_sync');
    expect(inSync.find((s) => s.labels.name === 'bye')?.value).toBe(1);
    expect(inSync.find((s) => s.labels.name === 'hello')?.value).toBe(0);
    const apply = samples.filter((s) => s.name === 'reconciler_apply_total');
    expect(apply).toEqual(
      expect.arrayContaining([
        { name: 'reconciler_apply_total', labels: { kind: 'ProjectAuth', action: 'update', result: 'success' }, value: 1 },
        { name: 'reconciler_apply_total', labels: { kind: 'Secret', action: 'create', result: 'failed' }, value: 1 },
      ]),
    );
    expect(samples.find((s) => s.name === 'reconciler_reconcile_total' && s.labels.result === 'failed')?.value).toBe(1);
    expect(samples.find((s) => s.name === 'reconciler_reconcile_total' && s.labels.result === 'success')?.value).toBe(0);
    expect(samples.find((s) => s.name === 'reconciler_project_status' && s.labels.project === 'blog')?.labels.status).toBe('INACTIVE');
    expect(samples.find((s) => s.name === 'reconciler_project_health' && s.labels.service === 'rest')?.value).toBe(0);
  });

  it('counts only writes in reconciler_apply_total: never a readiness wait or a blocked entry', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(
      passResult({
        outcomes: [
          { entryId: 'Project/shop', kind: 'Project', action: 'create', result: 'success' },
          { entryId: 'Project/shop#ready', kind: 'Project', action: 'wait', result: 'success' },
          { entryId: 'Project/blog#ready', kind: 'Project', action: 'wait', result: 'failed', error: { type: 'ProjectNotReadyError', message: 'not ready' } },
          { entryId: 'ProjectCryptoext/shop/cryptoext', kind: 'ProjectCryptoext', action: 'blocked', result: 'skipped', error: { type: 'Blocked', message: 'needs confirmation' } },
          { entryId: 'ProjectAuth/blog/auth', kind: 'ProjectAuth', action: 'update', result: 'skipped', error: { type: 'Error', message: 'depends on Project/blog#ready' } },
        ],
      }),
    );
    const { samples } = parseExposition(await metrics.render());
    const apply = samples.filter((s) => s.name === 'reconciler_apply_total');
    expect(apply).toEqual([
      { name: 'reconciler_apply_total', labels: { kind: 'Project', action: 'create', result: 'success' }, value: 1 },
      { name: 'reconciler_apply_total', labels: { kind: 'ProjectAuth', action: 'update', result: 'skipped' }, value: 1 },
    ]);
  });

  it('a pass limited to some projects replaces only their figures', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(passResult());
    metrics.recordPass(
      passResult({ resources: [resource('blog', 'Function', 'hello', 'in_sync')], projects: [], outcomes: [], result: 'success' }),
      { projects: ['blog'] },
    );
    const { samples } = parseExposition(await metrics.render());
    const drift = Object.fromEntries(
      samples.filter((s) => s.name === 'reconciler_drift_resources').map((s) => [`${s.labels.project}/${s.labels.kind}`, s.value]),
    );
    expect(drift).toEqual({ 'shop/Secret': 1, 'shop/ProjectAuth': 1, 'blog/Function': 0 });
    // The dropped resource `bye` left with the pass that no longer reports it.
    expect(samples.some((s) => s.name === 'reconciler_resource_in_sync' && s.labels.name === 'bye')).toBe(false);
  });

  it('counts drift detected and repaired by kind and trigger, and forgets repaired drift at the next observation', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(passResult(), { trigger: 'resync' });
    metrics.recordPass(passResult({ outcomes: [] }), { trigger: 'manual' });
    let { samples } = parseExposition(await metrics.render());
    const count = (name: string, trigger: string) => samples.find((s) => s.name === name && s.labels.kind === 'ProjectAuth' && s.labels.trigger === trigger)?.value;
    expect(count('reconciler_drift_detected_total', 'resync')).toBe(1);
    expect(count('reconciler_drift_repaired_total', 'resync')).toBe(1);
    expect(count('reconciler_drift_detected_total', 'manual')).toBe(1);
    // Its update did not run in the manual pass (a dry run, a failure): detected, not repaired.
    expect(count('reconciler_drift_repaired_total', 'manual')).toBe(0);
    // A creation is no drift: the kind's series exist (so that a first drift is an increase), at 0.
    const secretSeries = samples.filter((s) => s.name === 'reconciler_drift_detected_total' && s.labels.kind === 'Secret');
    expect(secretSeries.map((s) => [s.labels.trigger, s.value]).sort()).toEqual([['manual', 0], ['resync', 0], ['revision', 0]]);
    metrics.recordPass(passResult({ plan: { entries: [], summary: { create: 0, update: 0, delete: 0, noop: 0, blocked: 0 }, hasChanges: false }, outcomes: [] }), { trigger: 'resync' });
    ({ samples } = parseExposition(await metrics.render()));
    expect(samples.find((s) => s.name === 'reconciler_drift_resources' && s.labels.kind === 'ProjectAuth')?.value).toBe(0);
  });

  it('exports each resource\'s condition, or only per-project series when asked to', async () => {
    const full = createMetrics(undefined, { processMetrics: false });
    full.recordPass(passResult(), { trigger: 'revision' });
    const { samples } = parseExposition(await full.render());
    const conditions = samples.filter((s) => s.name === 'reconciler_resource_condition');
    expect(conditions).toHaveLength(4);
    expect(conditions.find((s) => s.labels.name === 'hello')).toEqual({ name: 'reconciler_resource_condition', labels: { project: 'blog', kind: 'Function', name: 'hello', state: 'drifted' }, value: 1 });

    const lean = createMetrics(undefined, { processMetrics: false, perResource: false });
    lean.recordPass(passResult(), { trigger: 'revision' });
    const text = await lean.render();
    expect(text).not.toMatch(/^reconciler_resource_(in_sync|condition)\{/m);
    expect(text).toMatch(/^reconciler_drift_resources\{project="blog",kind="Function"\} 1$/m);
  });

  it('computes observation ages at scrape time from the clock', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 2));
    const metrics = createMetrics(undefined, { clock, processMetrics: false });
    metrics.recordPass(passResult());
    await clock.advance(90_000);
    const { samples } = parseExposition(await metrics.render());
    const ages = samples.filter((s) => s.name === 'reconciler_observation_age_seconds');
    expect(ages.map((s) => [s.labels.project, s.value]).sort()).toEqual([
      ['blog', 90],
      ['shop', 90],
    ]);
    metrics.retainProjects(['shop']);
    const after = parseExposition(await metrics.render()).samples.filter((s) => s.name === 'reconciler_observation_age_seconds');
    expect(after.map((s) => s.labels.project)).toEqual(['shop']);
  });

  it('keeps one source_info series, for the latest revision', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.setSourceRevision('1111111111111111111111111111111111111111');
    metrics.setSourceRevision('2222222222222222222222222222222222222222');
    const { samples } = parseExposition(await metrics.render());
    expect(samples.filter((s) => s.name === 'reconciler_source_info')).toEqual([
      { name: 'reconciler_source_info', labels: { revision: '2222222222222222222222222222222222222222' }, value: 1 },
    ]);
  });

  it('a successful pass sets the last success time; a failed one does not', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(passResult({ result: 'failed' }));
    let samples = parseExposition(await metrics.render()).samples;
    expect(samples.find((s) => s.name === 'reconciler_last_success_timestamp_seconds')?.value).toBe(0);
    metrics.recordPass(passResult({ result: 'success', finishedAt: Date.UTC(2026, 0, 1, 0, 5, 0) }));
    samples = parseExposition(await metrics.render()).samples;
    expect(samples.find((s) => s.name === 'reconciler_last_success_timestamp_seconds')?.value).toBe(Date.UTC(2026, 0, 1, 0, 5, 0) / 1000);
  });

  it('never carries a secret in /metrics: only templates, names and kinds reach labels', async () => {
    const canary = 'sk_live_CANARY_4f1d9a';
    const metrics = createMetrics(undefined, { processMetrics: false });
    exercise(metrics);
    // The error message and sensitive changes carry text; none of it may become a label.
    metrics.recordPass(
      passResult({
        outcomes: [{ entryId: 'Secret/shop/STRIPE_KEY', kind: 'Secret', action: 'update', result: 'failed', error: { type: 'InvalidError', message: canary } }],
        plan: { entries: [{ id: 'Secret/shop/STRIPE_KEY', kind: 'Secret', project: 'shop', name: 'STRIPE_KEY', action: 'update', changes: [{ path: 'value', before: canary, after: canary }] }], summary: { create: 0, update: 1, delete: 0, noop: 0, blocked: 0 }, hasChanges: true },
      }),
    );
    const text = await metrics.render();
    expect(text).not.toContain(canary);
    expect(text).not.toContain('abcdefghijklmnopqrst');
    expect(text).not.toContain(CANARY_API_KEY.slice(0, 12));
  });
});

describe('docs metrics table', () => {
  it('documents every metric with its type and labels, and nothing else', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('<!-- section:metrics -->'), readme.indexOf('<!-- /section:metrics -->'));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `reconciler_'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| /, '')));
    const documented = Object.fromEntries(
      rows.map(([name, type, labels]) => [
        name!.replace(/`/g, ''),
        { type: type!.split(' ')[0], labels: [...labels!.matchAll(/`(\w+)`(?: \()?/g)].map((m) => m[1]).filter((l) => !/^[A-Z]/.test(l!) && !['success', 'failed', 'invalid', 'interrupted', 'write', 'verify', 'drift'].includes(l!)) },
      ]),
    );
    const expected = Object.fromEntries(Object.entries(METRIC_DEFINITIONS).map(([name, d]) => [name, { type: d.type, labels: [...d.labels] }]));
    expect(documented).toEqual(expected);
  });
});
