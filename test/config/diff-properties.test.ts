// Properties of the section diffs over arbitrary live states (a stub API answers the GET and
// records the write): only fields the manifest mentions are ever diffed or written, a write
// carries exactly the changed fields, and after it the plan is in sync.
import fc from 'fast-check';
import { PassState } from '../../src/reconcile/pass-state.js';
import { describe, expect, it } from 'vitest';
import { ManagementApi } from '../../src/api/endpoints.js';
import type { ApiRequest, ApiResponse } from '../../src/api/request.js';
import { authConfig } from '../../src/reconcile/kinds/config/auth.js';
import { authSecretDigest } from '../../src/reconcile/kinds/config/hmac-digest.js';
import { networkRestrictionsConfig } from '../../src/reconcile/kinds/config/network-restrictions.js';
import { storageConfig } from '../../src/reconcile/kinds/config/storage.js';
import type { KindContext, KindModule, PlanEntry, ProjectScope } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { applies, envRef, memoryState, projectDocument, silentLog } from './harness.js';

const REF = 'propertyrefpropertyr';

/** A one-project service in memory: GET answers `live`, PATCH/POST merges into it. */
function stubService(live: Record<string, unknown>, mask: (body: Record<string, unknown>) => Record<string, unknown> = (b) => b) {
  const writes: ApiRequest[] = [];
  const api = new ManagementApi({
    async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
      if (request.method === 'GET') return { status: 200, headers: {}, body: structuredClone(live) as T };
      writes.push(request);
      Object.assign(live, mask(request.body as Record<string, unknown>));
      return { status: 200, headers: {}, body: {} as T };
    },
  });
  return { api, writes };
}

function context(api: ManagementApi, env: Record<string, string>): KindContext {
  return {
    api,
    clock: new ManualClock(),
    state: memoryState(),
    documents: [],
    resolveSecret: async (ref) => env[(ref as { valueFrom: { env: string } }).valueFrom.env]!,
    projectRefs: new Map([['prop', REF]]),
    pass: new PassState(),
    log: silentLog,
  };
}

function scopeOf(spec: Record<string, unknown>): ProjectScope {
  return { name: 'prop', document: projectDocument('prop', spec), documents: [], ref: REF, status: 'ACTIVE_HEALTHY' };
}

async function planOnce(module: KindModule, spec: Record<string, unknown>, ctx: KindContext) {
  return module.plan(scopeOf(spec), ctx);
}

/** Hands the entry to the module's apply as the engine does (writes only), after a JSON round trip: the entry is all the apply gets. */
async function applyOnce(module: KindModule, spec: Record<string, unknown>, ctx: KindContext, entry: PlanEntry) {
  if (applies(entry)) await module.apply(JSON.parse(JSON.stringify(entry)) as PlanEntry, scopeOf(spec), ctx);
}

const AUTH_FIELDS = ['site_url', 'disable_signup', 'jwt_exp', 'smtp_host', 'smtp_port', 'uri_allow_list', 'mailer_autoconfirm'] as const;
const authValue = fc.oneof(fc.constantFrom('a', 'b', 'https://x.example'), fc.boolean(), fc.integer({ min: 0, max: 5 }));
// A secret drawn as plain text can equal a key or a field name of the plan ("name", "auth"), so
// "the secret never appears" would fail for the wrong reason: each secret is a canary that
// no key, field name, value or hex digest of the plan can contain.
const secretCanary = fc.stringMatching(/^[A-Za-z0-9]{1,12}$/).map((body) => `CANARY~${body}~SECRET`);

describe('auth diff (property)', () => {
  it('diffs and writes only mentioned fields, exactly the changed ones, and converges', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom(...AUTH_FIELDS), authValue),
        fc.dictionary(fc.constantFrom(...AUTH_FIELDS, 'smtp_user', 'sessions_tags'), fc.oneof(authValue, fc.constant(null))),
        fc.boolean(),
        secretCanary,
        async (desired, liveStart, secretMatches, secret) => {
          const live: Record<string, unknown> = { ...liveStart, smtp_pass: secretMatches ? authSecretDigest(secret, REF) : authSecretDigest(`${secret}x`, REF) };
          const mask = (body: Record<string, unknown>) => ('smtp_pass' in body ? { ...body, smtp_pass: authSecretDigest(String(body.smtp_pass), REF) } : body);
          const { api, writes } = stubService(live, mask);
          const ctx = context(api, { PASS: secret });
          const spec = { auth: { ...desired, smtp_pass: envRef('PASS') } };
          const [planned] = await planOnce(authConfig, spec, ctx);
          const expected = Object.keys(desired).filter((k) => JSON.stringify(desired[k]) !== JSON.stringify(liveStart[k] ?? null) && !(desired[k] === null && liveStart[k] == null));
          if (!secretMatches) expected.push('smtp_pass');
          const paths = planned!.changes.map((c) => c.path.replace(/^auth\./, '')).sort();
          expect(paths).toEqual([...expected].sort());
          expect(JSON.stringify(planned!)).not.toContain(secret);
          await applyOnce(authConfig, spec, ctx, planned!);
          if (expected.length === 0) expect(writes).toHaveLength(0);
          else expect(Object.keys(writes[0]!.body as object).sort()).toEqual([...expected].sort());
          const [again] = await planOnce(authConfig, spec, ctx);
          expect(again!.action).toBe('noop');
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('storage diff (property)', () => {
  it('never reports a leaf the manifest does not set, and converges with whole features sent', async () => {
    const feature = fc.record({ enabled: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(
        fc.record({ fileSizeLimit: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }), features: fc.option(fc.record({ imageTransformation: fc.option(feature, { nil: undefined }), s3Protocol: fc.option(feature, { nil: undefined }) }), { nil: undefined }) }),
        fc.record({ fileSizeLimit: fc.integer({ min: 1, max: 100 }), features: fc.record({ imageTransformation: feature, s3Protocol: feature, icebergCatalog: fc.record({ enabled: fc.boolean(), maxNamespaces: fc.nat(9), maxTables: fc.nat(9), maxCatalogs: fc.nat(9) }) }) }),
        async (desired, liveStart) => {
          const live = structuredClone(liveStart) as Record<string, unknown>;
          const merge = (target: Record<string, unknown>, source: Record<string, unknown>) => {
            for (const [k, v] of Object.entries(source)) {
              if (v && typeof v === 'object' && !Array.isArray(v) && target[k] && typeof target[k] === 'object') merge(target[k] as Record<string, unknown>, v as Record<string, unknown>);
              else target[k] = v;
            }
          };
          const writes: ApiRequest[] = [];
          const api = new ManagementApi({
            async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
              if (request.method === 'GET') return { status: 200, headers: {}, body: structuredClone(live) as T };
              writes.push(request);
              merge(live, request.body as Record<string, unknown>);
              return { status: 200, headers: {}, body: {} as T };
            },
          });
          const ctx = context(api, {});
          const spec = { storage: JSON.parse(JSON.stringify(desired)) };
          const [planned] = await planOnce(storageConfig, spec, ctx);
          for (const change of planned!.changes) {
            const keys = change.path.split('.').slice(1);
            let node: unknown = spec.storage;
            for (const key of keys) node = (node as Record<string, unknown>)[key];
            expect(node).not.toBeUndefined();
          }
          await applyOnce(storageConfig, spec, ctx, planned!);
          // Unmentioned live values survive the write.
          expect((live.features as Record<string, unknown>).icebergCatalog).toEqual(liveStart.features.icebergCatalog);
          const [again] = await planOnce(storageConfig, spec, ctx);
          expect(again!.action).toBe('noop');
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('network restrictions (property)', () => {
  it('is in sync with any permutation of the same set and keeps the unmentioned list', async () => {
    const cidr = fc.tuple(fc.nat(255), fc.nat(255), fc.integer({ min: 8, max: 32 })).map(([a, b, p]) => `${a}.${b}.0.0/${p}`);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(cidr, { maxLength: 6 }), fc.uniqueArray(cidr, { maxLength: 6 }), async (desired, liveV4) => {
        const live = { entitlement: 'allowed', status: 'applied', config: { dbAllowedCidrs: [...liveV4], dbAllowedCidrsV6: ['2001:db8::/32'] } };
        const writes: ApiRequest[] = [];
        const api = new ManagementApi({
          async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
            if (request.method === 'GET') return { status: 200, headers: {}, body: structuredClone(live) as T };
            writes.push(request);
            live.config = structuredClone(request.body) as typeof live.config;
            return { status: 201, headers: {}, body: structuredClone(live) as T };
          },
        });
        const ctx = context(api, {});
        const spec = { network_restrictions: { dbAllowedCidrs: desired } };
        const [planned] = await planOnce(networkRestrictionsConfig, spec, ctx);
        const same = [...desired].sort().join() === [...liveV4].sort().join();
        expect(planned!.action).toBe(same ? 'noop' : 'update');
        await applyOnce(networkRestrictionsConfig, spec, ctx, planned!);
        expect(live.config.dbAllowedCidrsV6).toEqual(['2001:db8::/32']);
        live.config.dbAllowedCidrs.reverse();
        const [again] = await planOnce(networkRestrictionsConfig, spec, ctx);
        expect(again!.action).toBe('noop');
      }),
      { numRuns: 150 },
    );
  });
});
