// Every plain configuration section through the same life, against the emulator over HTTP:
// planned create on a fresh project (no request), apply, a no-change plan that costs exactly
// one GET of the section, an out-of-band change seen as exactly that drift, repaired, and an
// out-of-band change of a field the manifest does not mention: no diff.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagementApi } from '../../src/api/endpoints.js';
import type { ProjectSpec } from '../../src/manifests/types.js';
import type { FieldChange, KindModule } from '../../src/reconcile/types.js';
import { authConfig } from '../../src/reconcile/kinds/config/auth.js';
import { postgresConfig } from '../../src/reconcile/kinds/config/postgres.js';
import { poolerConfig } from '../../src/reconcile/kinds/config/pooler.js';
import { restapiConfig } from '../../src/reconcile/kinds/config/restapi.js';
import { storageConfig } from '../../src/reconcile/kinds/config/storage.js';
import { networkRestrictionsConfig } from '../../src/reconcile/kinds/config/network-restrictions.js';
import { sslEnforcementConfig } from '../../src/reconcile/kinds/config/ssl-enforcement.js';
import { applyAll, createLiveProject, gets, planWith, projectDocument, startHarness, writes, type Harness } from './harness.js';

interface SectionCase {
  module: KindModule;
  key: keyof ProjectSpec;
  spec: unknown;
  /** Path of the section's GET, after `/v1/projects/{ref}`. */
  getPath: string;
  /** Field paths the create plan shows. */
  createPaths: string[];
  outOfBand: (api: ManagementApi, ref: string) => Promise<unknown>;
  drift: FieldChange;
  unmanaged?: (api: ManagementApi, ref: string) => Promise<unknown>;
}

const CASES: SectionCase[] = [
  {
    module: authConfig,
    key: 'auth',
    spec: { site_url: 'https://app.example.com', disable_signup: true, jwt_exp: 1800 },
    getPath: '/config/auth',
    createPaths: ['auth.disable_signup', 'auth.jwt_exp', 'auth.site_url'],
    outOfBand: (api, ref) => api.updateAuthServiceConfig(ref, { site_url: 'https://elsewhere.example.net' }),
    drift: { path: 'auth.site_url', before: 'https://elsewhere.example.net', after: 'https://app.example.com' },
    unmanaged: (api, ref) => api.updateAuthServiceConfig(ref, { smtp_sender_name: 'Someone Else' }),
  },
  {
    module: postgresConfig,
    key: 'postgres',
    spec: { max_connections: 120, statement_timeout: '30s' },
    getPath: '/config/database/postgres',
    createPaths: ['postgres.max_connections', 'postgres.statement_timeout'],
    outOfBand: (api, ref) => api.updatePostgresConfig(ref, { max_connections: 99, statement_timeout: '30s' }),
    drift: { path: 'postgres.max_connections', before: 99, after: 120 },
    unmanaged: (api, ref) => api.updatePostgresConfig(ref, { max_connections: 120, statement_timeout: '30s', work_mem: '8MB' }),
  },
  {
    module: poolerConfig,
    key: 'pooler',
    spec: { default_pool_size: 25 },
    getPath: '/config/database/pooler',
    createPaths: ['pooler.default_pool_size'],
    outOfBand: (api, ref) => api.updatePoolerConfig(ref, { default_pool_size: 31 }),
    drift: { path: 'pooler.default_pool_size', before: 31, after: 25 },
    unmanaged: (api, ref) => api.updatePoolerConfig(ref, { pool_mode: 'session' }),
  },
  {
    module: restapiConfig,
    key: 'restapi',
    spec: { max_rows: 500, db_schema: 'public,api' },
    getPath: '/restapi',
    createPaths: ['restapi.db_schema', 'restapi.max_rows'],
    outOfBand: (api, ref) => api.updateRestapiServiceConfig(ref, { max_rows: 10 }),
    drift: { path: 'restapi.max_rows', before: 10, after: 500 },
    unmanaged: (api, ref) => api.updateRestapiServiceConfig(ref, { db_extra_search_path: 'public' }),
  },
  {
    module: storageConfig,
    key: 'storage',
    spec: { fileSizeLimit: 1_048_576, features: { imageTransformation: { enabled: true } } },
    getPath: '/config/storage',
    createPaths: ['storage.features.imageTransformation.enabled', 'storage.fileSizeLimit'],
    outOfBand: (api, ref) => api.updateStorageConfig(ref, { features: { imageTransformation: { enabled: false } } }),
    drift: { path: 'storage.features.imageTransformation.enabled', before: false, after: true },
    unmanaged: async (api, ref) => {
      const live = await api.getStorageConfig(ref);
      return api.updateStorageConfig(ref, { features: { s3Protocol: { enabled: !live.features.s3Protocol.enabled } } });
    },
  },
  {
    module: networkRestrictionsConfig,
    key: 'network_restrictions',
    // A bare address is a /32: sent with its prefix (the service requires one), never drift.
    spec: { dbAllowedCidrs: ['192.168.0.0/16', '10.0.0.0/8', '203.0.113.7'] },
    getPath: '/network-restrictions',
    createPaths: ['network_restrictions.dbAllowedCidrs'],
    outOfBand: async (api, ref) => {
      const live = await api.getNetworkRestrictions(ref);
      return api.updateNetworkRestrictions(ref, { dbAllowedCidrs: ['10.0.0.0/8'], dbAllowedCidrsV6: live.config.dbAllowedCidrsV6 ?? [] });
    },
    drift: { path: 'network_restrictions.dbAllowedCidrs', before: ['10.0.0.0/8'], after: ['10.0.0.0/8', '192.168.0.0/16', '203.0.113.7/32'] },
    // The other list changes, and the managed one comes back in another order: neither is drift.
    unmanaged: (api, ref) => api.updateNetworkRestrictions(ref, { dbAllowedCidrs: ['203.0.113.7/32', '10.0.0.0/8', '192.168.0.0/16'], dbAllowedCidrsV6: ['2001:db8::/32'] }),
  },
  {
    module: sslEnforcementConfig,
    key: 'ssl_enforcement',
    spec: { database: true },
    getPath: '/ssl-enforcement',
    createPaths: ['ssl_enforcement.database'],
    outOfBand: (api, ref) => api.updateSslEnforcementConfig(ref, { requestedConfig: { database: false } }),
    drift: { path: 'ssl_enforcement.database', before: false, after: true },
  },
];

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe.each(CASES)('config section $key', (c) => {
  it('plans a create from the manifest alone, applies it, then costs one GET and shows no change; sees exactly an out-of-band change; ignores unmentioned fields', async () => {
    const name = `p-${String(c.key).replace(/_/g, '-')}`;
    const document = projectDocument(name, { [c.key]: c.spec } as Partial<ProjectSpec>);

    // 1. Fresh project (not created yet): a create entry, not one request.
    const fresh = await planWith(h, c.module, document, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries).toHaveLength(1);
    const created = fresh.entries[0]!;
    expect(created.action).toBe('create');
    expect(created.id).toBe(`${c.module.kind}/${name}/${String(c.key)}`);
    expect(created.dependsOn).toEqual([`Project/${name}`]);
    expect(created.changes.map((x) => x.path).sort()).toEqual(c.createPaths);

    // 2. The project comes up; the module applies its create entry (the ref comes from ctx).
    const ref = await createLiveProject(h, name);
    fresh.ctx.projectRefs.set(name, ref);
    const applied = await applyAll(h, fresh);
    expect(writes(applied).length).toBeGreaterThan(0);

    // 3. No change: exactly one GET, of this section, and nothing else.
    const steady = await planWith(h, c.module, document, ref);
    expect(steady.entries.map((x) => x.action)).toEqual(['noop']);
    expect(steady.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/projects/${ref}${c.getPath}`]);

    // 4. Out of band through the API: exactly that drift.
    await c.outOfBand(h.client.api, ref);
    const drifted = await planWith(h, c.module, document, ref);
    expect(drifted.entries).toHaveLength(1);
    expect(drifted.entries[0]!.action).toBe('update');
    expect(drifted.entries[0]!.changes).toEqual([c.drift]);
    expect(gets(drifted.requests)).toHaveLength(1);
    expect(writes(drifted.requests)).toEqual([]);

    // 5. Apply repairs it.
    const repair = await applyAll(h, drifted);
    expect(writes(repair)).toHaveLength(1);
    const repaired = await planWith(h, c.module, document, ref);
    expect(repaired.entries.map((x) => x.action)).toEqual(['noop']);

    // 6. A field the manifest does not mention, changed out of band: not managed, no diff.
    if (c.unmanaged) {
      await c.unmanaged(h.client.api, ref);
      const after = await planWith(h, c.module, document, ref);
      expect(after.entries.map((x) => x.action)).toEqual(['noop']);
      expect(after.entries[0]!.changes).toEqual([]);
    }
  });
});
