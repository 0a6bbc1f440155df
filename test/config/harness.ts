// Test harness of the configuration sections: a real emulator over loopback HTTP on a manual
// clock, the real client with a scaled budget, and the KindContext the engine would give. A
// section is planned and applied through the engine's own steps (test/support/project-pass.ts:
// `planProject`, then `applyProject` with the pass's outcomes, readiness wait and read-back),
// one module at a time.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator, type RequestLogEntry, type SeedInput } from '../../src/emulator/index.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { resolveSecretRef } from '../../src/manifests/refs.js';
import { ManagementApi } from '../../src/api/endpoints.js';
import type { ApiRequest, RequestCaller } from '../../src/api/request.js';
import type { ProjectDocument, ProjectSpec, SecretRef } from '../../src/manifests/types.js';
import type { KindContext, KindModule, Logger, PlanEntry, ProjectScope, StateStore } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { PassState } from '../../src/reconcile/pass-state.js';
import type { ProjectWork } from '../../src/reconcile/project-work.js';
import { applyKinds, planKinds } from '../support/project-pass.js';

export const silentLog: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  clock: ManualClock;
  env: Record<string, string>;
  orgId: string;
  close(): Promise<void>;
}

/** Lifecycle durations the progress tests step through (emulator-clock ms). */
export const DURATIONS = {
  projectCreate: 60_000,
  servicesHealthy: 10_000,
  upgradeStep: 10_000,
  customHostnameVerification: 60_000,
  customHostnameOriginSetup: 30_000,
};

/** Numbers the harnesses of a test file: organization names differ without a random draw. */
let harnesses = 0;

export async function startHarness(options: { seed?: SeedInput } = {}): Promise<Harness> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const emulator = await startEmulator({
    port: 0,
    clock,
    rateLimit: { limit: 600, windowMs: 1000 },
    durations: DURATIONS,
    ...(options.seed ? { seed: options.seed } : {}),
  });
  const stateDir = await mkdtemp(join(tmpdir(), 'config-sections-'));
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 600, windowMs: 1000 }, stateDir });
  const org = await client.api.createAnOrganization({ name: `org-${++harnesses}` });
  return {
    emulator,
    client,
    clock,
    env: {},
    orgId: (org as { id: string; slug?: string }).slug ?? org.id,
    async close() {
      await client.close();
      await emulator.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** Creates a project through the API and moves the emulator clock until it and its services are up. */
export async function createLiveProject(h: Harness, name: string, region = 'eu-west-1'): Promise<string> {
  const created = await h.client.api.createAProject({ name, organization_id: h.orgId, region, db_pass: 'test-db-pass-000' } as never);
  const ref = (created as { ref?: string; id: string }).ref ?? created.id;
  await h.clock.advance(60 * 60_000);
  const project = await h.client.api.getProject(ref);
  if (project.status !== 'ACTIVE_HEALTHY') throw new Error(`project ${ref} is ${project.status}`);
  return ref;
}

export function projectDocument(name: string, spec: Partial<ProjectSpec>): ProjectDocument {
  return {
    apiVersion: 'reconciler/v1',
    kind: 'Project',
    metadata: { name },
    spec: { organization: 'org', region: 'eu-west-1', ...spec } as ProjectSpec,
    source: { file: `projects/${name}.yaml`, line: 1, column: 1, dir: '/nonexistent' },
  };
}

export function envRef(name: string): SecretRef {
  return { valueFrom: { env: name } } as SecretRef;
}

/** The scope the engine builds from the project list (ref, status, database); none before creation. */
export async function scopeFor(h: Harness, document: ProjectDocument, ref?: string): Promise<ProjectScope> {
  const scope: ProjectScope = { name: document.metadata.name, document, documents: [] };
  if (ref !== undefined) {
    const live = await h.client.api.getProject(ref);
    scope.ref = ref;
    scope.status = live.status;
    scope.database = { ...live.database };
  }
  return scope;
}

export function memoryState(): StateStore {
  const values = new Map<string, unknown>();
  return {
    async get<T>(key: string) {
      return values.get(key) as T | undefined;
    },
    async set(key: string, value: unknown) {
      values.set(key, value);
    },
  };
}

/** The client's API, recording every request it is asked to send (bodies included), for assertions on bodies. */
export function recordingApi(h: Harness): { api: ManagementApi; sent: ApiRequest[] } {
  const inner = (h.client.api as unknown as { caller: RequestCaller }).caller;
  const sent: ApiRequest[] = [];
  const api = new ManagementApi({
    call(request) {
      sent.push(request);
      return inner.call(request);
    },
  });
  return { api, sent };
}

export interface ContextOptions {
  refs?: Record<string, string>;
  api?: ManagementApi;
  /** Shared across plans to model the state directory of successive passes. */
  state?: StateStore;
}

export function contextFor(h: Harness, document: ProjectDocument, options: ContextOptions = {}): KindContext {
  return {
    api: options.api ?? h.client.api,
    clock: h.clock,
    state: options.state ?? memoryState(),
    documents: [document],
    resolveSecret: (ref, doc) => resolveSecretRef(ref as SecretRef, { baseDir: doc.source.dir, env: h.env }),
    projectRefs: new Map(Object.entries(options.refs ?? {})),
    pass: new PassState(),
    log: silentLog,
  };
}

/** What `planWith` returns: the module's entries, the requests its plan sent, and what its apply needs. */
export interface Planned {
  module: KindModule;
  entries: PlanEntry[];
  requests: RequestLogEntry[];
  ctx: KindContext;
  scope: ProjectScope;
  /** The project's part of the plan, as the pass planned it (`entries` are its entries and failures). */
  work: ProjectWork;
}

/**
 * Plans one module for one project as a pass plans the project's kinds (a kind that cannot be
 * read is a `could not observe` entry) and returns the entries with the requests it sent.
 */
export async function planWith(
  h: Harness,
  module: KindModule,
  document: ProjectDocument,
  ref: string | undefined,
  options: Omit<ContextOptions, 'refs'> = {},
): Promise<Planned> {
  const scope = await scopeFor(h, document, ref);
  const ctx = contextFor(h, document, { ...options, ...(ref ? { refs: { [document.metadata.name]: ref } } : {}) });
  const mark = h.emulator.requests().length;
  const work = await planKinds(scope, [module], ctx, silentLog);
  return { module, entries: [...work.entries, ...work.failures], requests: h.emulator.requests().slice(mark), ctx, scope, work };
}

/** True when the engine would hand the entry to its module's apply: a write, not under observe. */
export function applies(entry: PlanEntry): boolean {
  return !entry.observeOnly && (entry.action === 'create' || entry.action === 'update' || entry.action === 'delete');
}

/**
 * Applies the planned entries through the engine's `applyProject` (after the readiness wait when
 * the project was planned before it existed, then the read-back); returns the requests sent.
 * Rejects with the first error the module's apply threw, after the apply has run as a pass runs it.
 */
export async function applyAll(h: Harness, planned: Planned): Promise<RequestLogEntry[]> {
  const mark = h.emulator.requests().length;
  const work = { ...planned.work, scope: planned.scope, entries: planned.entries };
  const applied = await applyKinds(work, [planned.module], planned.ctx, h.clock, silentLog);
  if (applied.errors.length > 0) throw applied.errors[0];
  return h.emulator.requests().slice(mark);
}

/**
 * The module's own plan alone, outside the pass's steps. A pass does not call it for a project
 * that is not running (an upgrade in progress): it plans a pending entry per kind instead.
 * For tests of what the module itself reports there.
 */
export async function planModuleAlone(h: Harness, module: KindModule, document: ProjectDocument, ref: string): Promise<Planned> {
  const planned = await planWith(h, module, document, ref);
  const mark = h.emulator.requests().length;
  const entries = module.manages(planned.scope, planned.ctx) ? await module.plan(planned.scope, planned.ctx) : [];
  return { ...planned, entries, requests: h.emulator.requests().slice(mark) };
}

/**
 * The module's own apply of each write, outside the pass's steps: a pass never applies a kind
 * of a project without a ref (it creates the project first). For tests of the module's own guards.
 */
export async function applyModuleAlone(h: Harness, planned: Planned): Promise<RequestLogEntry[]> {
  const mark = h.emulator.requests().length;
  for (const entry of planned.entries) if (applies(entry)) await planned.module.apply(entry, planned.scope, planned.ctx);
  return h.emulator.requests().slice(mark);
}

export function gets(requests: RequestLogEntry[]): RequestLogEntry[] {
  return requests.filter((r) => r.method === 'GET');
}

export function writes(requests: RequestLogEntry[]): RequestLogEntry[] {
  return requests.filter((r) => r.method !== 'GET');
}
