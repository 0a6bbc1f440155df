// `Project`, the second fleet-level module of the registry, and its lifecycle: find (by ref,
// inventory, or name within the organization: the matching is in observe.ts), create with an
// intent and without ever duplicating, rename (the inventory record alone), pause and restore,
// and delete under the strict rules. The wait until a project is ready is in
// project-readiness.ts; the rest of a project's apply in apply-project.ts.
import { randomBytes } from 'node:crypto';
import { TransientError } from '../../api/errors.js';
import type { ManagementApi } from '../../api/endpoints.js';
import type { V1ProjectWithDatabaseResponse } from '../../api/types.js';
import { sectionsInSpecOrder } from '../../manifests/schema-source.js';
import { API_VERSION, type AnyDocument, type ProjectDocument } from '../../manifests/types.js';
import type { Clock } from '../../util/clock.js';
import { makeEntry } from '../diff.js';
import { rememberSecret } from '../describe-error.js';
import type { IntentLog } from '../intents.js';
import { saveInventory, type InventoryProject } from '../inventory.js';
import { effectivePolicy, type EffectivePolicy } from '../policy.js';
import type { FieldChange, Logger, PlanEntry } from '../types.js';
import type { FleetApplyContext, FleetExportContext, FleetExportDocument, FleetInput, FleetModule, FleetObservation, LiveProject, ProjectUnit } from '../fleet.js';
import { ProjectRefUnknownError } from './common.js';

export type { LiveProject, ProjectUnit } from '../fleet.js';

/** Statuses in which a project is (or is becoming) paused. */
const PAUSED = new Set(['INACTIVE', 'PAUSING', 'PAUSE_FAILED']);

export function projectUnit(document: ProjectDocument): ProjectUnit {
  return {
    name: document.metadata.name,
    document,
    apiName: document.spec.name ?? document.metadata.name,
    organization: document.spec.organization,
    policy: effectivePolicy(document.spec.policy),
  };
}

export function isPausedStatus(status: string | undefined): boolean {
  return status !== undefined && PAUSED.has(status);
}

/** A project whose configuration can be read and written now. */
export function isRunning(status: string | undefined): boolean {
  return status === 'ACTIVE_HEALTHY' || status === 'ACTIVE_UNHEALTHY';
}

/** Finds the live project by an explicit ref or the inventory's ref. */
export function matchByRef(unit: ProjectUnit, live: readonly LiveProject[], inventoried: InventoryProject | undefined): void {
  const ref = unit.document.spec.ref;
  if (ref !== undefined) {
    const found = live.find((p) => p.ref === ref || p.id === ref);
    if (found) {
      unit.live = found;
      unit.foundBy = 'ref';
    }
    return;
  }
  if (inventoried) {
    const found = live.find((p) => p.ref === inventoried.ref || p.id === inventoried.ref);
    if (found) {
      unit.live = found;
      unit.foundBy = 'inventory';
    }
  }
}

/** Live projects of that name in that organization. */
export function findByName(live: readonly LiveProject[], name: string, organizationId: string): LiveProject[] {
  return live.filter((p) => p.name === name && inOrganization(p, organizationId));
}

/** The live project is in the organization of that id (or slug). */
export function inOrganization(project: LiveProject, organizationId: string): boolean {
  return project.organization_id === organizationId || project.organization_slug === organizationId;
}

/**
 * Why the live project found for a document is not the project the document describes
 * (another organization, region or name), or undefined. None of these can be changed
 * through the API, so each blocks the project instead of being written.
 */
export function identityMismatch(
  unit: ProjectUnit,
  organization: { id?: string; confirmed: boolean } | undefined,
): { reason: string; changes: FieldChange[] } | undefined {
  const live = unit.live;
  if (!live) return undefined;
  const spec = unit.document.spec;
  const liveOrganization = live.organization_slug ?? live.organization_id;
  if (organization && (!organization.confirmed || organization.id === undefined || !inOrganization(live, organization.id))) {
    return {
      changes: [{ path: 'organization', before: liveOrganization, after: unit.organization }],
      reason: organization.confirmed && organization.id !== undefined
        ? `the live project ${refOf(live)} is in organization \`${liveOrganization}\`, the manifest declares \`${unit.organization}\` (${organization.id}): a project cannot move between organizations`
        : `the live project ${refOf(live)} is in organization \`${liveOrganization}\`, and the manifest's organization \`${unit.organization}\` is not available: a project cannot move between organizations`,
    };
  }
  if (live.region !== spec.region) {
    return { changes: [{ path: 'region', before: live.region, after: spec.region }], reason: 'the region of an existing project cannot change' };
  }
  // Adopting by spec.ref under another manifest name is fine; a declared or remembered API name must match.
  if (live.name !== unit.apiName && (spec.name !== undefined || unit.foundBy !== 'ref')) {
    const pin = unit.document.source.set;
    if (pin && unit.renamedFrom !== undefined) {
      return {
        changes: [{ path: 'name', before: live.name, after: unit.apiName }],
        // The same words for every project of the set, so the plan shows the change once; the names are in the changes.
        reason: `ProjectSet \`${pin.set}\`: the name template now gives the project of this element another name, and the platform cannot rename a project: blocked, nothing is created or deleted. Restore the name template (or keep the API name with the template's spec.name), or give the element a new key to retire its project by its deletion policy and make a new one`,
      };
    }
    return {
      changes: [{ path: 'name', before: live.name, after: unit.apiName }],
      reason: `the name of an existing project cannot change (the API has no call that renames a project): set spec.name back to \`${live.name}\`, or declare the new project under a new manifest name`,
    };
  }
  return undefined;
}

export function refOf(project: { ref?: string; id: string }): string {
  return project.ref ?? project.id;
}

const source = (document: AnyDocument) => ({ file: document.source.file, line: document.source.line, ...setOf(document) });

/** The inventory's (and a plan entry's) pin of a project a ProjectSet made: its set and element key. */
export function setOf(document: AnyDocument): { set?: { name: string; key: string } } {
  const from = document.source.set;
  return from ? { set: { name: from.set, key: from.key } } : {};
}

/** What the Project module plans of one declared project: its own entry, and its lifecycle entry (pause, restore) when it has one. */
export interface ProjectPlan {
  entry: PlanEntry;
  lifecycle?: PlanEntry;
}

/** The project's own entry (creation or presence) and its pause/restore entry. */
export function planProject(
  unit: ProjectUnit,
  options: {
    organizationEntry?: PlanEntry;
    organizationMissing: boolean;
    /** The declared organization, resolved (undefined when it is suspended: nothing to compare with). */
    organization?: { id?: string; confirmed: boolean };
    ambiguous?: number;
    vanishedRef?: string;
    conflict?: string;
  },
): ProjectPlan {
  const spec = unit.document.spec;
  const observeOnly = unit.policy.management === 'observe';
  const org = options.organizationEntry;
  // An organization that will be created first; under observe it never is, so the project cannot be either.
  const dependsOn = org && org.action === 'create' && !org.observeOnly ? [org.id] : undefined;
  if (options.conflict) {
    return { entry: makeEntry({ kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document), reason: options.conflict }) };
  }
  if (options.ambiguous && options.ambiguous > 1) {
    return {
      entry: makeEntry({
        kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
        reason: `${options.ambiguous} live projects are named \`${unit.apiName}\` in this organization: set spec.ref to adopt one`,
      }),
    };
  }
  if (!unit.live) {
    if (spec.ref !== undefined) {
      return {
        entry: makeEntry({
          kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
          reason: `no live project has ref \`${spec.ref}\` (spec.ref adopts an existing project, it never creates one)`,
        }),
      };
    }
    if (options.organizationMissing && !dependsOn) {
      return {
        entry: makeEntry({
          kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
          reason: org?.observeOnly && org.action === 'create'
            ? `its organization \`${unit.organization}\` is missing and under the observe policy`
            : `its organization \`${unit.organization}\` is not available`,
        }),
      };
    }
    const changes: FieldChange[] = [
      { path: 'name', after: unit.apiName },
      { path: 'organization', after: unit.organization },
      { path: 'region', after: spec.region },
    ];
    if (spec.desired_instance_size !== undefined) changes.push({ path: 'desired_instance_size', after: spec.desired_instance_size });
    changes.push({ path: 'db_pass', sensitive: true });
    const entry = makeEntry({
      kind: 'Project', name: unit.name, action: 'create', changes, observeOnly, source: source(unit.document),
      ...(dependsOn ? { dependsOn } : {}),
      ...(observeOnly
        ? { reason: 'missing; under the observe policy it is not created' }
        : options.vanishedRef
          ? { reason: `the managed project ${options.vanishedRef} is gone from the live list: it is created again` }
          : {}),
    });
    if (spec.paused !== true) return { entry };
    const lifecycle = makeEntry({
      kind: 'ProjectLifecycle', project: unit.name, name: 'paused', action: 'update', observeOnly, target: { paused: true },
      changes: [{ path: 'paused', before: false, after: true }], dependsOn: [entry.id], source: source(unit.document),
    });
    return { entry, lifecycle };
  }
  const live = unit.live;
  const mismatch = identityMismatch(unit, options.organization);
  let entry: PlanEntry;
  if (mismatch) {
    entry = makeEntry({ kind: 'Project', name: unit.name, action: 'blocked', source: source(unit.document), changes: mismatch.changes, reason: mismatch.reason });
  } else if (unit.renamedFrom !== undefined) {
    // Only our record changes: the live project keeps its ref, name and everything in it.
    entry = makeEntry({
      kind: 'Project', name: unit.name, action: 'update', source: source(unit.document),
      changes: [{ path: 'metadata.name', before: unit.renamedFrom, after: unit.name }],
      reason: `renamed from \`${unit.renamedFrom}\` (${refOf(live)}): the inventory record moves to the new name; nothing is created or deleted`,
    });
  } else {
    const reason = unit.foundBy === 'ref' || unit.foundBy === 'name' || unit.foundBy === 'intent' ? `found by ${unit.foundBy === 'intent' ? 'its creation intent' : unit.foundBy} (${refOf(live)})` : undefined;
    entry = makeEntry({ kind: 'Project', name: unit.name, changes: [], source: source(unit.document), ...(reason ? { reason } : {}) });
  }
  if (spec.paused === undefined) return { entry };
  const paused = isPausedStatus(live.status);
  if (paused === spec.paused) return { entry, lifecycle: makeEntry({ kind: 'ProjectLifecycle', project: unit.name, name: 'paused', changes: [], source: source(unit.document) }) };
  const lifecycle = makeEntry({
    kind: 'ProjectLifecycle', project: unit.name, name: 'paused', action: 'update', observeOnly, source: source(unit.document), target: { paused: spec.paused },
    changes: [{ path: 'paused', before: paused, after: spec.paused }],
    reason: spec.paused ? `status ${live.status}: pause` : `status ${live.status}: restore`,
  });
  return { entry, lifecycle };
}

/** A delete entry (or the reason there is none) for an inventoried project whose manifest is gone. */
export function planRemoval(
  name: string,
  inventoried: InventoryProject,
  live: LiveProject | undefined,
  guard: { manifestsEmpty: boolean; allowEmpty: boolean; checkoutClean: boolean },
): PlanEntry | undefined {
  if (!live) return undefined;
  // The file it was last declared in (the line is unknown once the document is gone).
  const withSource = { kind: 'Project' as const, name, ...(inventoried.file ? { source: { file: inventoried.file, line: 1, ...(inventoried.set ? { set: inventoried.set } : {}) } } : {}) };
  const changes: FieldChange[] = [{ path: 'ref', before: refOf(live) }, { path: 'name', before: live.name }];
  // A project a ProjectSet made goes when its element goes (or its key changes), by the same rules.
  const gone = inventoried.set ? `element \`${inventoried.set.key}\` of ProjectSet \`${inventoried.set.name}\` removed` : 'manifest removed';
  if (inventoried.deletion !== 'delete') {
    return { ...makeEntry({ ...withSource, changes: [], reason: `${gone}; deletion policy \`orphan\`: the project is left in place and no longer managed` }), released: true };
  }
  if (guard.manifestsEmpty && !guard.allowEmpty) {
    return makeEntry({ ...withSource, changes, action: 'blocked', reason: 'the manifest set is empty: nothing is deleted without --allow-empty' });
  }
  if (!guard.checkoutClean) {
    return makeEntry({ ...withSource, changes, action: 'blocked', reason: 'the checkout was not read without errors: nothing is deleted' });
  }
  return makeEntry({
    ...withSource, changes, action: 'delete',
    observeOnly: inventoried.management === 'observe',
    reason: inventoried.management === 'observe' ? `${gone}; under the observe policy it is not deleted` : `${gone}; deletion policy \`delete\``,
  });
}

export interface CreateContext {
  api: ManagementApi;
  intents: IntentLog;
  clock: Clock;
  log: Logger;
  resolveDbPass: () => Promise<string | undefined>;
  /**
   * The list read right before the POST (default: a list of its own). A pass shares one read
   * among the creates that ask for it before it is sent (`freshListReader`).
   */
  listProjects?: () => Promise<LiveProject[]>;
  signal?: AbortSignal;
}

/**
 * One list read shared by the creates of a pass: a create that asks joins the read not yet sent,
 * or starts the next one; it never uses a read sent before it asked. So every create still sees
 * the live list as it stands after its own decision to create and before its POST, as a read of
 * its own would, and a pass that creates N projects at once reads the list once instead of N
 * times (the read is sent once the creates asking in the same turn of the event loop have asked).
 */
export function freshListReader(read: () => Promise<LiveProject[]>): () => Promise<LiveProject[]> {
  let next: Promise<LiveProject[]> | undefined;
  return () => {
    if (!next) {
      const pending: Promise<LiveProject[]> = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        // From here on, a create that asks waits for the next read.
        next = undefined;
        return read();
      });
      next = pending;
    }
    return next;
  };
}

/** Attempts of a create whose answers keep getting lost before giving up for this pass. */
const CREATE_ATTEMPTS = 3;

/**
 * Creates the project exactly once. The list is read right before the POST, and a project with
 * this name in this organization is adopted instead: another process (an overlapping run with
 * its own state directory) may have created it since this pass observed the fleet. The intent
 * is on disk before the POST is sent; after a transient failure the list is read again and a
 * project of that name is adopted instead of sending another POST. Another POST is sent only
 * when the list proves the first one did not create anything.
 */
export async function createProject(unit: ProjectUnit, organizationId: string, context: CreateContext): Promise<LiveProject | { ref: string; status: string }> {
  const spec = unit.document.spec;
  const dbPass = (await context.resolveDbPass()) ?? generatedPassword();
  const existing = findByName(await (context.listProjects ?? (() => listWithRetry(context)))(), unit.apiName, organizationId);
  if (existing.length >= 1) {
    context.log.warn({ project: unit.name, ref: refOf(existing[0]!) }, 'a project of this name appeared in the organization since it was observed: adopted instead of created');
    return existing[0]!;
  }
  if (spec.db_pass === undefined) context.log.info({ project: unit.name }, 'no db_pass reference in the manifest: a random database password was generated and not kept');
  await context.intents.recordProject(unit.name, { name: unit.apiName, organizationId, region: spec.region, sentAt: context.clock.now() });
  let lastError: unknown;
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    try {
      const created = await context.api.createAProject(
        {
          name: unit.apiName,
          organization_id: organizationId,
          region: spec.region,
          db_pass: dbPass,
          ...(spec.desired_instance_size !== undefined ? { desired_instance_size: spec.desired_instance_size } : {}),
        },
        { priority: 'write', project: unit.name, ...(context.signal ? { signal: context.signal } : {}) },
      );
      return { ref: refOf(created), status: created.status };
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      lastError = error;
      context.log.warn({ project: unit.name, attempt, error: error.message }, 'project create failed in transit: listing projects before anything else');
      const listed = await listWithRetry(context);
      const found = findByName(listed, unit.apiName, organizationId);
      if (found.length >= 1) {
        context.log.info({ project: unit.name, ref: refOf(found[0]!) }, 'adopted the project the lost create made');
        return found[0]!;
      }
      await context.clock.sleep(backoff(attempt), context.signal);
    }
  }
  throw lastError;
}

async function listWithRetry(context: Pick<CreateContext, 'api' | 'clock' | 'signal'>): Promise<LiveProject[]> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    try {
      return await context.api.listAllProjects({ priority: 'write', ...(context.signal ? { signal: context.signal } : {}) });
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      lastError = error;
      await context.clock.sleep(backoff(attempt), context.signal);
    }
  }
  throw lastError;
}

function backoff(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** (attempt - 1));
}

/** A database password for a project whose manifest names none (used once, never kept). */
export function generatedPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** Pauses or restores; returns when the request was accepted (the wait follows separately). */
export async function setPaused(api: ManagementApi, name: string, ref: string, paused: boolean, signal?: AbortSignal): Promise<void> {
  const call = { priority: 'write' as const, project: name, ...(signal ? { signal } : {}) };
  if (paused) await api.pauseAProject(ref, call);
  else await api.restoreAProject(ref, call);
}

/** The pass's Project units, by manifest name (names are unique: validation rejects duplicates). */
function unitNamed(fleet: FleetObservation, name: string): ProjectUnit {
  const unit = fleet.projects.find((candidate) => candidate.name === name);
  if (!unit) throw new Error(`no declared project is named \`${name}\``);
  return unit;
}

export const projectModule: FleetModule<'Project', 'Project' | 'ProjectLifecycle'> = {
  kind: 'Project',
  document: 'Project',
  // The lifecycle (pause, restore) entries are planned here and applied by the project's own
  // apply (apply-project.ts), around its configuration.
  produces: ['Project', 'ProjectLifecycle'],
  plan(fleet, input) {
    const byName = new Map(fleet.organizations.map((unit) => [unit.name, unit]));
    for (const unit of fleet.projects) {
      const org = byName.get(unit.organization);
      const organizationEntry = org?.entry;
      const planned = planProject(unit, {
        ...(organizationEntry ? { organizationEntry } : {}),
        organizationMissing: !org || org.id === undefined || org.entry?.action === 'blocked' || org.policy.suspend,
        ...(org ? { organization: { ...(org.id !== undefined ? { id: org.id } : {}), confirmed: org.confirmed } } : {}),
        ...(fleet.ambiguous.has(unit.name) ? { ambiguous: fleet.ambiguous.get(unit.name)! } : {}),
        ...(fleet.conflicts.has(unit.name) ? { conflict: fleet.conflicts.get(unit.name)! } : {}),
        ...(!unit.live && input.inventory.projects[unit.name] ? { vanishedRef: input.inventory.projects[unit.name]!.ref } : {}),
      });
      // In a sharded fleet, a live project found without a record of this shard is adopted
      // here (a project moved from another shard, which hands its record over).
      if (input.shard && unit.live && planned.entry.action === 'noop' && !input.inventory.projects[unit.name] && unit.renamedFrom === undefined && (unit.foundBy === 'name' || unit.foundBy === 'ref')) {
        planned.entry.reason = `adopted by shard \`${input.shard.name}\` (found by ${unit.foundBy}, ${refOf(unit.live)}): recorded in this shard's inventory; nothing is created`;
      }
      // An element whose key changed while its project's name did not: the new key takes the project over.
      const pinned = input.inventory.projects[unit.name]?.set;
      const pin = unit.document.source.set;
      if (pin && pinned && pinned.name === pin.set && pinned.key !== pin.key && planned.entry.action === 'noop') {
        planned.entry.reason = `ProjectSet \`${pin.set}\`: the element's key changed from \`${pinned.key}\` to \`${pin.key}\` and its project's name did not: the project is pinned to the new key; nothing is created or deleted`;
      }
      // The unit is the pass's record of one project: its apply and its record read what was planned.
      unit.entry = planned.entry;
      if (planned.lifecycle) unit.lifecycle = planned.lifecycle;
    }
    const { removals, vanished, handovers } = planRemovals(fleet, input);
    fleet.removals = removals;
    fleet.vanished = vanished;
    fleet.handovers = handovers;
    return [...fleet.projects.map((unit) => unit.entry!), ...handovers.map((handover) => handover.entry), ...removals.map((removal) => removal.entry)];
  },
  // Renames go before any project's own changes: only the inventory record moves.
  leading(fleet) {
    return fleet.projects.filter((unit) => unit.renamedFrom !== undefined && unit.entry?.action === 'update').map((unit) => unit.entry!);
  },
  // Handovers (only this shard's record goes), then deletions, each only from the inventory and only under its recorded policy.
  trailing(fleet) {
    return [...fleet.handovers.map((handover) => handover.entry), ...fleet.removals.map((removal) => removal.entry)];
  },
  async apply(entry, ctx) {
    if (entry.kind === 'ProjectLifecycle') {
      const name = entry.project!;
      const ref = ctx.projectRefs.get(name);
      if (!ref) throw new ProjectRefUnknownError(name);
      await setPaused(ctx.apiFor(name), name, ref, entry.target?.paused === true, ctx.signal);
      return;
    }
    if (entry.action === 'create') return create(unitNamed(ctx.fleet, entry.name), ctx);
    const handover = ctx.fleet.handovers.find((candidate) => candidate.entry === entry);
    if (handover) {
      // The new owner adopts the project; this shard forgets it and writes nothing to it.
      const ref = ctx.inventory.projects[handover.name]?.ref;
      delete ctx.inventory.projects[handover.name];
      await saveInventory(ctx.state, ctx.inventory, ctx.clock.now());
      ctx.log.info({ project: handover.name, ...(ref ? { ref } : {}), shard: handover.shard }, `handed the project over to shard \`${handover.shard}\`: its inventory record is dropped here, the live project is not touched`);
      return;
    }
    if (entry.action === 'update') {
      // A rename: the live project stays as it is; only its inventory record moves.
      const unit = unitNamed(ctx.fleet, entry.name);
      const from = unit.renamedFrom!;
      const record = ctx.inventory.projects[from];
      if (record) ctx.inventory.projects[unit.name] = { ...record, file: unit.document.source.file };
      delete ctx.inventory.projects[from];
      await saveInventory(ctx.state, ctx.inventory, ctx.clock.now());
      return;
    }
    const removal = ctx.fleet.removals.find((candidate) => candidate.entry === entry) ?? ctx.fleet.removals.find((candidate) => candidate.name === entry.name);
    if (!removal) throw new Error(`no inventoried project \`${entry.name}\` is to be deleted`);
    await ctx.api.deleteAProject(refOf(removal.live), { priority: 'write', project: removal.name });
    delete ctx.inventory.projects[removal.name];
  },
  record: recordProjects,
  exportDocuments: exportProjects,
};

/**
 * Inventoried projects whose manifest is gone: a removal entry each (delete, orphan note, or
 * blocked) with its live project, the names of those gone from the live list too, and, in a
 * sharded fleet, the handovers of those another shard's document now declares. A project a
 * current document still claims (by its live match, its spec.ref, or, for a document not
 * matched this pass (suspended, outside the selection, or to be created), its API name) is never
 * deleted.
 */
function planRemovals(fleet: FleetObservation, input: FleetInput): Pick<FleetObservation, 'removals' | 'vanished' | 'handovers'> {
  const declaredNames = new Set(input.declaredDocuments.map((d) => d.metadata.name));
  const matched = new Set([...fleet.claimedBy.values()].map((unit) => unit.name));
  const removals: FleetObservation['removals'] = [];
  const vanished: string[] = [];
  const handovers: FleetObservation['handovers'] = [];
  const elsewhere = input.shard?.elsewhere ?? [];
  {
    for (const [name, inventoried] of Object.entries(input.inventory.projects)) {
      if (declaredNames.has(name)) continue;
      if (input.selection && !input.selection.has(name)) continue;
      const found = fleet.liveByRef.get(inventoried.ref);
      // Ownership is a property of the whole checkout: a project another shard's document now
      // declares (same manifest name, its spec.ref, or its name in the same organization) is
      // handed over to that shard, never removed.
      const taker = elsewhere.find(({ document }) => document.metadata.name === name)
        ?? (found ? elsewhere.find(({ document }) => document.spec.ref === refOf(found) || document.spec.ref === found.id) : undefined)
        ?? elsewhere.find(({ document }) => document.spec.ref === undefined && document.spec.organization === inventoried.organization && (document.spec.name ?? document.metadata.name) === (found?.name ?? inventoried.name));
      if (taker && input.shard) {
        const ref = found ? refOf(found) : inventoried.ref;
        handovers.push({
          name,
          shard: taker.shard,
          entry: makeEntry({
            kind: 'Project', name, action: 'update', ...(inventoried.file ? { source: { file: inventoried.file, line: 1 } } : {}),
            changes: [{ path: 'shard', before: input.shard.name, after: taker.shard }],
            reason: `handed over to shard \`${taker.shard}\`, which now owns \`${taker.document.metadata.name}\` (${input.shard.mapFile}): this shard drops its inventory record; the live project ${ref} is not touched, nothing is created or deleted`,
          }),
        });
        continue;
      }
      if (!found) {
        vanished.push(name);
        continue;
      }
      const withSource = { kind: 'Project' as const, name, changes: [], ...(inventoried.file ? { source: { file: inventoried.file, line: 1 } } : {}) };
      const claimant = fleet.claimedBy.get(refOf(found));
      if (claimant) {
        // Renamed: the claimant's entry moves the record. A second stale record of the same project is dropped.
        if (claimant.renamedFrom === name && claimant.entry?.action === 'update') continue;
        const kept = claimant.renamedFrom === name || fleet.conflicts.has(claimant.name);
        removals.push({
          name, live: found, keep: kept,
          entry: makeEntry({
            ...withSource,
            reason: kept
              ? `its project ${refOf(found)} is claimed by \`${claimant.name}\`, whose entry cannot be applied: never deleted, the record is kept`
              : `its project ${refOf(found)} is managed as \`${claimant.name}\`: never deleted, this older record is dropped`,
          }),
        });
        continue;
      }
      const declaring = input.declaredDocuments.find(
        (d) => d.spec.ref === refOf(found) || d.spec.ref === found.id || (d.spec.ref === undefined && !matched.has(d.metadata.name) && (d.spec.name ?? d.metadata.name) === found.name),
      );
      if (declaring) {
        removals.push({
          name, live: found, keep: true,
          entry: makeEntry({ ...withSource, reason: `\`${declaring.metadata.name}\` still declares its project ${refOf(found)}: never deleted, the record is kept` }),
        });
        continue;
      }
      // A document of another shard with the project's name in another organization is not
      // that project, but a name claimed anywhere in the checkout is never deleted either.
      const named = elsewhere.find(({ document }) => document.spec.ref === undefined && (document.spec.name ?? document.metadata.name) === found.name);
      if (named) {
        removals.push({
          name, live: found, keep: true,
          entry: makeEntry({ ...withSource, reason: `\`${named.document.metadata.name}\` of shard \`${named.shard}\` declares a project named \`${found.name}\`: ${refOf(found)} is never deleted, the record is kept` }),
        });
        continue;
      }
      const entry = planRemoval(name, inventoried, found, { manifestsEmpty: input.manifestsEmpty, allowEmpty: input.allowEmpty, checkoutClean: input.checkoutClean });
      if (entry) removals.push({ name, entry, live: found });
    }
  }
  return { removals, vanished, handovers };
}

/**
 * The labels a record keeps: the document's, once the project was applied with them; while the
 * rollout holds a change of the project, the labels it was last applied with (a commit that
 * drops a label with the held change must not take the change out of the rule on a later pass).
 */
function labelsToRecord(unit: ProjectUnit, previous: InventoryProject | undefined, ctx: FleetApplyContext): Record<string, string> {
  if (ctx.held?.has(unit.name) && previous?.labels) return previous.labels;
  return { ...(unit.document.metadata.labels ?? {}) };
}

/**
 * Records each project found or created (a project blocked over its identity keeps the record it
 * has, with the manifest's policies and file), clears the intent of one found by name or by its
 * intent, and drops the records of projects no longer managed and of vanished ones.
 */
async function recordProjects(ctx: FleetApplyContext, now: number): Promise<void> {
  const { fleet, inventory, intents, projectRefs } = ctx;
  for (const unit of fleet.projects) {
    const ref = projectRefs.get(unit.name);
    const org = fleet.organizations.find((o) => o.name === unit.organization);
    if (!ref || unit.entry?.action === 'blocked' && !unit.live) continue;
    const previous = inventory.projects[unit.name];
    if (unit.entry?.action === 'blocked') {
      // A project whose identity is in question is not adopted; a record it has keeps its
      // identity (ref, name, organization) and takes the manifest's policies.
      if (previous) {
        inventory.projects[unit.name] = { ...previous, deletion: unit.policy.deletion, management: unit.policy.management, file: unit.document.source.file, labels: labelsToRecord(unit, previous, ctx) };
      }
      continue;
    }
    if (!previous && unit.live && ctx.shard !== undefined && unit.renamedFrom === undefined && (unit.foundBy === 'name' || unit.foundBy === 'ref')) {
      ctx.log.info({ project: unit.name, ref, shard: ctx.shard }, `adopted the project into the inventory of shard \`${ctx.shard}\``);
    }
    inventory.projects[unit.name] = {
      ref,
      name: unit.live?.name ?? unit.apiName,
      organization: unit.organization,
      organizationId: unit.live?.organization_id ?? org?.id ?? previous?.organizationId ?? '',
      deletion: unit.policy.deletion,
      management: unit.policy.management,
      file: unit.document.source.file,
      labels: labelsToRecord(unit, previous, ctx),
      origin: previous?.origin ?? (unit.entry?.action === 'create' || unit.foundBy === 'intent' ? 'created' : 'adopted'),
      since: previous?.since ?? now,
      ...setOf(unit.document),
    };
    if (unit.foundBy === 'intent' || unit.foundBy === 'name') await intents.clearProject(unit.name);
  }
  for (const removal of fleet.removals) {
    // Orphaned (or an older record of a project managed under another name): no longer managed here.
    if (removal.entry.action === 'noop' && !removal.keep) delete inventory.projects[removal.name];
  }
  for (const name of fleet.vanished) delete inventory.projects[name];
}

/** One document per selected live project, adopted by `spec.ref`, with the configuration the service serves. */
async function* exportProjects(ctx: FleetExportContext): AsyncIterable<FleetExportDocument> {
  for (const project of ctx.projects) {
    const name = ctx.projectNames.get(project.ref)!;
    const org = ctx.organizations.find((o) => o.id === project.organization_id || o.slug === project.organization_slug);
    const organization = org && ctx.organizationNames.get(org.id);
    if (organization === undefined) {
      ctx.log.warn({ project: project.ref }, 'project skipped: its organization is not visible to this token');
      continue;
    }
    const spec = await exportedSpec(project, name, organization, ctx);
    yield {
      document: { apiVersion: API_VERSION, kind: 'Project', metadata: { name }, spec },
      project: { ref: project.ref, name, status: project.status, state: readability(project) },
    };
  }
}

/** Statuses in which the service answers configuration and sub-resource reads. */
const READABLE_STATUSES: ReadonlySet<string> = new Set(['ACTIVE_HEALTHY', 'ACTIVE_UNHEALTHY']);
/** Paused projects are adopted as paused (`spec.paused`); their configuration cannot be read either. */
const PAUSED_STATUSES: ReadonlySet<string> = new Set(['INACTIVE', 'PAUSING']);

/** How a project's status decides what can be exported of it. */
function readability(project: LiveProject): 'readable' | 'paused' | 'unreadable' {
  if (READABLE_STATUSES.has(project.status)) return 'readable';
  if (PAUSED_STATUSES.has(project.status)) return 'paused';
  return 'unreadable';
}

async function exportedSpec(project: LiveProject, name: string, organization: string, ctx: FleetExportContext): Promise<Record<string, unknown>> {
  const ref = project.ref;
  const spec: Record<string, unknown> = { organization, ref, region: project.region };
  if (project.name !== name) spec.name = project.name;
  const state = readability(project);
  if (state === 'paused') {
    // A paused project's configuration cannot be read: adopt it as paused, add the sections after a restore.
    spec.paused = true;
    return spec;
  }
  // Nor can one that is not running: adopt it by ref alone, export again once it is healthy.
  if (state === 'unreadable') return spec;
  const contextFor = ctx.sectionContexts(project, name);
  for (const section of sectionsInSpecOrder(ctx.sections)) {
    const value = await section.export(contextFor(section.key));
    if (value !== undefined) spec[section.key] = value;
  }
  return spec;
}

/** The list read each pass's creates share (one per apply context, i.e. per pass). */
const createLists = new WeakMap<FleetApplyContext, () => Promise<LiveProject[]>>();

function createListOf(ctx: FleetApplyContext): () => Promise<LiveProject[]> {
  let reader = createLists.get(ctx);
  if (!reader) {
    reader = freshListReader(() => listWithRetry({ api: ctx.api, clock: ctx.clock, ...(ctx.signal ? { signal: ctx.signal } : {}) }));
    createLists.set(ctx, reader);
  }
  return reader;
}

/** Creates the project (exactly once) and records it in the inventory before anything else can fail. */
async function create(unit: ProjectUnit, ctx: FleetApplyContext): Promise<void> {
  const org = ctx.fleet.organizations.find((candidate) => candidate.name === unit.organization);
  const organizationId = org?.id;
  if (organizationId === undefined) throw new Error(`organization \`${unit.organization}\` has no id`);
  const dbPass = unit.document.spec.db_pass;
  const created = await createProject(unit, organizationId, {
    api: ctx.apiFor(unit.name),
    intents: ctx.intents,
    clock: ctx.clock,
    log: ctx.log,
    // Generated here rather than in createProject so that the pass knows it and scrubs it.
    resolveDbPass: async () => {
      const value = dbPass === undefined ? generatedPassword() : await ctx.secrets.resolve(dbPass, unit.document);
      rememberSecret(value);
      return value;
    },
    listProjects: createListOf(ctx),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const ref = refOf(created as { ref?: string; id: string });
  ctx.projectRefs.set(unit.name, ref);
  // Recorded before anything else can fail: the project is ours from now on.
  ctx.inventory.projects[unit.name] = {
    ref,
    name: unit.apiName,
    organization: unit.organization,
    organizationId,
    deletion: unit.policy.deletion,
    management: unit.policy.management,
    file: unit.document.source.file,
    labels: { ...(unit.document.metadata.labels ?? {}) },
    origin: 'created',
    since: ctx.clock.now(),
    ...setOf(unit.document),
  };
  ctx.inventory.organizations[org!.name] = { id: organizationId, name: org!.name };
  await saveInventory(ctx.state, ctx.inventory, ctx.clock.now());
  await ctx.intents.clearProject(unit.name);
  unit.created = { ref, status: (created as { status?: string }).status ?? 'COMING_UP' };
}
