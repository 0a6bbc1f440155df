import type { PoolerConfigResponse } from '../../../api/types.js';
import type { KindContext, ProjectScope, ResourceKind } from '../../types.js';
import { readOptions } from './section-plan.js';

/** The `share` key under which the pooler and read replica exports read the pooler list once. */
export const POOLER_LIST = 'pooler-list';

interface Shared {
  list: Promise<PoolerConfigResponse[]>;
  takenBy: Set<ResourceKind>;
}

// Keyed on the scope object the engine hands every module of one project in one pass, so
// the memo dies with the pass.
const shared = new WeakMap<ProjectScope, Shared>();

/**
 * The pooler list answers both the pooler section (the PRIMARY entry) and the read replicas
 * (READ_REPLICA entries): one GET serves both in a pass. Each reader takes a fetched list at
 * most once; a second plan of the same section in the same scope (a verify after apply)
 * fetches afresh instead of reading a stale answer.
 */
export function readPoolerList(scope: ProjectScope, ctx: KindContext, ref: string, reader: ResourceKind): Promise<PoolerConfigResponse[]> {
  const memo = shared.get(scope);
  if (memo && !memo.takenBy.has(reader)) {
    memo.takenBy.add(reader);
    return memo.list;
  }
  const list = ctx.api.getPoolerConfig(ref, readOptions(scope, ctx));
  shared.set(scope, { list, takenBy: new Set([reader]) });
  // A failed read is not cached for the other reader: it retries on its own.
  list.catch(() => {
    if (shared.get(scope)?.list === list) shared.delete(scope);
  });
  return list;
}
