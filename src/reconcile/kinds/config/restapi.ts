import type { RestapiSpec } from '../../../manifests/types.js';
import { changedSubset, diffFields } from '../../diff.js';
import { describeNested, sectionFromBody } from '../../../manifests/schema-source.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, unsetEquals, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectRestapi', key: 'restapi' } as const;

/**
 * REST API: GET, PATCH of the changed fields. The GET also answers the read-only
 * `jwt_secret`: it is never compared, copied or shown.
 */
export const restapiConfig: ConfigSection<'ProjectRestapi'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'pooler',
    property: { description: 'The REST API configuration.', $ref: '#/$defs/RestapiSpec' },
    defs: (openapi) => ({
      RestapiSpec: sectionFromBody(openapi, 'V1UpdateRestapiConfigBody', 'RestapiSpec', 'The REST API configuration (PATCH /v1/projects/{ref}/restapi).', describeNested(RESTAPI_FIELDS, 'REST API')),
    }),
  },
  services: ['rest'],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = { ...sectionSpec<RestapiSpec>(scope, SECTION.key) } as Record<string, unknown>;
    let live: Record<string, unknown> | undefined;
    if (scope.ref !== undefined) {
      const { jwt_secret: _secret, ...rest } = await ctx.api.getRestapiServiceConfig(scope.ref, readOptions(scope, ctx));
      live = rest;
    }
    const changes = diffFields(desired, live ?? {}, { prefix: SECTION.key, equals: unsetEquals, ignore: ['jwt_secret'] });
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes })];
  },
  // The changed fields only.
  async apply(entry, scope, ctx) {
    const desired = { ...sectionSpec<RestapiSpec>(scope, SECTION.key) } as Record<string, unknown>;
    const body = changedSubset(desired, entry.changes, SECTION.key);
    await ctx.api.updateRestapiServiceConfig(refAtApply(scope, ctx), body, writeOptions(scope, ctx));
  },
  async export({ api, ref, read, prune }) {
    return prune(await read(() => api.getRestapiServiceConfig(ref)), 'RestapiSpec');
  },
};

const RESTAPI_FIELDS: Record<string, string> = {
  db_schema: 'Schemas exposed by the REST API, comma-separated.',
  db_extra_search_path: 'Extra schemas on the search path, comma-separated.',
  max_rows: 'Most rows one REST request returns.',
  db_pool: 'Database connections of the REST API server.',
};
