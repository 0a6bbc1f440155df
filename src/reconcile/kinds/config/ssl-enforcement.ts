import type { SslEnforcementSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { KindModule } from '../../types.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectSslEnforcement', key: 'ssl_enforcement' };

/** SSL enforcement: compares `currentConfig.database`; PUT `{requestedConfig: {database}}`. */
export const sslEnforcementConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<SslEnforcementSpec>(scope, SECTION.key);
    const live = scope.ref === undefined ? undefined : (await ctx.api.getSslEnforcementConfig(scope.ref, readOptions(scope, ctx))).currentConfig;
    const changes = diffFields({ database: desired.database }, live ?? {}, { prefix: SECTION.key });
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, async (apply) => {
        await apply.api.updateSslEnforcementConfig(refForApply(scope, apply), { requestedConfig: { database: desired.database } }, writeOptions(scope, apply));
      }),
    ];
  },
};
