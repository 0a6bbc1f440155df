// Kind modules call the typed endpoints directly; this gives each project its own view of the
// API whose calls carry the pass's scheduling class, the project (for fairness across projects)
// and the pass's abort signal unless the caller set them, and counts what the pass sent.
import { ManagementApi } from '../api/endpoints.js';
import type { ApiRequest, ApiResponse, Priority, RequestCaller } from '../api/request.js';

interface ScopeDefaults {
  /** Scheduling class of reads (`verify` for a run, `drift` for a background re-check). */
  readPriority: Priority;
  project?: string;
  signal?: AbortSignal;
}

export interface RequestTally {
  total: number;
  byMethod: Record<string, number>;
}

/** The caller below a ManagementApi. */
export function callerOf(api: ManagementApi): RequestCaller {
  return api.caller;
}

export function scopedApi(base: RequestCaller, defaults: ScopeDefaults, tally?: RequestTally): ManagementApi {
  const caller: RequestCaller = {
    call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
      const isRead = request.method === 'GET';
      const next: ApiRequest = {
        ...request,
        priority: request.priority ?? (isRead ? defaults.readPriority : 'write'),
      };
      if (next.project === undefined && defaults.project !== undefined) next.project = defaults.project;
      if (next.signal === undefined && defaults.signal !== undefined) next.signal = defaults.signal;
      if (tally) {
        tally.total += 1;
        tally.byMethod[request.method] = (tally.byMethod[request.method] ?? 0) + 1;
      }
      return base.call<T>(next);
    },
  };
  return new ManagementApi(caller);
}
