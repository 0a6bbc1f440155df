import type { KindContext, ProjectScope } from '../../types.js';

// Projects this pass planned before they existed, keyed on the pass's `projectRefs` map: the
// engine makes one per pass and hands the same map to every context of it, so the memory
// dies with the pass and never leaks into the next one.
const plannedAsNew = new WeakMap<Map<string, string>, Set<string>>();

/**
 * Notes a project the pass will create (no ref and no live status at plan time). The engine
 * reads the sections it wrote back once they are applied, now with a ref; `createdInThisPass`
 * then tells that read-back the live state it compares with is this pass's own, on a project
 * that holds no user data yet.
 */
export function noteIfNew(scope: ProjectScope, ctx: KindContext): void {
  if (scope.ref !== undefined || scope.status !== undefined) return;
  let names = plannedAsNew.get(ctx.projectRefs);
  if (!names) plannedAsNew.set(ctx.projectRefs, (names = new Set()));
  names.add(scope.name);
}

export function createdInThisPass(scope: ProjectScope, ctx: KindContext): boolean {
  return plannedAsNew.get(ctx.projectRefs)?.has(scope.name) ?? false;
}
