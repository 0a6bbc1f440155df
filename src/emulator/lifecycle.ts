import { badRequest } from './errors.js';
import { serviceSchedule } from './project-factory.js';
import type { LifecycleDurations } from './durations.js';
import type { EmulatorState, ProjectRecord, ProjectStatus } from './state.js';

/**
 * Schedules `project` to move to `status` after `ms`, unless another lifecycle operation
 * (or a delete) happens first: each operation bumps the generation.
 */
export function scheduleStatus(state: EmulatorState, project: ProjectRecord, at: number, status: ProjectStatus, then?: () => void): void {
  const generation = project.generation;
  state.schedule(at, () => {
    if (project.generation !== generation || state.projects.get(project.ref) !== project) return;
    project.status = status;
    then?.();
  });
}

export function startCreate(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations): void {
  project.generation++;
  project.status = 'COMING_UP';
  project.serviceReadyAt = serviceSchedule(now + durations.projectCreate, durations);
  scheduleStatus(state, project, now + durations.projectCreate, 'ACTIVE_HEALTHY');
}

export function startPause(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations): void {
  if (project.status === 'PAUSING' || project.status === 'INACTIVE') throw badRequest(`Project ${project.ref} is already ${project.status === 'PAUSING' ? 'pausing' : 'paused'}`);
  if (project.status !== 'ACTIVE_HEALTHY' && project.status !== 'ACTIVE_UNHEALTHY') {
    throw badRequest(`Project ${project.ref} cannot be paused while it is ${project.status}`);
  }
  project.generation++;
  project.status = 'PAUSING';
  scheduleStatus(state, project, now + durations.pause, 'INACTIVE');
}

export function startRestore(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations): void {
  if (project.status !== 'INACTIVE') throw badRequest(`Project ${project.ref} is ${project.status}: only a paused (INACTIVE) project can be restored`);
  project.generation++;
  project.status = 'RESTORING';
  project.serviceReadyAt = serviceSchedule(now + durations.restore, durations);
  scheduleStatus(state, project, now + durations.restore, 'ACTIVE_HEALTHY');
}

export function cancelRestore(project: ProjectRecord): void {
  if (project.status !== 'RESTORING') throw badRequest(`Project ${project.ref} is ${project.status}: there is no restore to cancel`);
  project.generation++;
  project.status = 'INACTIVE';
}

/** Point-in-time recovery: the project restores in place, then comes back healthy. */
export function startPitrRestore(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations): void {
  project.generation++;
  project.status = 'RESTORING';
  project.serviceReadyAt = serviceSchedule(now + durations.restore, durations);
  scheduleStatus(state, project, now + durations.restore, 'ACTIVE_HEALTHY');
}
