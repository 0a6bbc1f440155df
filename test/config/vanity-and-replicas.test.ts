// Vanity subdomain (availability checked by the apply, then activation; a taken name fails the apply) and read replicas
// (a complete set sharing the pooler GET).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vanitySubdomainConfig } from '../../src/reconcile/kinds/config/vanity-subdomain.js';
import { readReplicasConfig } from '../../src/reconcile/kinds/config/read-replicas.js';
import { poolerConfig } from '../../src/reconcile/kinds/config/pooler.js';
import { ManagementApi } from '../../src/api/endpoints.js';
import type { PoolerConfigResponse } from '../../src/api/types.js';
import type { ApiResponse, RequestCaller } from '../../src/api/request.js';
import { REPLICA_INTENT_TTL_MS } from '../../src/reconcile/kinds/config/replica-intents.js';
import { applies, applyAll, contextFor, createLiveProject, gets, memoryState, planWith, projectDocument, scopeFor, startHarness, writes, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('vanity subdomain', () => {
  it('plans with GETs only (the same plan for a dry run and an apply), activates after an availability check, and fails the apply of a taken name', async () => {
    const document = projectDocument('portal', { vanity_subdomain: { vanity_subdomain: 'acme-portal' } });
    const fresh = await planWith(h, vanitySubdomainConfig, document, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries[0]!).toMatchObject({ action: 'create', changes: [{ path: 'vanity_subdomain.vanity_subdomain', after: 'acme-portal' }] });

    const ref = await createLiveProject(h, 'portal');
    const real = await planWith(h, vanitySubdomainConfig, document, ref);
    expect(real.entries[0]!).toMatchObject({ action: 'update', reason: 'availability is checked before activation' });
    expect(real.requests.every((r) => r.method === 'GET')).toBe(true);
    const sent = await applyAll(h, real);
    expect(writes(sent).map((r) => r.path)).toEqual([
      `/v1/projects/${ref}/vanity-subdomain/check-availability`,
      `/v1/projects/${ref}/vanity-subdomain/activate`,
    ]);
    const steady = await planWith(h, vanitySubdomainConfig, document, ref);
    expect(steady.entries[0]!.action).toBe('noop');
    expect(steady.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/projects/${ref}/vanity-subdomain`]);

    // Deactivated out of band: exactly that drift.
    await h.client.api.deactivateVanitySubdomainConfig(ref);
    const gone = await planWith(h, vanitySubdomainConfig, document, ref);
    expect(gone.entries[0]!).toMatchObject({ action: 'update', changes: [{ path: 'vanity_subdomain.vanity_subdomain', after: 'acme-portal' }] });
    await applyAll(h, gone);
    expect((await planWith(h, vanitySubdomainConfig, document, ref)).entries[0]!.action).toBe('noop');

    // Another project asking for the same name: the apply checks, fails with the reason and activates nothing.
    const other = await createLiveProject(h, 'portal-copy');
    const taken = await planWith(h, vanitySubdomainConfig, projectDocument('portal-copy', { vanity_subdomain: { vanity_subdomain: 'acme-portal' } }), other);
    expect(taken.entries[0]!.action).toBe('update');
    const mark = h.emulator.requests().length;
    await expect(applyAll(h, taken)).rejects.toThrow(/not available/);
    expect(writes(h.emulator.requests().slice(mark)).map((r) => r.path)).toEqual([`/v1/projects/${other}/vanity-subdomain/check-availability`]);
  });
});

describe('read replicas', () => {
  it('sets up the declared set, shares the pooler GET, removes only what the list no longer has', async () => {
    const two = projectDocument('replicated', { read_replicas: [{ read_replica_region: 'us-east-1' }, { read_replica_region: 'eu-west-2' }] });
    const fresh = await planWith(h, readReplicasConfig, two, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries[0]!).toMatchObject({ action: 'create', changes: [{ path: 'read_replicas', after: ['eu-west-2', 'us-east-1'] }] });

    const ref = await createLiveProject(h, 'replicated');
    const setup = await planWith(h, readReplicasConfig, two, ref);
    expect(setup.entries[0]!).toMatchObject({ action: 'update', changes: [{ path: 'read_replicas', before: [], after: ['eu-west-2', 'us-east-1'] }] });
    const sent = await applyAll(h, setup);
    expect(writes(sent).map((r) => r.path)).toEqual([`/v1/projects/${ref}/read-replicas/setup`, `/v1/projects/${ref}/read-replicas/setup`]);
    await h.clock.advance(10 * 60_000);

    const steady = await planWith(h, readReplicasConfig, two, ref);
    expect(steady.entries[0]!.action).toBe('noop');
    expect(steady.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/projects/${ref}/config/database/pooler`]);

    // Pooler and replicas planned for one project in one pass: one GET of the pooler list.
    const both = projectDocument('replicated', { pooler: { default_pool_size: 20 }, read_replicas: [{ read_replica_region: 'us-east-1' }, { read_replica_region: 'eu-west-2' }] });
    const scope = await scopeFor(h, both, ref);
    const ctx = contextFor(h, both, { refs: { replicated: ref } });
    const mark = h.emulator.requests().length;
    await Promise.all([poolerConfig.plan(scope, ctx), readReplicasConfig.plan(scope, ctx)]);
    expect(gets(h.emulator.requests().slice(mark))).toHaveLength(1);

    // A replica added out of band is drift; the apply removes exactly it.
    await h.client.api.setupAReadReplica(ref, { read_replica_region: 'ap-south-1' });
    await h.clock.advance(10 * 60_000);
    const drifted = await planWith(h, readReplicasConfig, two, ref);
    expect(drifted.entries[0]!).toMatchObject({
      action: 'update',
      changes: [{ path: 'read_replicas', before: ['ap-south-1', 'eu-west-2', 'us-east-1'], after: ['eu-west-2', 'us-east-1'] }],
    });
    expect(drifted.entries[0]!.reason).toContain('remove ap-south-1');
    expect(writes(await applyAll(h, drifted)).map((r) => r.path)).toEqual([`/v1/projects/${ref}/read-replicas/remove`]);
    await h.clock.advance(10 * 60_000);

    // The list shrinks: only the region it no longer has goes.
    const one = projectDocument('replicated', { read_replicas: [{ read_replica_region: 'us-east-1' }] });
    const shrink = await planWith(h, readReplicasConfig, one, ref);
    expect(shrink.entries[0]!.reason).toContain('remove eu-west-2');
    await applyAll(h, shrink);
    await h.clock.advance(10 * 60_000);
    const live = await h.client.api.getPoolerConfig(ref);
    expect(live.filter((p) => p.database_type === 'READ_REPLICA')).toHaveLength(1);
    expect((await planWith(h, readReplicasConfig, one, ref)).entries[0]!.action).toBe('noop');
  });
});

describe('read replicas that show late', () => {
  it('counts a setup as in flight until its replica shows, and sets it up again only after the TTL', async () => {
    const ref = await createLiveProject(h, 'slow-replica');
    // The service may list a new replica only some time after the setup: hide them to model that.
    const hidden = new Set<string>();
    const inner = (h.client.api as unknown as { caller: RequestCaller }).caller;
    const api = new ManagementApi({
      async call<T>(request: Parameters<RequestCaller['call']>[0]): Promise<ApiResponse<T>> {
        const response = await inner.call<T>(request);
        if (request.method === 'GET' && request.route.endsWith('/config/database/pooler')) {
          const list = (response.body as unknown as PoolerConfigResponse[]).filter((p) => !hidden.has(p.identifier));
          return { ...response, body: list as unknown as T };
        }
        return response;
      },
    });
    const state = memoryState();
    const document = projectDocument('slow-replica', { read_replicas: [{ read_replica_region: 'sa-east-1' }] });
    const hideAll = async () => {
      for (const p of await h.client.api.getPoolerConfig(ref)) if (p.database_type === 'READ_REPLICA') hidden.add(p.identifier);
    };

    const first = await planWith(h, readReplicasConfig, document, ref, { api, state });
    expect(first.entries[0]!.action).toBe('update');
    await applyAll(h, first);
    await hideAll();

    const waiting = await planWith(h, readReplicasConfig, document, ref, { api, state });
    expect(waiting.entries[0]!).toMatchObject({ action: 'noop', pending: true });
    expect(waiting.entries[0]!.reason).toContain('sa-east-1');
    expect(applies(waiting.entries[0]!)).toBe(false);

    // A setup that never shows is tried again once it is older than the TTL.
    await h.clock.advance(REPLICA_INTENT_TTL_MS + 1);
    const retry = await planWith(h, readReplicasConfig, document, ref, { api, state });
    expect(retry.entries[0]!.action).toBe('update');

    // Once the replica shows, the intent is fulfilled: in sync, not pending.
    hidden.clear();
    const shown = await planWith(h, readReplicasConfig, document, ref, { api, state });
    expect(shown.entries[0]!.action).toBe('noop');
    expect(shown.entries[0]!.pending).toBeUndefined();
    expect((await h.client.api.getPoolerConfig(ref)).filter((p) => p.database_type === 'READ_REPLICA')).toHaveLength(1);
  });
});

