// One project's part of a pass, run by the engine's own steps: `planProject` (src/reconcile/
// project-work.ts) plans its kinds, `applyProject` (src/reconcile/apply-project.ts) applies them
// in registry order with the pass's outcomes (dependsOn, holds, the readiness wait, the
// read-back and its judgement). What a test leaves out is the fleet around the project: its
// creation is the test's own, so the project's own entry is in step (a noop) here.
import { applyProject, type ProjectApplied } from '../../src/reconcile/apply-project.js';
import { makeEntry } from '../../src/reconcile/diff.js';
import type { LiveProject, ProjectUnit } from '../../src/reconcile/fleet.js';
import { projectUnit } from '../../src/reconcile/kinds/project.js';
import { PassOutcomes } from '../../src/reconcile/pass-outcomes.js';
import { newWork, planProject, type ProjectWork } from '../../src/reconcile/project-work.js';
import { KIND_MODULES } from '../../src/reconcile/registry.js';
import type { ApplyOutcome, KindContext, KindModule, Logger, ProjectScope } from '../../src/reconcile/types.js';
import type { Clock } from '../../src/util/clock.js';

/** The fleet's view of a project the test declares: live when it has a ref, its own entry in step. */
export function unitOf(scope: ProjectScope): ProjectUnit {
  const unit = projectUnit(scope.document);
  if (scope.ref !== undefined) {
    unit.live = { id: scope.ref, ref: scope.ref, status: scope.status ?? 'ACTIVE_HEALTHY', ...(scope.database ? { database: scope.database } : {}) } as unknown as LiveProject;
  }
  unit.entry = makeEntry({ kind: 'Project', name: unit.name, changes: [], source: { file: scope.document.source.file, line: scope.document.source.line } });
  return unit;
}

/** Plans the project's kinds as a pass does (a project without a ref is one the pass would create). */
export function planKinds(scope: ProjectScope, kinds: readonly KindModule[], ctx: KindContext, log: Logger): Promise<ProjectWork> {
  const work = newWork(unitOf(scope), scope.documents, ctx.clock.now());
  // newWork builds the scope from the live project; the test's scope (its documents, its database) stands.
  return planProject({ ...work, scope: { ...scope } }, kinds, ctx, log);
}

/** What applying a project's plan returned. */
export interface AppliedKinds {
  /** The outcomes of the kinds' entries. */
  outcomes: ApplyOutcome[];
  /** The outcomes of the steps that write nothing (the readiness wait, the read-back). */
  steps: ApplyOutcome[];
  /** What each module's apply threw, in order (the outcomes hold only their description). */
  errors: unknown[];
  applied: ProjectApplied;
}

/**
 * Applies a planned project as a pass does. A project planned before it existed (the test has
 * created it since and recorded its ref in `ctx.projectRefs`) goes through the readiness wait
 * first, as a project the pass created does.
 */
export async function applyKinds(work: ProjectWork, kinds: readonly KindModule[], ctx: KindContext, clock: Clock, log: Logger): Promise<AppliedKinds> {
  const errors: unknown[] = [];
  // Each module as registered, its apply's errors kept as thrown.
  const observed = kinds.map((kind) =>
    Object.assign(Object.create(kind) as KindModule, {
      apply: async (...args: Parameters<KindModule['apply']>) => {
        try {
          return await kind.apply(...args);
        } catch (error) {
          errors.push(error);
          throw error;
        }
      },
    }),
  );
  const outcomes = new PassOutcomes({ clock, log, changes: work.entries.filter((e) => !e.observeOnly && e.action !== 'noop' && !e.held).length });
  const applied = await applyProject(work, {
    outcomes,
    applyFleetEntry: async (entry) => {
      throw new Error(`${entry.id}: the test applies no fleet-level entry`);
    },
    context: ctx,
    kinds: observed,
    services: [...new Set([...KIND_MODULES, ...kinds])],
    clock,
    log,
    projectRefs: ctx.projectRefs,
    appliesSavedPlan: false,
  });
  const isStep = (o: ApplyOutcome) => o.action === 'wait' || o.action === 'verify';
  return { outcomes: outcomes.list.filter((o) => !isStep(o)), steps: outcomes.list.filter(isStep), errors, applied };
}
