import type { PoolerConfigResponse } from '../../../api/types.js';
import type { KindContext, ProjectScope, ResourceKind } from '../../types.js';
import { readOptions } from './section-plan.js';

/** The `share` key under which the pooler and read replica exports read the pooler list once. */
export const POOLER_LIST = 'pooler-list';

interface Shared {
  list?: Promise<PoolerConfigResponse[]>;
  takenBy: Set<ResourceKind>;
}

/**
 * The pooler list answers both the pooler section (the PRIMARY entry) and the read replicas
 * (READ_REPLICA entries): one GET serves both in a pass. Each reader takes a fetched list at
 * most once; a second plan of the same section in the same pass (a verify after apply)
 * fetches afresh instead of reading a stale answer. The memory is the pass's (`ctx.pass`).
 */
export function readPoolerList(scope: ProjectScope, ctx: KindContext, ref: string, reader: ResourceKind): Promise<PoolerConfigResponse[]> {
  const memo = ctx.pass.shared<Shared>(`${POOLER_LIST}\0${scope.name}`, () => ({ takenBy: new Set() }));
  if (memo.list && !memo.takenBy.has(reader)) {
    memo.takenBy.add(reader);
    return memo.list;
  }
  const list = ctx.api.getPoolerConfig(ref, readOptions(scope, ctx));
  memo.list = list;
  memo.takenBy = new Set([reader]);
  // A failed read is not cached for the other reader: it retries on its own.
  list.catch(() => {
    if (memo.list === list) delete memo.list;
  });
  return list;
}
