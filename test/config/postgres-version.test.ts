// Postgres major upgrades followed on the emulator's manual clock: eligibility, start,
// pending through the progress values, in sync once the project list shows the new version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresVersionConfig } from '../../src/reconcile/kinds/config/postgres-version.js';
import { applies, applyAll, createLiveProject, DURATIONS, planModuleAlone, planWith, projectDocument, startHarness, writes, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('postgres version', () => {
  it('starts an eligible upgrade, reports its progress as pending, and is in sync with no request afterwards', async () => {
    const document = projectDocument('upgraded', { postgres_version: '17' });
    const fresh = await planWith(h, postgresVersionConfig, document, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries[0]!).toMatchObject({ action: 'create', changes: [{ path: 'postgres_version', after: '17' }] });

    const ref = await createLiveProject(h, 'upgraded');
    const live = await h.client.api.getProject(ref);
    expect(live.database.version.startsWith('15')).toBe(true);

    const start = await planWith(h, postgresVersionConfig, document, ref);
    expect(start.entries[0]!).toMatchObject({ action: 'update', changes: [{ path: 'postgres_version', before: '15', after: '17' }] });
    expect(start.entries[0]!.reason).toMatch(/upgrade .* to 17/);
    expect(start.requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [`GET /v1/projects/${ref}/upgrade/eligibility`, `GET /v1/projects/${ref}/upgrade/status`].sort(),
    );
    expect(writes(await applyAll(h, start)).map((r) => `${r.method} ${r.path}`)).toEqual([`POST /v1/projects/${ref}/upgrade`]);

    const seen: string[] = [];
    for (let step = 0; step < 40; step++) {
      // What the module itself reports while the project upgrades; a pass does not ask it then
      // (the project is not running) and plans a pending entry with the project's status instead.
      const plan = await planModuleAlone(h, postgresVersionConfig, document, ref);
      const entry = plan.entries[0]!;
      if (!entry.pending) {
        expect(entry.action).toBe('noop');
        break;
      }
      expect(entry.action).toBe('noop');
      expect(applies(plan.entries[0]!)).toBe(false);
      expect(writes(plan.requests)).toEqual([]);
      seen.push(entry.reason!);
      await h.clock.advance(DURATIONS.upgradeStep);
    }
    expect(seen.length).toBeGreaterThan(2);
    expect(new Set(seen).size).toBeGreaterThan(2);
    expect(seen[0]).toContain('in progress');

    const after = await h.client.api.getProject(ref);
    expect(after.database.version.startsWith('17')).toBe(true);
    const steady = await planWith(h, postgresVersionConfig, document, ref);
    expect(steady.entries[0]!.action).toBe('noop');
    expect(steady.requests.filter((r) => r.path.includes('/upgrade'))).toEqual([]);
  });

  it('blocks a downgrade with the reason, without a request', async () => {
    const ref = await createLiveProject(h, 'downgrade');
    const plan = await planWith(h, postgresVersionConfig, projectDocument('downgrade', { postgres_version: '14' }), ref);
    expect(plan.entries[0]!.action).toBe('blocked');
    expect(plan.entries[0]!.reason).toContain('downgraded');
    expect(applies(plan.entries[0]!)).toBe(false);
    expect(plan.requests.filter((r) => r.path.includes('/upgrade'))).toEqual([]);
  });

  it('blocks a version that is not offered, with the offered ones in the reason', async () => {
    const ref = await createLiveProject(h, 'offered');
    const notOffered = await planWith(h, postgresVersionConfig, projectDocument('offered', { postgres_version: '16' }), ref);
    expect(notOffered.entries[0]!.action).toBe('blocked');
    expect(notOffered.entries[0]!.reason).toContain('not offered');
    expect(notOffered.entries[0]!.reason).toContain('17');
    expect(applies(notOffered.entries[0]!)).toBe(false);
  });
});

describe('postgres version on a project that is not eligible', () => {
  const REF = 'latestlatestlatestla';
  let seeded: Harness;
  beforeAll(async () => {
    seeded = await startHarness({
      seed: {
        organizations: [{ slug: 'seeded-org', name: 'Seeded' }],
        projects: [{ ref: REF, name: 'latest', organization: 'seeded-org', region: 'eu-west-1', status: 'ACTIVE_HEALTHY', postgres_engine: '17' }],
      },
    });
  });
  afterAll(async () => {
    await seeded?.close();
  });

  it('is blocked with the reason and writes nothing', async () => {
    const plan = await planWith(seeded, postgresVersionConfig, projectDocument('latest', { postgres_version: '18' }), REF);
    expect(plan.entries[0]!.action).toBe('blocked');
    expect(plan.entries[0]!.reason).toContain('not eligible');
    expect(applies(plan.entries[0]!)).toBe(false);
    expect(writes(plan.requests)).toEqual([]);
  });
});
