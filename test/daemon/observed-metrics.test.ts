// The observed-only facts (`--observe`) as metrics: values from an ObservedProjectState, what a
// failed read does to them, and series that leave with their project.
import { describe, expect, it } from 'vitest';
import { createMetrics, type DaemonMetrics } from '../../src/daemon/metrics.js';
import { CANARY_API_KEY, CANARY_KEY_HASH, observedState } from './fixtures.js';

type Series = Record<string, number>;

/** `name{labels}` -> value for every reconciler_observed_* sample. */
async function observedSeries(metrics: DaemonMetrics): Promise<Series> {
  const out: Series = {};
  for (const line of (await metrics.render()).split('\n')) {
    if (!line.startsWith('reconciler_observed_')) continue;
    const at = line.lastIndexOf(' ');
    out[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return out;
}

function fresh(): DaemonMetrics {
  return createMetrics(undefined, { processMetrics: false });
}

const SHOP = { name: 'shop', ref: 'abcdefghijklmnopqrst', status: 'ACTIVE_HEALTHY' };

describe('observed-only facts as metrics', () => {
  it('exports every fact of a full observation with its value', async () => {
    const metrics = fresh();
    metrics.setProjectObservations([{ ...SHOP, observed: observedState() }]);
    expect(await observedSeries(metrics)).toEqual({
      'reconciler_observed_network_bans{project="shop"}': 3,
      'reconciler_observed_api_keys{project="shop",type="legacy"}': 2,
      'reconciler_observed_api_keys{project="shop",type="publishable"}': 1,
      'reconciler_observed_api_keys{project="shop",type="secret"}': 1,
      'reconciler_observed_backup_last_timestamp_seconds{project="shop"}': Date.UTC(2025, 11, 31) / 1000,
      'reconciler_observed_pitr_enabled{project="shop"}': 1,
      'reconciler_observed_pitr_earliest_timestamp_seconds{project="shop"}': Date.UTC(2025, 11, 25) / 1000,
      'reconciler_observed_pitr_latest_timestamp_seconds{project="shop"}': Date.UTC(2026, 0, 1, 0, 0, 1) / 1000,
      'reconciler_observed_readonly{project="shop"}': 1,
      'reconciler_observed_readonly_override{project="shop"}': 1,
      'reconciler_observed_upgrade_in_progress{project="shop"}': 1,
      'reconciler_observed_upgrade_failed{project="shop"}': 0,
    });
  });

  it('never exports a key, a key prefix or hash, a key name, a banned address or a ref', async () => {
    const metrics = fresh();
    const state = observedState();
    // Even if a key object carried more than the observation module copies, only counts leave.
    (state.apiKeys![3] as unknown as Record<string, string>).api_key = CANARY_API_KEY;
    (state.apiKeys![3] as unknown as Record<string, string>).hash = CANARY_KEY_HASH;
    metrics.setProjectObservations([{ ...SHOP, observed: state }]);
    const text = await metrics.render();
    for (const forbidden of [CANARY_API_KEY, CANARY_API_KEY.slice(0, 12), CANARY_KEY_HASH, 'ci-deployer', 'pub_0123abcd', '192.0.2.7', '198.51.100.23', 'abcdefghijklmnopqrst']) {
      expect(text).not.toContain(forbidden);
    }
  });

  it('a project without a completed backup, PITR or upgrade: flags at 0, no timestamps', async () => {
    const metrics = fresh();
    metrics.setProjectObservations([
      {
        ...SHOP,
        observed: observedState({
          networkBans: { bannedIpv4: [] },
          apiKeys: [{ name: 'anon', type: 'legacy' }],
          backups: { walgEnabled: true, pitrEnabled: false, count: 0 },
          readOnly: { enabled: false, overrideEnabled: false },
          upgrade: null,
        }),
      },
    ]);
    expect(await observedSeries(metrics)).toEqual({
      'reconciler_observed_network_bans{project="shop"}': 0,
      'reconciler_observed_api_keys{project="shop",type="legacy"}': 1,
      'reconciler_observed_api_keys{project="shop",type="publishable"}': 0,
      'reconciler_observed_api_keys{project="shop",type="secret"}': 0,
      'reconciler_observed_pitr_enabled{project="shop"}': 0,
      'reconciler_observed_readonly{project="shop"}': 0,
      'reconciler_observed_readonly_override{project="shop"}': 0,
      'reconciler_observed_upgrade_in_progress{project="shop"}': 0,
      'reconciler_observed_upgrade_failed{project="shop"}': 0,
    });
  });

  it('tells a failed upgrade (error step, or status 0) and a finished one from one in progress', async () => {
    const metrics = fresh();
    const upgrade = { targetVersion: 17, initiatedAt: '2026-01-01T00:00:00Z', latestStatusAt: '2026-01-01T01:00:00Z' };
    metrics.setProjectObservations([
      { name: 'a', observed: observedState({ upgrade: { ...upgrade, status: 0, progress: '4_attached_volume_to_original_instance', error: '5_data_upgrade_completion_failed' } }) },
      { name: 'b', observed: observedState({ upgrade: { ...upgrade, status: 0, progress: '2_launched_upgraded_instance' } }) },
      { name: 'c', observed: observedState({ upgrade: { ...upgrade, status: 2, progress: '10_completed_post_physical_backup' } }) },
      { name: 'd', observed: observedState({ upgrade: { ...upgrade, status: 1, progress: '9_completed_upgrade' } }) },
    ]);
    const series = await observedSeries(metrics);
    const flags = (p: string) => [series[`reconciler_observed_upgrade_in_progress{project="${p}"}`], series[`reconciler_observed_upgrade_failed{project="${p}"}`]];
    expect([flags('a'), flags('b'), flags('c'), flags('d')]).toEqual([[0, 1], [0, 1], [0, 0], [0, 0]]);
  });

  it('reads not asked for (--observe) export nothing', async () => {
    const metrics = fresh();
    metrics.setProjectObservations([{ ...SHOP, observed: { ref: SHOP.ref, observedAt: 0, networkBans: { bannedIpv4: ['192.0.2.1'] }, errors: [] } }]);
    expect(await observedSeries(metrics)).toEqual({ 'reconciler_observed_network_bans{project="shop"}': 1 });
  });

  it('keeps the last value when a read failed without an answer about the project, drops it when the service answered 4xx', async () => {
    const metrics = fresh();
    metrics.setProjectObservations([{ ...SHOP, observed: observedState() }]);
    const { networkBans: _bans, backups: _backups, readOnly: _readOnly, ...rest } = observedState();
    metrics.setProjectObservations([
      {
        ...SHOP,
        observed: {
          ...rest,
          errors: [
            { resource: 'backups', type: 'TransientError', message: 'GET /v1/projects/{ref}/database/backups answered 503', status: 503 },
            { resource: 'networkBans', type: 'NetworkError', message: 'connection reset' },
            { resource: 'readOnly', type: 'InvalidRequestError', message: 'project is paused', status: 400 },
          ],
        },
      },
    ]);
    const series = await observedSeries(metrics);
    expect(series['reconciler_observed_network_bans{project="shop"}']).toBe(3);
    expect(series['reconciler_observed_backup_last_timestamp_seconds{project="shop"}']).toBe(Date.UTC(2025, 11, 31) / 1000);
    expect(series['reconciler_observed_pitr_enabled{project="shop"}']).toBe(1);
    expect(series['reconciler_observed_readonly{project="shop"}']).toBeUndefined();
    expect(series['reconciler_observed_readonly_override{project="shop"}']).toBeUndefined();
    expect(series['reconciler_observed_upgrade_in_progress{project="shop"}']).toBe(1);
  });

  it('a project removed from the manifests drops its series; a pass without observations keeps them', async () => {
    const metrics = fresh();
    metrics.setProjectObservations([
      { ...SHOP, observed: observedState() },
      { name: 'blog', ref: 'tsrqponmlkjihgfedcba', observed: observedState({ ref: 'tsrqponmlkjihgfedcba' }) },
    ]);
    metrics.retainProjects(['blog']);
    const projects = new Set(Object.keys(await observedSeries(metrics)).map((key) => /project="([^"]*)"/.exec(key)![1]));
    expect([...projects]).toEqual(['blog']);
    // A plain observation (a write pass's, without observed-only reads) leaves the facts alone.
    metrics.setProjectObservations([{ name: 'blog', ref: 'tsrqponmlkjihgfedcba', status: 'ACTIVE_HEALTHY' }]);
    expect((await observedSeries(metrics))['reconciler_observed_network_bans{project="blog"}']).toBe(3);
  });
});
