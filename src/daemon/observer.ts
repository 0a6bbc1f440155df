// The observed-only reads of a drift re-check (`--observe`): for each project the pass saw live,
// one request per selected fact, at drift priority (they wait behind writes and verifications).
import type { ManagementApi } from '../api/endpoints.js';
import { observeProject, type ObservedResource } from '../reconcile/kinds/observed.js';
import type { Logger } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import type { DaemonObserve } from './controller.js';

interface ObserverOptions {
  api: ManagementApi;
  /** What to read (parseObserveList); must not be empty: no reads means no observer. */
  resources: readonly ObservedResource[];
  clock: Clock;
  log: Logger;
}

/** Requests one project's observed-only reads cost: one per fact (each endpoint answers in one request). */
export function observeReadsPerProject(resources: readonly ObservedResource[]): number {
  return new Set(resources).size;
}

export function createObserver(options: ObserverOptions): DaemonObserve {
  const { api, clock, log } = options;
  const resources = [...new Set(options.resources)];
  if (resources.length === 0) throw new TypeError('Expected `resources` to name at least one observed-only fact, got none');
  return (projects, signal) =>
    Promise.all(
      projects.map(async (project) => {
        const state = await observeProject(api, project.ref!, { priority: 'drift', project: project.name, resources, signal, clock });
        if (state.errors.length > 0) {
          // Class name, status and the service's message: ObservedError carries no secret.
          log.warn({ project: project.name, errors: state.errors }, 'some observed-only facts could not be read');
        }
        if (!state.health) return { ...project, observed: state };
        return {
          ...project,
          health: Object.fromEntries(state.health.map((service) => [service.name, service.healthy])),
          observedAt: state.observedAt,
          observed: state,
        };
      }),
    );
}
