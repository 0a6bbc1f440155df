// Observation of the fleet: one project list, the organization list only when something
// needs it, and the matching of manifests to live organizations and projects. What the
// matching finds is planned by the fleet-level modules of the registry (Organization, then
// Project: src/reconcile/kinds/organization.ts and project.ts).
import type { OrganizationResponseV1 } from '../api/types.js';
import type { Priority } from '../api/request.js';
import type { FleetInput, FleetObservation, OrganizationUnit, ProjectUnit } from './fleet.js';
import { confirmFromProject, organizationUnit, resolveFromList } from './kinds/organization.js';
import { findByName, inOrganization, matchByRef, projectUnit, refOf } from './kinds/project.js';

export type { FleetInput, FleetObservation } from './fleet.js';

export async function observeFleet(input: FleetInput): Promise<FleetObservation> {
  const call = { priority: input.readPriority, ...(input.signal ? { signal: input.signal } : {}) };
  const live = await input.api.listAllProjects(call);

  const organizations = input.organizationDocuments.map((doc) => organizationUnit(doc, input.inventory, input.shard));
  const byName = new Map(organizations.map((unit) => [unit.name, unit]));
  const projects = input.projectDocuments.map(projectUnit);
  const declaredNames = new Set(input.declaredDocuments.map((d) => d.metadata.name));
  const liveByRef = new Map(live.flatMap((p) => [[refOf(p), p] as const, [p.id, p] as const]));
  /** Inventory records no document declares any more, with their live project. */
  const undeclared = Object.entries(input.inventory.projects).flatMap(([name, record]) => {
    const found = declaredNames.has(name) ? undefined : liveByRef.get(record.ref);
    return found ? [{ name, found }] : [];
  });

  // 1. Projects we know by ref, and renames: a document without a record of its own whose API
  // name is that of exactly one undeclared record's live project is that project under a new
  // manifest name. A live project's organization only corroborates an id cached from the
  // organization itself; it never sets one.
  for (const unit of projects) {
    const inventoried = unit.document.spec.ref === undefined ? input.inventory.projects[unit.name] : undefined;
    matchByRef(unit, live, inventoried);
    // A project a ProjectSet made is pinned to its element's key: the record of the same set
    // and key under another name is the same project (a changed name template).
    const pin = unit.document.source.set;
    if (!unit.live && !inventoried && unit.document.spec.ref === undefined && pin) {
      const pinned = undeclared.filter((u) => input.inventory.projects[u.name]!.set?.name === pin.set && input.inventory.projects[u.name]!.set?.key === pin.key);
      if (pinned.length === 1) {
        unit.live = pinned[0]!.found;
        unit.foundBy = 'inventory';
      }
    }
    if (!unit.live && !inventoried && unit.document.spec.ref === undefined) {
      const candidates = undeclared.filter((u) => u.found.name === unit.apiName);
      if (candidates.length === 1) {
        unit.live = candidates[0]!.found;
        unit.foundBy = 'inventory';
      }
    }
    const org = byName.get(unit.organization);
    if (unit.live && org && !org.confirmed && org.id !== undefined && inOrganization(unit.live, org.id)) {
      confirmFromProject(org, unit.live.organization_id, unit.live.organization_slug);
    }
  }

  // 2. Projects found by name within a confirmed organization (this covers creation intents too).
  const ambiguous = new Map<string, number>();
  const findInOrganization = (unit: ProjectUnit, org: OrganizationUnit | undefined) => {
    if (unit.live || unit.document.spec.ref !== undefined || !org?.confirmed || org.id === undefined) return;
    let found = findByName(live, unit.apiName, org.id);
    // A changed spec.name: the project may still carry its manifest name (the API cannot
    // rename it). Found that way, it is planned as the blocked name change it is, the same
    // as when the inventory remembers it, and never created a second time.
    if (found.length === 0 && unit.apiName !== unit.name) found = findByName(live, unit.name, org.id);
    if (found.length === 1) {
      unit.live = found[0]!;
      unit.foundBy = input.intents.project(unit.name) ? 'intent' : 'name';
    } else if (found.length > 1) {
      ambiguous.set(unit.name, found.length);
    }
  };
  for (const unit of projects) findInOrganization(unit, byName.get(unit.organization));

  // 3. The organization list, only when needed: an organization whose id is not confirmed, or a project to create.
  const needsList =
    organizations.some((org) => !org.confirmed && org.policy.suspend === false) ||
    projects.some((unit) => !unit.live && unit.document.spec.ref === undefined && !ambiguous.has(unit.name));
  let organizationsListed = false;
  if (needsList) {
    const listed: OrganizationResponseV1[] = await input.api.listAllOrganizations(call);
    organizationsListed = true;
    for (const org of organizations) if (!org.confirmed) resolveFromList(org, listed);
    await waitForOtherShards(organizations, input, call);
    for (const unit of projects) findInOrganization(unit, byName.get(unit.organization));
  }

  // Refs claimed by a current document: never deleted, whatever else happens below.
  const claimedBy = new Map<string, ProjectUnit>();
  for (const unit of projects) if (unit.live) claimedBy.set(refOf(unit.live), unit);

  // Two manifests must never claim one project (or create two of one name): both are blocked.
  const conflicts = new Map<string, string>();
  const claims = new Map<string, ProjectUnit[]>();
  for (const unit of projects) {
    const key = unit.live ? `ref:${refOf(unit.live)}` : `name:${unit.organization}/${unit.apiName}`;
    claims.set(key, [...(claims.get(key) ?? []), unit]);
  }
  for (const [key, units] of claims) {
    if (units.length < 2) continue;
    const what = key.startsWith('ref:') ? `the live project ${key.slice(4)}` : `the project name \`${units[0]!.apiName}\` in organization \`${units[0]!.organization}\``;
    for (const unit of units) {
      conflicts.set(unit.name, `${units.map((u) => u.name).join(' and ')} both claim ${what}`);
      delete unit.live;
    }
  }

  // Renames: the inventory record of a claimed project moves to the claiming document.
  for (const { name, found } of undeclared) {
    const unit = claimedBy.get(refOf(found));
    if (unit?.live && !conflicts.has(unit.name) && !input.inventory.projects[unit.name]) unit.renamedFrom ??= name;
  }

  return { live, liveByRef, organizations, projects, ambiguous, conflicts, claimedBy, removals: [], vanished: [], handovers: [], organizationsListed };
}

/** Missing organizations that another shard creates: this shard never creates them. */
function awaitedOrganizations(organizations: readonly OrganizationUnit[]): OrganizationUnit[] {
  return organizations.filter((org) => org.createdBy !== undefined && org.id === undefined && org.entry === undefined && !org.policy.suspend);
}

/**
 * Waits (bounded, with a progress line per re-read) for the organizations other shards
 * create; what is still missing afterwards is planned as blocked, naming its owner.
 */
async function waitForOtherShards(organizations: readonly OrganizationUnit[], input: FleetInput, call: { priority: Priority; signal?: AbortSignal }): Promise<void> {
  let missing = awaitedOrganizations(organizations);
  const wait = input.organizationWait;
  if (missing.length === 0) return;
  const describe = (list: readonly OrganizationUnit[]) => list.map((org) => `\`${org.name}\` (created by shard \`${org.createdBy}\`)`).join(', ');
  if (wait && wait.ms > 0) {
    const started = wait.clock.now();
    while (missing.length > 0 && wait.clock.now() - started < wait.ms && !input.signal?.aborted) {
      const waited = wait.clock.now() - started;
      input.log.info(
        { organizations: missing.map((org) => org.name), owners: missing.map((org) => org.createdBy), waitedMs: waited, waitMs: wait.ms },
        `waiting for organization ${describe(missing)}: ${Math.round(waited / 1000)} s of ${Math.round(wait.ms / 1000)} s`,
      );
      await wait.clock.sleep(Math.min(wait.intervalMs, wait.ms - waited), input.signal);
      const listed = await input.api.listAllOrganizations(call);
      for (const org of missing) resolveFromList(org, listed);
      for (const org of missing) if (org.id !== undefined) input.log.info({ organization: org.name, owner: org.createdBy }, `organization \`${org.name}\` is visible now: found, not created`);
      missing = awaitedOrganizations(missing);
    }
  }
  for (const org of missing) {
    org.waitedMs = wait?.ms ?? 0;
    input.log.warn({ organization: org.name, owner: org.createdBy }, `organization \`${org.name}\` is missing or not visible to this shard, and only shard \`${org.createdBy}\` creates it`);
  }
}
