import { badRequest } from '../errors.js';
import { startPitrRestore } from '../lifecycle.js';
import type { ProjectRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler } from './context.js';

const DAY = 86_400_000;
const RETENTION_DAYS = 7;

/** Daily physical backups since the project was created, the last seven kept. */
function dailyBackups(project: ProjectRecord, now: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const first = Math.floor(project.createdAt / DAY) + 1;
  const last = Math.floor(now / DAY);
  for (let day = Math.max(first, last - RETENTION_DAYS + 1); day <= last; day++) {
    out.push({ id: project.numericId * 10_000 + (day % 10_000), is_physical_backup: true, status: 'COMPLETED', inserted_at: iso(day * DAY) });
  }
  return out;
}

function pitrWindow(project: ProjectRecord, now: number): { earliest: number; latest: number } {
  return { earliest: Math.floor(Math.max(project.createdAt, now - RETENTION_DAYS * DAY) / 1000), latest: Math.floor(now / 1000) };
}

export const listBackups: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  const backups = dailyBackups(project, context.now);
  const window = pitrWindow(project, context.now);
  return ok({
    region: project.region,
    walg_enabled: project.walgEnabled,
    pitr_enabled: project.pitrEnabled,
    backups,
    physical_backup_data: project.pitrEnabled ? { earliest_physical_backup_date_unix: window.earliest, latest_physical_backup_date_unix: window.latest } : {},
  });
};

export const restorePitr: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  if (!project.pitrEnabled) throw badRequest(`Point-in-time recovery is not enabled for project ${project.ref}`);
  if (project.status !== 'ACTIVE_HEALTHY') throw badRequest(`Project ${project.ref} is ${project.status}: only an ACTIVE_HEALTHY project can be restored to a point in time`);
  const target = (context.body as { recovery_time_target_unix: number }).recovery_time_target_unix;
  const window = pitrWindow(project, context.now);
  if (target < window.earliest || target > window.latest) {
    throw badRequest(`\`recovery_time_target_unix\` must be between ${window.earliest} and ${window.latest}`);
  }
  startPitrRestore(context.state, project, context.now, context.durations, context.faults.lifecycleFails('restore'));
  return created({});
};
