import type { PoolerSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { KindContext, KindModule } from '../../types.js';
import { readPoolerList } from './pooler-list.js';
import { plannedChange, refForApply, sectionManaged, sectionSpec, unsetEquals, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectPooler', key: 'pooler' };

/** Connection pooler: the PRIMARY entry of the pooler list; PATCH default_pool_size. */
export const poolerConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = { ...sectionSpec<PoolerSpec>(scope, SECTION.key) };
    if (scope.ref === undefined) {
      const changes = diffFields(desired, {}, { prefix: SECTION.key, equals: unsetEquals });
      if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
      return [plannedChange(scope, SECTION, { action: 'create', changes }, (apply) => patch(apply))];
    }
    const list = await readPoolerList(scope, ctx, scope.ref, SECTION.kind);
    const primary = list.find((item) => item.database_type === 'PRIMARY');
    if (!primary) {
      return [plannedChange(scope, SECTION, { action: 'blocked', reason: 'the pooler list has no PRIMARY entry' })];
    }
    const changes = diffFields(desired, { default_pool_size: primary.default_pool_size }, { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    return [plannedChange(scope, SECTION, { action: 'update', changes }, (apply) => patch(apply))];

    async function patch(apply: KindContext): Promise<void> {
      await apply.api.updatePoolerConfig(refForApply(scope, apply), { default_pool_size: desired.default_pool_size }, writeOptions(scope, apply));
    }
  },
};
