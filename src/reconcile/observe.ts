// Observation of the fleet: one project list, the organization list only when something
// needs it, and the matching of manifests to live organizations and projects.
import type { ManagementApi } from '../api/endpoints.js';
import type { OrganizationResponseV1 } from '../api/types.js';
import type { OrganizationDocument, ProjectDocument } from '../manifests/types.js';
import type { IntentLog } from './intents.js';
import type { Inventory } from './inventory.js';
import { confirmFromProject, organizationUnit, planOrganization, resolveFromList, type OrganizationUnit } from './organizations.js';
import { findByName, matchByRef, planProject, planRemoval, projectUnit, refOf, type LiveProject, type ProjectUnit } from './projects.js';
import type { Logger, PlanEntry } from './types.js';
import type { Priority } from '../api/request.js';

export interface FleetObservation {
  live: LiveProject[];
  organizations: OrganizationUnit[];
  projects: ProjectUnit[];
  /** Entries for inventoried projects whose manifest is gone (delete, orphan note, or blocked). */
  removals: Array<{ name: string; entry: PlanEntry; live: LiveProject }>;
  /** Inventoried projects whose manifest is gone and that are gone from the live list too. */
  vanished: string[];
  organizationsListed: boolean;
}

export interface ObserveInput {
  api: ManagementApi;
  organizationDocuments: OrganizationDocument[];
  /** Active (not suspended, within the pass's selection) Project documents. */
  projectDocuments: ProjectDocument[];
  /** Names of every Project document, suspended ones included: their projects are never removals. */
  declaredProjects: Set<string>;
  /** Limit removals to these names (the pass's selection); undefined: all. */
  selection?: Set<string>;
  inventory: Inventory;
  intents: IntentLog;
  manifestsEmpty: boolean;
  allowEmpty: boolean;
  readPriority: Priority;
  signal?: AbortSignal;
  log: Logger;
}

export async function observeFleet(input: ObserveInput): Promise<FleetObservation> {
  const call = { priority: input.readPriority, ...(input.signal ? { signal: input.signal } : {}) };
  const live = await input.api.listAllProjects(call);

  const organizations = input.organizationDocuments.map((doc) => organizationUnit(doc, input.inventory));
  const byName = new Map(organizations.map((unit) => [unit.name, unit]));
  const projects = input.projectDocuments.map(projectUnit);

  // 1. Projects we know by ref: their organization_id confirms (or corrects) the cached org ids.
  for (const unit of projects) {
    matchByRef(unit, live, unit.document.spec.ref === undefined ? input.inventory.projects[unit.name] : undefined);
    const org = byName.get(unit.organization);
    if (unit.live && org && !org.confirmed) confirmFromProject(org, unit.live.organization_id, unit.live.organization_slug);
  }

  // 2. Projects found by name within a confirmed organization (this covers creation intents too).
  const ambiguous = new Map<string, number>();
  const findInOrganization = (unit: ProjectUnit, org: OrganizationUnit | undefined) => {
    if (unit.live || unit.document.spec.ref !== undefined || !org?.confirmed || org.id === undefined) return;
    const found = findByName(live, unit.apiName, org.id);
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
    for (const unit of projects) findInOrganization(unit, byName.get(unit.organization));
  }

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

  for (const org of organizations) planOrganization(org);
  for (const unit of projects) {
    const org = byName.get(unit.organization);
    const organizationEntry = org?.entry;
    planProject(unit, {
      ...(organizationEntry ? { organizationEntry } : {}),
      organizationMissing: !org || org.id === undefined || org.entry?.action === 'blocked' || org.policy.suspend,
      ...(ambiguous.has(unit.name) ? { ambiguous: ambiguous.get(unit.name)! } : {}),
      ...(conflicts.has(unit.name) ? { conflict: conflicts.get(unit.name)! } : {}),
      ...(!unit.live && input.inventory.projects[unit.name] ? { vanishedRef: input.inventory.projects[unit.name]!.ref } : {}),
    });
  }

  // 4. Inventoried projects whose manifest is gone.
  const removals: FleetObservation['removals'] = [];
  const vanished: string[] = [];
  for (const [name, inventoried] of Object.entries(input.inventory.projects)) {
    if (input.declaredProjects.has(name)) continue;
    if (input.selection && !input.selection.has(name)) continue;
    const found = live.find((p) => refOf(p) === inventoried.ref || p.id === inventoried.ref);
    if (!found) {
      vanished.push(name);
      continue;
    }
    const entry = planRemoval(name, inventoried, found, { manifestsEmpty: input.manifestsEmpty, allowEmpty: input.allowEmpty });
    if (entry) removals.push({ name, entry, live: found });
  }

  return { live, organizations, projects, removals, vanished, organizationsListed };
}
