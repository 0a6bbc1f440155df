import { badRequest } from './errors.js';
import { serviceSchedule } from './project-factory.js';
import type { LifecycleDurations } from './durations.js';
import type { EmulatorState, ProjectRecord, ProjectStatus } from './state.js';

/**
 * Schedules `project` to move to `status` after `ms`, unless another lifecycle operation
 * (or a delete) happens first: each operation bumps the generation.
 */
function scheduleStatus(state: EmulatorState, project: ProjectRecord, at: number, status: ProjectStatus, then?: () => void): void {
  const generation = project.generation;
  state.schedule(at, () => {
    if (project.generation !== generation || state.projects.get(project.ref) !== project) return;
    project.status = status;
    then?.();
  });
}

/** `fail`: the transition ends in its failure state (INIT_FAILED, PAUSE_FAILED, RESTORE_FAILED) instead. */
export function startCreate(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations, fail = false): void {
  project.generation++;
  project.status = 'COMING_UP';
  project.serviceReadyAt = serviceSchedule(now + durations.projectCreate, durations);
  scheduleStatus(state, project, now + durations.projectCreate, fail ? 'INIT_FAILED' : 'ACTIVE_HEALTHY');
}

export function startPause(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations, fail = false): void {
  if (project.status === 'PAUSING' || project.status === 'INACTIVE') throw badRequest(`Project ${project.ref} is already ${project.status === 'PAUSING' ? 'pausing' : 'paused'}`);
  if (project.status !== 'ACTIVE_HEALTHY' && project.status !== 'ACTIVE_UNHEALTHY' && project.status !== 'PAUSE_FAILED') {
    throw badRequest(`Project ${project.ref} cannot be paused while it is ${project.status}`);
  }
  project.generation++;
  project.status = 'PAUSING';
  scheduleStatus(state, project, now + durations.pause, fail ? 'PAUSE_FAILED' : 'INACTIVE');
}

export function startRestore(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations, fail = false): void {
  if (project.status !== 'INACTIVE' && project.status !== 'RESTORE_FAILED') {
    throw badRequest(`Project ${project.ref} is ${project.status}: only a paused (INACTIVE) project can be restored`);
  }
  project.generation++;
  project.status = 'RESTORING';
  project.serviceReadyAt = serviceSchedule(now + durations.restore, durations);
  scheduleStatus(state, project, now + durations.restore, fail ? 'RESTORE_FAILED' : 'ACTIVE_HEALTHY');
}

export function cancelRestore(project: ProjectRecord): void {
  if (project.status !== 'RESTORING') throw badRequest(`Project ${project.ref} is ${project.status}: there is no restore to cancel`);
  project.generation++;
  project.status = 'INACTIVE';
}

/** Point-in-time recovery: the project restores in place, then comes back healthy. */
export function startPitrRestore(state: EmulatorState, project: ProjectRecord, now: number, durations: LifecycleDurations, fail = false): void {
  project.generation++;
  project.status = 'RESTORING';
  project.serviceReadyAt = serviceSchedule(now + durations.restore, durations);
  scheduleStatus(state, project, now + durations.restore, fail ? 'RESTORE_FAILED' : 'ACTIVE_HEALTHY');
}
