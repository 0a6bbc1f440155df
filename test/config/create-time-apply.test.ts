// The apply steps planned for a project that did not exist yet (no ref at plan time): once the
// engine has created it and recorded its ref, each one converges the section on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customHostnameConfig } from '../../src/reconcile/kinds/config/custom-hostname.js';
import { postgresVersionConfig } from '../../src/reconcile/kinds/config/postgres-version.js';
import { readReplicasConfig } from '../../src/reconcile/kinds/config/read-replicas.js';
import { vanitySubdomainConfig } from '../../src/reconcile/kinds/config/vanity-subdomain.js';
import { ProjectRefUnknownError } from '../../src/reconcile/kinds/common.js';
import { applyAll, applyModuleAlone, createLiveProject, planWith, projectDocument, startHarness, writes, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('create-time apply steps', () => {
  it('fail with a typed error while the project has no ref', async () => {
    const document = projectDocument('never-created', { vanity_subdomain: { vanity_subdomain: 'never-created' } });
    const fresh = await planWith(h, vanitySubdomainConfig, document, undefined);
    // The module's own guard: a pass applies nothing of a project without a ref (it creates it first).
    await expect(applyModuleAlone(h, fresh)).rejects.toBeInstanceOf(ProjectRefUnknownError);
  });

  it('converge the custom hostname, vanity subdomain, read replicas and version once the project exists', async () => {
    const document = projectDocument('born', {
      custom_hostname: { custom_hostname: 'born.example.org' },
      vanity_subdomain: { vanity_subdomain: 'born-app' },
      read_replicas: [{ read_replica_region: 'ca-central-1' }],
      postgres_version: '17',
    });
    const modules = [customHostnameConfig, vanitySubdomainConfig, readReplicasConfig, postgresVersionConfig];
    const planned = [];
    for (const module of modules) {
      const fresh = await planWith(h, module, document, undefined);
      expect(fresh.requests).toEqual([]);
      expect(fresh.entries[0]!.action).toBe('create');
      planned.push(fresh);
    }

    const ref = await createLiveProject(h, 'born');
    for (const fresh of planned) fresh.ctx.projectRefs.set('born', ref);
    // In registry order: the version upgrade last (the project is unreadable while it upgrades).
    for (const fresh of planned.slice(0, 3)) expect(writes(await applyAll(h, fresh)).length).toBeGreaterThan(0);

    expect((await h.client.api.getHostnameConfig(ref)).status).toBe('2_initiated');
    expect((await planWith(h, vanitySubdomainConfig, document, ref)).entries[0]!.action).toBe('noop');
    expect((await planWith(h, readReplicasConfig, document, ref)).entries[0]!.action).toBe('noop');

    expect(writes(await applyAll(h, planned[3]!)).map((r) => r.path)).toEqual([`/v1/projects/${ref}/upgrade`]);
    const upgrade = await planWith(h, postgresVersionConfig, document, ref);
    expect(upgrade.entries[0]!).toMatchObject({ action: 'noop', pending: true });
  });
});
