import type { UpdatePostgresConfigBody } from '../../../api/types.js';
import type { PostgresSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import { sectionFromBody, type JsonSchema, type OpenApiDocument } from '../../../manifests/schema-source.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, unsetEquals, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectPostgres', key: 'postgres' } as const;

/**
 * Postgres parameters: the GET answers only parameters that were set, so an absent key is
 * the service default — drift only when the manifest names that parameter. The PUT carries
 * every managed parameter (absolute values, so a retry is harmless) and `restart_database`
 * only when the manifest asks for a restart.
 */
export const postgresConfig: ConfigSection<'ProjectPostgres'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'auth',
    property: { description: 'Postgres parameters, plus `restart_database`.', $ref: '#/$defs/PostgresSpec' },
    defs: (openapi) => ({ PostgresSpec: postgresSpec(openapi) }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const { restart_database: restart, ...desired } = sectionSpec<PostgresSpec>(scope, SECTION.key);
    const live = scope.ref === undefined ? undefined : await ctx.api.getPostgresConfig(scope.ref, readOptions(scope, ctx));
    const changes = diffFields(desired as Record<string, unknown>, (live ?? {}) as Record<string, unknown>, { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    const reason = restart === true ? 'the manifest asks for a database restart with this change' : undefined;
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes, ...(reason ? { reason } : {}) })];
  },
  // Every managed parameter, not only the changed ones: absolute values, so a retry is harmless.
  async apply(_entry, scope, ctx) {
    const { restart_database: restart, ...desired } = sectionSpec<PostgresSpec>(scope, SECTION.key);
    const body: UpdatePostgresConfigBody = { ...desired, ...(restart === true ? { restart_database: true } : {}) };
    await ctx.api.updatePostgresConfig(refAtApply(scope, ctx), body, writeOptions(scope, ctx));
  },
  async export({ api, ref, read, prune }) {
    return prune(await read(() => api.getPostgresConfig(ref)), 'PostgresSpec');
  },
};

const POSTGRES_DURATION_FIELDS = new Set(['statement_timeout', 'wal_sender_timeout', 'checkpoint_timeout']);

function postgresSpec(openapi: OpenApiDocument): JsonSchema {
  const schema = sectionFromBody(
    openapi,
    'UpdatePostgresConfigBody',
    'PostgresSpec',
    'Postgres parameters (PUT /v1/projects/{ref}/config/database/postgres). Only the parameters listed are managed; an absent parameter keeps the service default.',
    (path) => {
      if (path.length !== 1) return undefined;
      const name = path[0]!;
      if (name === 'restart_database') return 'Restart the database when this section changes (sent as `restart_database`). Default false: the change applies at the next restart.';
      return `Postgres parameter \`${name}\`${POSTGRES_DURATION_FIELDS.has(name) ? ' (a duration such as `30s` or `5min`)' : ''}.`;
    },
  );
  return schema;
}
