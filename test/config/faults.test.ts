// Config sections under the emulator's faults: a lost answer to a replica setup never leads to a
// second replica; a failed upgrade is blocked with its error instead of being retried forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../src/api/errors.js';
import { postgresVersionConfig } from '../../src/reconcile/kinds/config/postgres-version.js';
import { readReplicasConfig } from '../../src/reconcile/kinds/config/read-replicas.js';
import { applies, applyAll, createLiveProject, DURATIONS, memoryState, planWith, projectDocument, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('config sections under faults', () => {
  it('a replica setup whose answer is lost is not sent again', async () => {
    const ref = await createLiveProject(h, 'lossy');
    const document = projectDocument('lossy', { read_replicas: [{ read_replica_region: 'eu-north-1' }] });
    const state = memoryState();
    h.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/read-replicas/setup', method: 'POST', lostAnswerRate: 1, maxFaults: 1 }] });
    try {
      const first = await planWith(h, readReplicasConfig, document, ref, { state });
      await expect(applyAll(h, first)).rejects.toBeInstanceOf(TransientError);
    } finally {
      h.emulator.setFaults({});
    }
    const next = await planWith(h, readReplicasConfig, document, ref, { state });
    expect(next.entries[0]!.action).toBe('noop');
    const replicas = (await h.client.api.getPoolerConfig(ref)).filter((p) => p.database_type === 'READ_REPLICA');
    expect(replicas).toHaveLength(1);
    // This project's setups only: the log is shared by every test (and repeat) of the file.
    expect(h.emulator.requests().filter((r) => r.path === `/v1/projects/${ref}/read-replicas/setup`)).toHaveLength(1);
  });

  it('a failed upgrade is blocked with its error', async () => {
    const ref = await createLiveProject(h, 'fragile');
    const document = projectDocument('fragile', { postgres_version: '17' });
    // Seeded: the draw that picks the failing step is the same on every run.
    h.emulator.setFaults({ seed: 20260101, lifecycleFailures: { upgrade: 1 } });
    try {
      const start = await planWith(h, postgresVersionConfig, document, ref);
      await applyAll(h, start);
    } finally {
      h.emulator.setFaults({});
    }
    await h.clock.advance(DURATIONS.upgradeStep * 12);
    const after = await planWith(h, postgresVersionConfig, document, ref);
    expect(after.entries[0]!.action).toBe('blocked');
    expect(after.entries[0]!.reason).toBe('the last upgrade to 17 failed: 5_data_upgrade_completion_failed');
    expect(applies(after.entries[0]!)).toBe(false);
    expect((await h.client.api.getProject(ref)).database.version.startsWith('15')).toBe(true);
  });
});
