import type { SslEnforcementSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectSslEnforcement', key: 'ssl_enforcement' } as const;

/** SSL enforcement: compares `currentConfig.database`; PUT `{requestedConfig: {database}}`. */
export const sslEnforcementConfig: ConfigSection<'ProjectSslEnforcement'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'network_restrictions',
    property: { description: 'SSL enforcement for database connections.', $ref: '#/$defs/SslEnforcementSpec' },
    defs: () => ({
      SslEnforcementSpec: {
        title: 'SslEnforcementSpec',
        description: 'SSL enforcement for database connections.',
        type: 'object',
        properties: { database: { type: 'boolean', description: 'Refuse database connections without SSL.' } },
        required: ['database'],
        additionalProperties: false,
      },
    }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<SslEnforcementSpec>(scope, SECTION.key);
    const live = scope.ref === undefined ? undefined : (await ctx.api.getSslEnforcementConfig(scope.ref, readOptions(scope, ctx))).currentConfig;
    const changes = diffFields({ database: desired.database }, live ?? {}, { prefix: SECTION.key });
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes })];
  },
  async apply(_entry, scope, ctx) {
    const desired = sectionSpec<SslEnforcementSpec>(scope, SECTION.key);
    await ctx.api.updateSslEnforcementConfig(refAtApply(scope, ctx), { requestedConfig: { database: desired.database } }, writeOptions(scope, ctx));
  },
  async export({ api, ref, read }) {
    const ssl = await read(() => api.getSslEnforcementConfig(ref));
    return typeof ssl?.currentConfig?.database === 'boolean' ? { database: ssl.currentConfig.database } : undefined;
  },
};
