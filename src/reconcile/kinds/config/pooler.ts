import type { PoolerSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import { describeNested, sectionFromBody } from '../../../manifests/schema-source.js';
import { POOLER_LIST, readPoolerList } from './pooler-list.js';
import type { ConfigSection } from './section.js';
import { sectionEntry, sectionManaged, sectionSpec, unsetEquals, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectPooler', key: 'pooler' } as const;

/** Connection pooler: the PRIMARY entry of the pooler list; PATCH default_pool_size. */
export const poolerConfig: ConfigSection<'ProjectPooler'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'postgres',
    property: { description: 'The connection pooler configuration.', $ref: '#/$defs/PoolerSpec' },
    // pool_mode is deprecated in the API (the pooler's mode is fixed per port), so not offered.
    defs: (openapi) => ({
      PoolerSpec: sectionFromBody(openapi, 'UpdatePoolerConfigBody', 'PoolerSpec', 'The connection pooler configuration (PATCH /v1/projects/{ref}/config/database/pooler).', describeNested(POOLER_FIELDS, 'pooler'), ['pool_mode']),
    }),
  },
  services: ['pooler'],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = { ...sectionSpec<PoolerSpec>(scope, SECTION.key) };
    if (scope.ref === undefined) {
      const changes = diffFields(desired, {}, { prefix: SECTION.key, equals: unsetEquals });
      if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
      return [sectionEntry(scope, SECTION, { action: 'create', changes })];
    }
    const list = await readPoolerList(scope, ctx, scope.ref, SECTION.kind);
    const primary = list.find((item) => item.database_type === 'PRIMARY');
    if (!primary) {
      return [sectionEntry(scope, SECTION, { action: 'blocked', reason: 'the pooler list has no PRIMARY entry' })];
    }
    const changes = diffFields(desired, { default_pool_size: primary.default_pool_size }, { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    return [sectionEntry(scope, SECTION, { action: 'update', changes })];
  },
  async apply(_entry, scope, ctx) {
    const desired = sectionSpec<PoolerSpec>(scope, SECTION.key);
    await ctx.api.updatePoolerConfig(refAtApply(scope, ctx), { default_pool_size: desired.default_pool_size }, writeOptions(scope, ctx));
  },
  async export({ api, ref, read }) {
    const poolers = await read(() => api.getPoolerConfig(ref), POOLER_LIST);
    const primary = poolers?.find((p) => p.database_type === 'PRIMARY');
    return primary?.default_pool_size !== undefined && primary.default_pool_size !== null ? { default_pool_size: primary.default_pool_size } : undefined;
  },
};

const POOLER_FIELDS: Record<string, string> = {
  default_pool_size: 'Server connections per user and database pair.',
};
