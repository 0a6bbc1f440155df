// The per-project part of a pass's plan: the scope every kind module of the project plans and
// applies with, its planned entries, and what observation could not do.
import { UnauthorizedError } from '../api/errors.js';
import type { AnyDocument } from '../manifests/types.js';
import { describeError } from './describe-error.js';
import { makeEntry } from './diff.js';
import { isPausedStatus, isRunning, refOf, type ProjectUnit } from './kinds/project.js';
import type { KindContext, KindModule, Logger, PlanEntry, ProjectScope } from './types.js';

/** The plan of one project's kinds: the same scope goes to every module. */
export interface ProjectWork {
  unit: ProjectUnit;
  scope: ProjectScope;
  /** The entries of the project's kinds, in registry order. */
  entries: PlanEntry[];
  /** The project is not ready at plan time (created by this pass, or not running): its writes wait until it is. */
  deferred: boolean;
  /**
   * The project exists but could not be read at plan time: its entries are pending
   * placeholders, and a direct apply plans its kinds once it is ready (a saved plan's apply
   * does not: it applies what was saved, and a placeholder writes nothing).
   */
  planWhenReady?: boolean;
  /** Modules not planned at all (paused project), with the reason. */
  modulesSkipped?: string;
  /** Module kinds whose observation failed. */
  failures: PlanEntry[];
  observedAt: number;
}

/** What planning a project's kinds returns. */
export interface ModulePlan {
  entries: PlanEntry[];
  /** One entry per kind whose observation failed. */
  failures: PlanEntry[];
  /** When the kinds were read. */
  observedAt: number;
}

/**
 * What a project's lifecycle entry does when applied: `pause` or `restore` (its target, planned
 * as `target.paused`); undefined when it writes nothing (in step, under the observe policy, or
 * held by the rollout in this pass).
 */
export function lifecycleTarget(entry: PlanEntry): 'pause' | 'restore' | undefined {
  if (entry.action !== 'update' || entry.observeOnly || entry.held) return undefined;
  return entry.target?.paused === true ? 'pause' : entry.target?.paused === false ? 'restore' : undefined;
}

/** The documents that belong to a project (Secrets, Function, SsoProvider, Branch), by project name, in one scan. */
export function documentsByProject(documents: readonly AnyDocument[]): Map<string, AnyDocument[]> {
  const byProject = new Map<string, AnyDocument[]>();
  for (const d of documents) {
    if (d.kind === 'Project' || d.kind === 'Organization') continue;
    const project = (d.spec as { project?: string }).project;
    if (project === undefined) continue;
    const list = byProject.get(project);
    if (list) list.push(d);
    else byProject.set(project, [d]);
  }
  return byProject;
}

export function newWork(unit: ProjectUnit, projectDocuments: readonly AnyDocument[], now: number): ProjectWork {
  const scope: ProjectScope = { name: unit.name, document: unit.document, documents: [...projectDocuments] };
  if (unit.live) {
    scope.ref = refOf(unit.live);
    scope.status = unit.live.status;
    if (unit.live.database) scope.database = { ...unit.live.database };
  }
  return { unit, scope, entries: [], deferred: false, failures: [], observedAt: now };
}

/** Plans every managed kind of the project (concurrently; entries keep the registry's order). */
export async function planModules(
  project: string,
  scope: ProjectScope,
  kinds: readonly KindModule[],
  ctx: KindContext,
  log: Logger,
  only?: ReadonlySet<KindModule>,
): Promise<ModulePlan> {
  const selected = kinds.filter((kind) => (!only || only.has(kind)) && kind.manages(scope, ctx));
  const planned = await Promise.all(
    selected.map(async (kind) => {
      try {
        return { kind, entries: await kind.plan(scope, ctx) };
      } catch (error) {
        if (error instanceof UnauthorizedError) throw error;
        log.error({ project, kind: kind.kind, error: describeError(error).message }, 'observing a kind failed');
        return { kind, error };
      }
    }),
  );
  const entries: PlanEntry[] = [];
  const failures: PlanEntry[] = [];
  for (const item of planned) {
    if ('error' in item) {
      failures.push(
        makeEntry({ kind: item.kind.kind, project, name: '*', changes: [], reason: `could not observe: ${describeError(item.error).message}` }),
      );
    } else {
      entries.push(...item.entries);
    }
  }
  return { entries, failures, observedAt: ctx.clock.now() };
}

/**
 * The entries of a project that exists but cannot be read yet: one `pending` entry per kind
 * the manifests manage (named like its planned entries where the kind has one name, else
 * `*`). They write and read nothing; a direct apply plans the kinds once the project is ready.
 */
export function pendingEntries(work: ProjectWork, kinds: readonly KindModule[], ctx: KindContext, reason: string): PlanEntry[] {
  const source = { file: work.unit.document.source.file, line: work.unit.document.source.line };
  return kinds
    .filter((kind) => kind.manages(work.scope, ctx))
    .map((kind) => {
      const key = (kind as { key?: unknown }).key;
      const entry = makeEntry({ kind: kind.kind, project: work.unit.name, name: typeof key === 'string' ? key : '*', changes: [], action: 'noop', reason, source });
      entry.pending = true;
      return entry;
    });
}

/**
 * One project's kinds, as every pass plans them: planned now, deferred until it exists (a
 * creation) or runs, or not at all (paused or blocked).
 */
export async function planProject(work: ProjectWork, kinds: readonly KindModule[], ctx: KindContext, log: Logger): Promise<ProjectWork> {
  const unit = work.unit;
  if (unit.entry?.action === 'blocked' && !unit.live) return work;
  const status = unit.live?.status;
  if (unit.live && isPausedStatus(status) && unit.document.spec.paused !== false) {
    return { ...work, modulesSkipped: `paused (status ${status}): configuration is not checked while paused` };
  }
  // A project this pass creates: its kinds are planned from the manifests alone (the live side is
  // the service's default), applied as planned once it is ready.
  if (!unit.live) return { ...work, deferred: true, ...(await planModules(unit.name, work.scope, kinds, ctx, log)) };
  if (!isRunning(status)) {
    // A project that exists but is not running (restored by this pass, coming up, upgrading)
    // cannot be read: each managed kind is pending until it runs, and an apply plans them once
    // the project is ready (its first plan of them). Never planned blind: a blind plan would set
    // up replicas or providers it already has, or replace a root key without its confirmation.
    const scope = { ...work.scope };
    delete scope.ref;
    const waiting = { ...work, scope, deferred: true, planWhenReady: true };
    return { ...waiting, entries: pendingEntries(waiting, kinds, ctx, `the project is ${status ?? 'not running'}: its configuration is planned once it runs`) };
  }
  return { ...work, ...(await planModules(unit.name, work.scope, kinds, ctx, log)) };
}
