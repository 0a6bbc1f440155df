import type { UpdatePostgresConfigBody } from '../../../api/types.js';
import type { PostgresSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { KindModule } from '../../types.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, unsetEquals, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectPostgres', key: 'postgres' };

/**
 * Postgres parameters: the GET answers only parameters that were set, so an absent key is
 * the service default — drift only when the manifest names that parameter. The PUT carries
 * every managed parameter (absolute values, so a retry is harmless) and `restart_database`
 * only when the manifest asks for a restart.
 */
export const postgresConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const { restart_database: restart, ...desired } = sectionSpec<PostgresSpec>(scope, SECTION.key);
    const live = scope.ref === undefined ? undefined : await ctx.api.getPostgresConfig(scope.ref, readOptions(scope, ctx));
    const changes = diffFields(desired as Record<string, unknown>, (live ?? {}) as Record<string, unknown>, { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];

    const body: UpdatePostgresConfigBody = { ...desired, ...(restart === true ? { restart_database: true } : {}) };
    const reason = restart === true ? 'the manifest asks for a database restart with this change' : undefined;
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes, ...(reason ? { reason } : {}) }, async (apply) => {
        await apply.api.updatePostgresConfig(refForApply(scope, apply), body, writeOptions(scope, apply));
      }),
    ];
  },
};
