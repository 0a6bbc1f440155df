import type { NetworkRestrictionsSpec } from '../../../manifests/types.js';
import type { FieldChange, KindModule } from '../../types.js';
import { cidrSet, sameCidrSet } from './cidr-set.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectNetworkRestrictions', key: 'network_restrictions' };
const LISTS = ['dbAllowedCidrs', 'dbAllowedCidrsV6'] as const;

/**
 * Network restrictions: the lists are sets of CIDRs (order, duplicates and the implicit
 * host prefix do not matter). The service only takes the whole configuration, so the
 * apply sends both lists: the manifest's, and the live one for a list it does not mention.
 */
export const networkRestrictionsConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<NetworkRestrictionsSpec>(scope, SECTION.key);
    const live = scope.ref === undefined ? undefined : (await ctx.api.getNetworkRestrictions(scope.ref, readOptions(scope, ctx))).config;
    const changes: FieldChange[] = [];
    for (const list of LISTS) {
      const want = desired[list];
      if (want === undefined) continue;
      if (live !== undefined && sameCidrSet(want, live[list])) continue;
      changes.push({ path: `${SECTION.key}.${list}`, after: cidrSet(want), ...(live !== undefined ? { before: cidrSet(live[list]) } : {}) });
    }
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    // Canonical forms: a bare address gets its host prefix, which the service requires.
    const body = {
      dbAllowedCidrs: desired.dbAllowedCidrs ? cidrSet(desired.dbAllowedCidrs) : (live?.dbAllowedCidrs ?? []),
      dbAllowedCidrsV6: desired.dbAllowedCidrsV6 ? cidrSet(desired.dbAllowedCidrsV6) : (live?.dbAllowedCidrsV6 ?? []),
    };
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, async (apply) => {
        await apply.api.updateNetworkRestrictions(refForApply(scope, apply), body, writeOptions(scope, apply));
      }),
    ];
  },
};
