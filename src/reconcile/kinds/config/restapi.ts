import type { RestapiSpec } from '../../../manifests/types.js';
import { changedSubset, diffFields } from '../../diff.js';
import type { KindModule } from '../../types.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, unsetEquals, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectRestapi', key: 'restapi' };

/**
 * REST API: GET, PATCH of the changed fields. The GET also answers the read-only
 * `jwt_secret`: it is never compared, copied or shown.
 */
export const restapiConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = { ...sectionSpec<RestapiSpec>(scope, SECTION.key) } as Record<string, unknown>;
    let live: Record<string, unknown> | undefined;
    if (scope.ref !== undefined) {
      const { jwt_secret: _secret, ...rest } = await ctx.api.getRestapiServiceConfig(scope.ref, readOptions(scope, ctx));
      live = rest;
    }
    const changes = diffFields(desired, live ?? {}, { prefix: SECTION.key, equals: unsetEquals, ignore: ['jwt_secret'] });
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    const body = changedSubset(desired, changes, SECTION.key);
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, async (apply) => {
        await apply.api.updateRestapiServiceConfig(refForApply(scope, apply), body, writeOptions(scope, apply));
      }),
    ];
  },
};
