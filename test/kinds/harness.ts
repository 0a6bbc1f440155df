// Drives the registry's kind modules against the emulator over real HTTP with the real client,
// through the engine's own steps (test/support/project-pass.ts: every managed kind of every
// project planned, then applied in registry order with the pass's outcomes and read-back), so
// each kind's behaviour is tested as a pass runs it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import type { ManagementApi } from '../../src/api/endpoints.js';
import { resolveSecretRef } from '../../src/manifests/refs.js';
import type { AnyDocument, ManifestKind, ProjectDocument, ProjectSpec, SecretRef } from '../../src/manifests/types.js';
import { openStateStore } from '../../src/reconcile/state.js';
import { PassState } from '../../src/reconcile/pass-state.js';
import type { ApplyOutcome, KindContext, KindModule, Logger, PlanEntry, ProjectScope } from '../../src/reconcile/types.js';
import { KIND_MODULES, SUB_RESOURCES } from '../../src/reconcile/registry.js';
import { systemClock } from '../../src/util/clock.js';
import { applyKinds, planKinds } from '../support/project-pass.js';

/** The registry's sub-resource kinds, in apply order. */
export const SUB_RESOURCE_KINDS: readonly KindModule[] = SUB_RESOURCES;

/** Collects log lines so tests can search them for canaries. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (obj: object, msg: string) => {
    lines.push(JSON.stringify({ level, ...obj, msg }));
  };
  return { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  api: ManagementApi;
  /** Manifests root (function sources go below it). */
  root: string;
  stateDir: string;
  log: ReturnType<typeof memoryLogger>;
  env: NodeJS.ProcessEnv;
  org: string;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 600, windowMs: 1000 } });
  const root = await mkdtemp(join(tmpdir(), 'kinds-'));
  const stateDir = join(root, '.state');
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 500, windowMs: 1000 }, stateDir });
  const orgs = await client.api.listAllOrganizations();
  const org = orgs[0]?.id ?? (await client.api.createAnOrganization({ name: 'kinds-test' })).id;
  return {
    emulator,
    client,
    api: client.api,
    root,
    stateDir,
    log: memoryLogger(),
    env: {},
    org,
    async close() {
      await client.close();
      await emulator.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Creates a project and moves the emulator's clock past its creation, so it and its services are up. */
export async function createProject(h: Harness, name: string): Promise<string> {
  const created = await h.api.createAProject({ name, organization_id: h.org, region: 'eu-west-1', db_pass: 'x-test-password-1' } as Parameters<ManagementApi['createAProject']>[0]);
  const ref = (created as { ref?: string }).ref ?? created.id;
  h.emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
  const project = await h.api.getProject(ref);
  if (project.status !== 'ACTIVE_HEALTHY') throw new Error(`project ${name} is ${project.status} after its creation time`);
  return ref;
}

let line = 1;
export function doc<K extends ManifestKind>(kind: K, name: string, spec: unknown, dir: string): AnyDocument {
  return { apiVersion: 'reconciler/v1', kind, metadata: { name }, spec, source: { file: `${name}.yaml`, line: line++, column: 1, dir } } as AnyDocument;
}

export function projectDoc(name: string, ref: string, dir: string, extra: Partial<ProjectSpec> = {}): ProjectDocument {
  return doc('Project', name, { organization: 'org', region: 'eu-west-1', ref, ...extra }, dir) as ProjectDocument;
}

export function scope(project: ProjectDocument, documents: AnyDocument[]): ProjectScope {
  return { name: project.metadata.name, document: project, ref: project.spec.ref!, status: 'ACTIVE_HEALTHY', documents };
}

export interface KindsPass {
  entries: PlanEntry[];
  /** The outcomes of the kinds' entries. */
  outcomes: ApplyOutcome[];
  /** The outcomes of the steps that write nothing (the read-back after a project's writes). */
  steps: ApplyOutcome[];
}

/**
 * One pass over the projects' kinds (the registry's): each project's managed kinds planned, then
 * (unless dry) applied as a pass applies them. `outcomes` are those of the kinds' entries; the
 * steps that write nothing (the read-back) are in `steps`.
 */
export async function runKinds(h: Harness, scopes: ProjectScope[], options: { dryRun: boolean }): Promise<KindsPass> {
  const ctx: KindContext = {
    api: h.api,
    clock: systemClock,
    state: openStateStore(h.stateDir),
    documents: scopes.flatMap((s) => [s.document, ...s.documents]),
    resolveSecret: (ref, document) => resolveSecretRef(ref as SecretRef, { baseDir: document.source.dir, env: h.env }),
    projectRefs: new Map(scopes.map((s) => [s.name, s.ref!])),
    pass: new PassState(),
    log: h.log,
  };
  const entries: PlanEntry[] = [];
  const outcomes: ApplyOutcome[] = [];
  const steps: ApplyOutcome[] = [];
  for (const project of scopes) {
    const work = await planKinds(project, KIND_MODULES, ctx, h.log);
    entries.push(...work.entries, ...work.failures);
    if (options.dryRun) continue;
    const applied = await applyKinds(work, KIND_MODULES, ctx, systemClock, h.log);
    outcomes.push(...applied.outcomes);
    steps.push(...applied.steps);
  }
  return { entries, outcomes, steps };
}

/** Requests the emulator logged after `since` (an index into the log), as `METHOD route`. */
export function requestsSince(h: Harness, since: number): string[] {
  return h.emulator.requests().slice(since).map((r) => `${r.method} ${r.route}`);
}

export function count(list: string[], item: string): number {
  return list.filter((x) => x === item).length;
}

export function actions(entries: PlanEntry[]): Record<string, string> {
  return Object.fromEntries(entries.map((e) => [e.id, e.action]));
}
