import type { VanitySubdomainSpec } from '../../../manifests/types.js';
import type { KindModule } from '../../types.js';
import { SubdomainUnavailableError } from './errors.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectVanitySubdomain', key: 'vanity_subdomain' };
const PATH = `${SECTION.key}.vanity_subdomain`;

/**
 * Vanity subdomain: GET; when it is not the active one, check availability, then activate.
 * The availability check is a POST, so planning never sends it (a dry run plans exactly what
 * an apply plans, and a saved plan stays comparable): the activation is planned with a note,
 * and the apply checks first and fails with the reason when the name is taken.
 */
export const vanitySubdomainConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const { vanity_subdomain: subdomain } = sectionSpec<VanitySubdomainSpec>(scope, SECTION.key);
    let before: string | undefined;
    if (scope.ref !== undefined) {
      const live = await ctx.api.getVanitySubdomainConfig(scope.ref, readOptions(scope, ctx));
      const current = live.status === 'active' ? subdomainOf(live.custom_domain) : undefined;
      if (current === subdomain.toLowerCase()) return [plannedChange(scope, SECTION, { action: 'noop' })];
      if (live.status === 'custom-domain-used') {
        return [plannedChange(scope, SECTION, { action: 'blocked', changes: [{ path: PATH, after: subdomain }], reason: 'a custom hostname is in use for this project' })];
      }
      before = current;
    }
    return [
      plannedChange(
        scope,
        SECTION,
        {
          action: scope.ref === undefined ? 'create' : 'update',
          changes: [{ path: PATH, after: subdomain, ...(before ? { before } : {}) }],
          reason: 'availability is checked before activation',
        },
        async (apply) => {
          const ref = refForApply(scope, apply);
          const { available } = await apply.api.checkVanitySubdomainAvailability(ref, { vanity_subdomain: subdomain }, writeOptions(scope, apply));
          if (!available) throw new SubdomainUnavailableError(subdomain);
          await apply.api.activateVanitySubdomainConfig(ref, { vanity_subdomain: subdomain }, writeOptions(scope, apply));
        },
      ),
    ];
  },
};

/** `custom_domain` is the full host (`name.example.net`) or the bare name: its first label is the subdomain. */
function subdomainOf(customDomain: string | undefined): string | undefined {
  if (!customDomain) return undefined;
  return customDomain.trim().toLowerCase().split('.')[0];
}
