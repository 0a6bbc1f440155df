import type { VanitySubdomainSpec } from '../../../manifests/types.js';
import { SubdomainUnavailableError } from './errors.js';
import { convertOpenApiSchema, type JsonSchema } from '../../../manifests/schema-source.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectVanitySubdomain', key: 'vanity_subdomain' } as const;
const PATH = `${SECTION.key}.vanity_subdomain`;

/**
 * Vanity subdomain: GET; when it is not the active one, plan the activation. The availability
 * check is a POST, so it is never part of planning (a dry run and an apply plan the same
 * thing): it is the precondition of the apply, which fails with the reason when the name is
 * taken and activates otherwise.
 */
export const vanitySubdomainConfig: ConfigSection<'ProjectVanitySubdomain'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'custom_hostname',
    property: { description: 'A vanity subdomain for the project.', $ref: '#/$defs/VanitySubdomainSpec' },
    defs: (openapi) => ({
      VanitySubdomainSpec: {
        title: 'VanitySubdomainSpec',
        description: 'A vanity subdomain: checked for availability, then activated.',
        type: 'object',
        properties: {
          vanity_subdomain: {
            ...convertOpenApiSchema((openapi.components.schemas.VanitySubdomainBody!.properties as Record<string, JsonSchema>).vanity_subdomain!),
            minLength: 1,
            pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
            description: 'The subdomain (lowercase letters, digits and dashes).',
          },
        },
        required: ['vanity_subdomain'],
        additionalProperties: false,
      },
    }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const { vanity_subdomain: subdomain } = sectionSpec<VanitySubdomainSpec>(scope, SECTION.key);
    let before: string | undefined;
    if (scope.ref !== undefined) {
      const live = await ctx.api.getVanitySubdomainConfig(scope.ref, readOptions(scope, ctx));
      const current = live.status === 'active' ? subdomainOf(live.custom_domain) : undefined;
      if (current === subdomain.toLowerCase()) return [sectionEntry(scope, SECTION, { action: 'noop' })];
      if (live.status === 'custom-domain-used') {
        return [sectionEntry(scope, SECTION, { action: 'blocked', changes: [{ path: PATH, after: subdomain }], reason: 'a custom hostname is in use for this project' })];
      }
      before = current;
    }
    return [
      sectionEntry(scope, SECTION, {
        action: scope.ref === undefined ? 'create' : 'update',
        changes: [{ path: PATH, after: subdomain, ...(before ? { before } : {}) }],
        reason: 'availability is checked before activation',
      }),
    ];
  },
  async apply(_entry, scope, ctx) {
    const { vanity_subdomain: subdomain } = sectionSpec<VanitySubdomainSpec>(scope, SECTION.key);
    const ref = refAtApply(scope, ctx);
    const { available } = await ctx.api.checkVanitySubdomainAvailability(ref, { vanity_subdomain: subdomain }, writeOptions(scope, ctx));
    if (!available) throw new SubdomainUnavailableError(subdomain);
    await ctx.api.activateVanitySubdomainConfig(ref, { vanity_subdomain: subdomain }, writeOptions(scope, ctx));
  },
  async export({ api, ref, read }) {
    const vanity = await read(() => api.getVanitySubdomainConfig(ref));
    return vanity?.status === 'active' && vanity.custom_domain ? { vanity_subdomain: vanity.custom_domain.split('.')[0] } : undefined;
  },
};

/** `custom_domain` is the full host (`name.example.net`) or the bare name: its first label is the subdomain. */
function subdomainOf(customDomain: string | undefined): string | undefined {
  if (!customDomain) return undefined;
  return customDomain.trim().toLowerCase().split('.')[0];
}
