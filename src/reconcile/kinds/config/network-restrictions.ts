import type { NetworkRestrictionsSpec } from '../../../manifests/types.js';
import type { FieldChange } from '../../types.js';
import { cidrSet, sameCidrSet } from './cidr-set.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectNetworkRestrictions', key: 'network_restrictions' } as const;
const LISTS = ['dbAllowedCidrs', 'dbAllowedCidrsV6'] as const;

/**
 * Network restrictions: the lists are sets of CIDRs (order, duplicates and the implicit
 * host prefix do not matter). The service only takes the whole configuration, so the
 * apply sends both lists: the manifest's, and the live one for a list it does not mention.
 */
export const networkRestrictionsConfig: ConfigSection<'ProjectNetworkRestrictions'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'storage',
    property: { description: 'Database network restrictions (allowed address ranges).', $ref: '#/$defs/NetworkRestrictionsSpec' },
    defs: () => ({
      NetworkRestrictionsSpec: {
        title: 'NetworkRestrictionsSpec',
        description: 'Database network restrictions (written whole): the client address ranges allowed to connect. Absent: not managed.',
        type: 'object',
        properties: {
          dbAllowedCidrs: {
            type: 'array',
            description: 'Allowed IPv4 ranges in CIDR notation; `0.0.0.0/0` allows all.',
            items: { type: 'string', pattern: '^([0-9]{1,3}\\.){3}[0-9]{1,3}/[0-9]{1,2}$' },
          },
          dbAllowedCidrsV6: {
            type: 'array',
            description: 'Allowed IPv6 ranges in CIDR notation; `::/0` allows all.',
            items: { type: 'string', pattern: '^[0-9A-Fa-f:]+/[0-9]{1,3}$' },
          },
        },
        additionalProperties: false,
      },
    }),
  },
  services: [],
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
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    // The service takes the whole configuration: a list the manifest does not mention is written back as observed.
    const kept: Record<string, unknown> = {};
    for (const list of LISTS) if (desired[list] === undefined && live?.[list] !== undefined) kept[list] = live[list];
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, Object.keys(kept).length > 0 ? { live: kept } : undefined)];
  },
  async apply(entry, scope, ctx) {
    const desired = sectionSpec<NetworkRestrictionsSpec>(scope, SECTION.key);
    const kept = (entry.target?.live ?? {}) as { dbAllowedCidrs?: string[]; dbAllowedCidrsV6?: string[] };
    // Canonical forms: a bare address gets its host prefix, which the service requires.
    const body = {
      dbAllowedCidrs: desired.dbAllowedCidrs ? cidrSet(desired.dbAllowedCidrs) : (kept.dbAllowedCidrs ?? []),
      dbAllowedCidrsV6: desired.dbAllowedCidrsV6 ? cidrSet(desired.dbAllowedCidrsV6) : (kept.dbAllowedCidrsV6 ?? []),
    };
    await ctx.api.updateNetworkRestrictions(refAtApply(scope, ctx), body, writeOptions(scope, ctx));
  },
  async export({ api, ref, read, prune }) {
    const network = await read(() => api.getNetworkRestrictions(ref));
    return network?.config ? prune(network.config, 'NetworkRestrictionsSpec') : undefined;
  },
};
