// Project lifecycle: find (by ref, inventory, or name within the organization), create with an
// intent and without ever duplicating, wait until the project and the services its
// configuration needs are healthy, pause and restore, and delete under the strict rules.
import { randomBytes } from 'node:crypto';
import { TransientError } from '../api/errors.js';
import type { ManagementApi } from '../api/endpoints.js';
import type { V1ProjectWithDatabaseResponse } from '../api/types.js';
import type { AnyDocument, ProjectDocument } from '../manifests/types.js';
import type { Clock } from '../util/clock.js';
import { formatElapsed, progressGate } from '../util/progress.js';
import { makeEntry } from './diff.js';
import type { IntentLog } from './intents.js';
import type { InventoryProject } from './inventory.js';
import type { ConfigSection } from './kinds/config/section.js';
import { effectivePolicy, type EffectivePolicy } from './policy.js';
import { CONFIG_SECTIONS } from './registry.js';
import type { FieldChange, Logger, PlanEntry } from './types.js';

export type LiveProject = V1ProjectWithDatabaseResponse;

/** Statuses in which a project is (or is becoming) paused. */
const PAUSED = new Set(['INACTIVE', 'PAUSING', 'PAUSE_FAILED']);
/** Statuses from which a project will not come up by waiting. */
const TERMINAL = new Set(['INIT_FAILED', 'REMOVED', 'RESTORE_FAILED', 'PAUSE_FAILED', 'GOING_DOWN']);

export interface ProjectUnit {
  /** Manifest name. */
  name: string;
  document: ProjectDocument;
  /** Name in the API. */
  apiName: string;
  organization: string;
  policy: EffectivePolicy;
  live?: LiveProject;
  /** How the live project was found. */
  foundBy?: 'ref' | 'inventory' | 'intent' | 'name';
  /** The inventory record (manifest name) of the same live project under a name no document declares any more. */
  renamedFrom?: string;
  entry?: PlanEntry;
  lifecycle?: PlanEntry;
}

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

const source = (document: AnyDocument) => ({ file: document.source.file, line: document.source.line });

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
): void {
  const spec = unit.document.spec;
  const observeOnly = unit.policy.management === 'observe';
  const org = options.organizationEntry;
  // An organization that will be created first; under observe it never is, so the project cannot be either.
  const dependsOn = org && org.action === 'create' && !org.observeOnly ? [org.id] : undefined;
  if (options.conflict) {
    unit.entry = makeEntry({ kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document), reason: options.conflict });
    return;
  }
  if (options.ambiguous && options.ambiguous > 1) {
    unit.entry = makeEntry({
      kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
      reason: `${options.ambiguous} live projects are named \`${unit.apiName}\` in this organization: set spec.ref to adopt one`,
    });
    return;
  }
  if (!unit.live) {
    if (spec.ref !== undefined) {
      unit.entry = makeEntry({
        kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
        reason: `no live project has ref \`${spec.ref}\` (spec.ref adopts an existing project, it never creates one)`,
      });
      return;
    }
    if (options.organizationMissing && !dependsOn) {
      unit.entry = makeEntry({
        kind: 'Project', name: unit.name, changes: [], action: 'blocked', source: source(unit.document),
        reason: org?.observeOnly && org.action === 'create'
          ? `its organization \`${unit.organization}\` is missing and under the observe policy`
          : `its organization \`${unit.organization}\` is not available`,
      });
      return;
    }
    const changes: FieldChange[] = [
      { path: 'name', after: unit.apiName },
      { path: 'organization', after: unit.organization },
      { path: 'region', after: spec.region },
    ];
    if (spec.desired_instance_size !== undefined) changes.push({ path: 'desired_instance_size', after: spec.desired_instance_size });
    changes.push({ path: 'db_pass', sensitive: true });
    unit.entry = makeEntry({
      kind: 'Project', name: unit.name, action: 'create', changes, observeOnly, source: source(unit.document),
      ...(dependsOn ? { dependsOn } : {}),
      ...(observeOnly
        ? { reason: 'missing; under the observe policy it is not created' }
        : options.vanishedRef
          ? { reason: `the managed project ${options.vanishedRef} is gone from the live list: it is created again` }
          : {}),
    });
    if (spec.paused === true) {
      unit.lifecycle = makeEntry({
        kind: 'ProjectLifecycle', project: unit.name, name: 'paused', action: 'update', observeOnly,
        changes: [{ path: 'paused', before: false, after: true }], dependsOn: [unit.entry.id], source: source(unit.document),
      });
    }
    return;
  }
  const live = unit.live;
  const mismatch = identityMismatch(unit, options.organization);
  if (mismatch) {
    unit.entry = makeEntry({ kind: 'Project', name: unit.name, action: 'blocked', source: source(unit.document), changes: mismatch.changes, reason: mismatch.reason });
  } else if (unit.renamedFrom !== undefined) {
    // Only our record changes: the live project keeps its ref, name and everything in it.
    unit.entry = makeEntry({
      kind: 'Project', name: unit.name, action: 'update', source: source(unit.document),
      changes: [{ path: 'metadata.name', before: unit.renamedFrom, after: unit.name }],
      reason: `renamed from \`${unit.renamedFrom}\` (${refOf(live)}): the inventory record moves to the new name; nothing is created or deleted`,
    });
  } else {
    const reason = unit.foundBy === 'ref' || unit.foundBy === 'name' || unit.foundBy === 'intent' ? `found by ${unit.foundBy === 'intent' ? 'its creation intent' : unit.foundBy} (${refOf(live)})` : undefined;
    unit.entry = makeEntry({ kind: 'Project', name: unit.name, changes: [], source: source(unit.document), ...(reason ? { reason } : {}) });
  }
  if (spec.paused !== undefined) {
    const paused = isPausedStatus(live.status);
    if (paused !== spec.paused) {
      unit.lifecycle = makeEntry({
        kind: 'ProjectLifecycle', project: unit.name, name: 'paused', action: 'update', observeOnly, source: source(unit.document),
        changes: [{ path: 'paused', before: paused, after: spec.paused }],
        reason: spec.paused ? `status ${live.status}: pause` : `status ${live.status}: restore`,
      });
    } else {
      unit.lifecycle = makeEntry({ kind: 'ProjectLifecycle', project: unit.name, name: 'paused', changes: [], source: source(unit.document) });
    }
  }
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
  const withSource = { kind: 'Project' as const, name, ...(inventoried.file ? { source: { file: inventoried.file, line: 1 } } : {}) };
  const changes: FieldChange[] = [{ path: 'ref', before: refOf(live) }, { path: 'name', before: live.name }];
  if (inventoried.deletion !== 'delete') {
    return makeEntry({ ...withSource, changes: [], reason: 'manifest removed; deletion policy `orphan`: the project is left in place and no longer managed' });
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
    reason: inventoried.management === 'observe' ? 'manifest removed; under the observe policy it is not deleted' : 'manifest removed; deletion policy `delete`',
  });
}

export interface CreateContext {
  api: ManagementApi;
  intents: IntentLog;
  clock: Clock;
  log: Logger;
  resolveDbPass: () => Promise<string | undefined>;
  signal?: AbortSignal;
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
  const existing = findByName(await listWithRetry(context), unit.apiName, organizationId);
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

async function listWithRetry(context: CreateContext): Promise<LiveProject[]> {
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

export class ProjectNotReadyError extends Error {
  constructor(readonly project: string, readonly status: string, detail: string) {
    super(`project ${project} is not ready (status ${status}): ${detail}`);
    this.name = 'ProjectNotReadyError';
  }
}

/**
 * Services whose health the configuration of this project needs before it is written: the
 * database, each declared section's `services`, and auth for SSO providers.
 */
export function servicesNeeded(document: ProjectDocument, documents: readonly AnyDocument[], sections: readonly ConfigSection[] = CONFIG_SECTIONS): string[] {
  const spec = document.spec as unknown as Record<string, unknown>;
  const services = new Set<string>(['db']);
  for (const section of sections) if (spec[section.key]) for (const service of section.services) services.add(service);
  const mine = documents.filter((d) => d.kind !== 'Project' && d.kind !== 'Organization' && (d.spec as { project?: string }).project === document.metadata.name);
  if (mine.some((d) => d.kind === 'SsoProvider')) services.add('auth');
  return [...services];
}

export interface WaitOptions {
  api: ManagementApi;
  clock: Clock;
  log: Logger;
  signal?: AbortSignal;
  /** Give up after this long (clock time). */
  timeoutMs?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export interface Readiness {
  status: string;
  health: Record<string, boolean>;
}

/**
 * Waits, polling with backoff on the injected clock at `verify` priority, until the project
 * is ACTIVE_HEALTHY and every needed service reports healthy: ACTIVE_HEALTHY alone does not
 * mean a configuration write will succeed.
 */
export async function waitUntilReady(name: string, ref: string, services: readonly string[], options: WaitOptions): Promise<Readiness> {
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  const started = options.clock.now();
  let delay = options.initialDelayMs ?? 500;
  const maxDelay = options.maxDelayMs ?? 15_000;
  const call = { priority: 'verify' as const, project: name, ...(options.signal ? { signal: options.signal } : {}) };
  let status = 'UNKNOWN';
  let health: Record<string, boolean> = {};
  // A new project takes minutes: say what it waits for, at most every few seconds of clock time.
  const progressDue = progressGate(options.clock);
  const progress = (waitingFor: string, fields: Record<string, unknown>) => {
    if (!progressDue()) return;
    const elapsedS = Math.round((options.clock.now() - started) / 1000);
    options.log.info({ wait: 'project', project: name, elapsedS, ...fields }, `waiting for project ${name} ${waitingFor} (${formatElapsed(elapsedS)} so far)`);
  };
  const pause = async () => {
    if (options.clock.now() - started + delay > timeoutMs) {
      throw new ProjectNotReadyError(name, status, `not ready after ${Math.round(timeoutMs / 1000)}s`);
    }
    await options.clock.sleep(delay, options.signal);
    delay = Math.min(maxDelay, Math.round(delay * 1.6));
  };
  for (;;) {
    try {
      status = (await options.api.getProject(ref, call)).status;
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      await pause();
      continue;
    }
    if (status === 'ACTIVE_HEALTHY') break;
    if (TERMINAL.has(status)) throw new ProjectNotReadyError(name, status, 'the project will not come up by waiting');
    progress(`to become ACTIVE_HEALTHY: ${status}`, { status });
    await pause();
  }
  for (;;) {
    try {
      const items = await options.api.getServicesHealth(ref, { ...call, query: { services: [...services] } });
      health = Object.fromEntries(items.map((item) => [item.name, item.healthy === true || item.status === 'ACTIVE_HEALTHY']));
      if (services.every((service) => health[service] === true)) return { status, health };
      const unhealthy = services.filter((service) => health[service] !== true);
      progress(`to report its services healthy: ${unhealthy.join(', ')} not yet`, { services: unhealthy });
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
    }
    await pause();
  }
}

/** Pauses or restores; returns when the request was accepted (the wait follows separately). */
export async function setPaused(api: ManagementApi, name: string, ref: string, paused: boolean, signal?: AbortSignal): Promise<void> {
  const call = { priority: 'write' as const, project: name, ...(signal ? { signal } : {}) };
  if (paused) await api.pauseAProject(ref, call);
  else await api.restoreAProject(ref, call);
}

/** Waits until a pause has settled (INACTIVE). */
export async function waitUntilPaused(name: string, ref: string, options: WaitOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  const started = options.clock.now();
  let delay = options.initialDelayMs ?? 500;
  const call = { priority: 'verify' as const, project: name, ...(options.signal ? { signal: options.signal } : {}) };
  for (;;) {
    let status = 'UNKNOWN';
    try {
      status = (await options.api.getProject(ref, call)).status;
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
    }
    if (status === 'INACTIVE') return status;
    if (status === 'PAUSE_FAILED') throw new ProjectNotReadyError(name, status, 'the pause failed');
    if (options.clock.now() - started + delay > timeoutMs) throw new ProjectNotReadyError(name, status, 'not paused in time');
    await options.clock.sleep(delay, options.signal);
    delay = Math.min(options.maxDelayMs ?? 15_000, Math.round(delay * 1.6));
  }
}
