// `Organization`, the first fleet-level module of the registry: found by slug or name (the
// matching is in observe.ts), created when declared and missing. The organization list is
// read only when something needs it; an id cached in the inventory is trusted when the
// project list shows one of our projects in it.
import { TransientError } from '../../api/errors.js';
import type { ManagementApi } from '../../api/endpoints.js';
import type { OrganizationResponseV1 } from '../../api/types.js';
import { API_VERSION, type OrganizationDocument, type ShardScope } from '../../manifests/types.js';
import { makeEntry } from '../diff.js';
import type { IntentLog } from '../intents.js';
import { saveInventory, type Inventory } from '../inventory.js';
import { effectivePolicy, type EffectivePolicy } from '../policy.js';
import type { Logger, PlanEntry } from '../types.js';
import type { FleetModule, OrganizationUnit } from '../fleet.js';

export type { OrganizationUnit } from '../fleet.js';

export function organizationUnit(document: OrganizationDocument, inventory: Inventory, shard?: ShardScope): OrganizationUnit {
  const cached = inventory.organizations[document.metadata.name];
  const unit: OrganizationUnit = {
    name: document.metadata.name,
    document,
    policy: effectivePolicy(document.spec?.policy),
    confirmed: false,
  };
  const owner = shard?.organizationOwners[document.metadata.name];
  if (shard && owner !== undefined && owner !== shard.name) {
    unit.createdBy = owner;
    unit.shardMap = shard.mapFile;
  }
  const id = document.spec?.slug ?? cached?.id;
  if (id !== undefined) unit.id = id;
  return unit;
}

/** The live project says which organization it is in: that confirms (or corrects) an unconfirmed cached id. */
export function confirmFromProject(unit: OrganizationUnit, organizationId: string, organizationSlug: string | undefined): boolean {
  const slug = unit.document.spec?.slug;
  if (slug !== undefined && slug !== organizationId && slug !== organizationSlug) return false;
  unit.id = organizationId;
  unit.confirmed = true;
  return true;
}

/** Resolves the unit against the organization list. */
export function resolveFromList(unit: OrganizationUnit, organizations: readonly OrganizationResponseV1[]): void {
  const slug = unit.document.spec?.slug;
  let match: OrganizationResponseV1 | undefined;
  if (slug !== undefined) {
    match = organizations.find((o) => o.slug === slug || o.id === slug);
  } else {
    const byId = unit.id === undefined ? undefined : organizations.find((o) => o.id === unit.id && o.name === unit.name);
    const byName = organizations.filter((o) => o.name === unit.name);
    match = byId ?? (byName.length === 1 ? byName[0] : undefined);
    if (!match && byName.length > 1) {
      unit.entry = makeEntry({
        kind: 'Organization',
        name: unit.name,
        changes: [],
        action: 'blocked',
        reason: `${byName.length} organizations are named \`${unit.name}\`: set spec.slug to choose one`,
        source: sourceOf(unit),
      });
      return;
    }
  }
  if (match) {
    unit.id = match.id;
    unit.confirmed = true;
    return;
  }
  delete unit.id;
  if (slug !== undefined) {
    unit.entry = makeEntry({
      kind: 'Organization',
      name: unit.name,
      changes: [],
      action: 'blocked',
      reason: `no organization with slug \`${slug}\` is visible to this token`,
      source: sourceOf(unit),
    });
  }
}

/** The plan entry of an organization (call after resolution). */
export function planOrganization(unit: OrganizationUnit): PlanEntry {
  if (unit.entry) return unit.entry;
  const observeOnly = unit.policy.management === 'observe';
  if (unit.id === undefined && unit.createdBy !== undefined) {
    // Exactly one shard creates an organization: this one finds it, or says whose it is to create.
    unit.entry = makeEntry({
      kind: 'Organization',
      name: unit.name,
      changes: [],
      action: 'blocked',
      reason: `organization \`${unit.name}\` is not visible to this shard${unit.waitedMs ? ` (waited ${Math.round(unit.waitedMs / 1000)} s)` : ''}, and only shard \`${unit.createdBy}\` creates it (its owner in ${unit.shardMap}): once it exists, this shard's user must be a member of it`,
      source: sourceOf(unit),
    });
    return unit.entry;
  }
  unit.entry =
    unit.id !== undefined
      ? makeEntry({ kind: 'Organization', name: unit.name, changes: [], source: sourceOf(unit) })
      : makeEntry({
          kind: 'Organization',
          name: unit.name,
          action: 'create',
          changes: [{ path: 'name', after: unit.name }],
          reason: observeOnly ? 'missing; under the observe policy it is not created' : 'declared and not found',
          observeOnly,
          source: sourceOf(unit),
        });
  return unit.entry;
}

/**
 * Creates the organization. An intent is recorded first; after a lost answer the list is read
 * and an organization of that name adopted instead of sending the create again.
 */
export async function createOrganization(unit: OrganizationUnit, api: ManagementApi, intents: IntentLog, now: () => number, log: Logger): Promise<string> {
  if (unit.createdBy !== undefined) throw new Error(`organization \`${unit.name}\` is created by shard \`${unit.createdBy}\` only`);
  // Read again right before the POST: another process (another checkout, a shard's owner run
  // a moment ago) may have created it since this pass listed the organizations.
  const before = (await api.listAllOrganizations({ priority: 'write' })).filter((o) => o.name === unit.name);
  if (before.length > 1) throw new Error(`${before.length} organizations are named \`${unit.name}\`: set spec.slug to choose one`);
  if (before.length === 1) {
    unit.id = before[0]!.id;
    unit.confirmed = true;
    log.info({ organization: unit.name, id: unit.id }, 'the organization exists now (created since this pass listed them): found, not created');
    return unit.id;
  }
  await intents.recordOrganization(unit.name, { name: unit.name, sentAt: now() });
  try {
    const created = await api.createAnOrganization({ name: unit.name }, { priority: 'write' });
    unit.id = created.id;
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    log.warn({ organization: unit.name, error: error.message }, 'organization create answer lost: looking for it before trying again');
    const listed = await api.listAllOrganizations({ priority: 'write' });
    const found = listed.filter((o) => o.name === unit.name);
    if (found.length !== 1) throw error;
    unit.id = found[0]!.id;
  }
  unit.confirmed = true;
  return unit.id;
}

function sourceOf(unit: OrganizationUnit): { file: string; line: number } {
  return { file: unit.document.source.file, line: unit.document.source.line };
}

export const organizationModule: FleetModule<'Organization'> = {
  kind: 'Organization',
  document: 'Organization',
  produces: ['Organization'],
  plan(fleet) {
    for (const org of fleet.organizations) planOrganization(org);
    return fleet.organizations.map((org) => org.entry!).filter(Boolean);
  },
  // Organizations come first: a project is created in one.
  leading(fleet) {
    return fleet.organizations.map((org) => org.entry!);
  },
  trailing() {
    return [];
  },
  async apply(entry, ctx) {
    const org = ctx.fleet.organizations.find((unit) => unit.entry === entry) ?? ctx.fleet.organizations.find((unit) => unit.name === entry.name);
    if (!org) throw new Error(`no declared organization is named \`${entry.name}\``);
    await createOrganization(org, ctx.api, ctx.intents, () => ctx.clock.now(), ctx.log);
    if (org.id !== undefined) {
      ctx.inventory.organizations[org.name] = { id: org.id, name: org.name };
      await saveInventory(ctx.state, ctx.inventory, ctx.clock.now());
      await ctx.intents.clearOrganization(org.name);
    }
  },
  // An organization's id is recorded only once the project list or the organization list confirmed it.
  async record(ctx) {
    for (const org of ctx.fleet.organizations) {
      if (org.confirmed && org.id !== undefined) {
        ctx.inventory.organizations[org.name] = { id: org.id, name: org.name };
        await ctx.intents.clearOrganization(org.name);
      }
    }
  },
  // One document per organization a selected project is in, adopted by its slug.
  async *exportDocuments(ctx) {
    const usedOrganizations = ctx.organizations.filter((org) => ctx.projects.some((p) => p.organization_id === org.id || p.organization_slug === org.slug));
    for (const org of usedOrganizations) {
      const duplicate = usedOrganizations.filter((o) => o.name === org.name).length > 1;
      const name = duplicate ? `${org.name}-${org.slug ?? org.id}` : org.name;
      ctx.organizationNames.set(org.id, name);
      yield { document: { apiVersion: API_VERSION, kind: 'Organization', metadata: { name }, spec: { slug: org.slug ?? org.id } } };
    }
  },
};
