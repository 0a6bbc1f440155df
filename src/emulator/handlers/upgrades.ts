import { badRequest, notFound } from '../errors.js';
import { POSTGRES_BUILDS } from '../defaults.js';
import { serviceSchedule } from '../project-factory.js';
import { newUuid } from '../random.js';
import type { ProjectRecord, UpgradeRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler } from './context.js';

const UPGRADE_PROGRESS = [
  '0_requested', '1_started', '2_launched_upgraded_instance', '3_detached_volume_from_upgraded_instance',
  '4_attached_volume_to_original_instance', '5_initiated_data_upgrade', '6_completed_data_upgrade',
  '7_detached_volume_from_original_instance', '8_attached_volume_to_upgraded_instance', '9_completed_upgrade',
  '10_completed_post_physical_backup',
] as const;

export const UPGRADE_ERRORS = [
  '1_upgraded_instance_launch_failed', '2_volume_detachchment_from_upgraded_instance_failed', '3_volume_attachment_to_original_instance_failed',
  '4_data_upgrade_initiation_failed', '5_data_upgrade_completion_failed', '6_volume_detachchment_from_original_instance_failed',
  '7_volume_attachment_to_upgraded_instance_failed', '8_upgrade_completion_failed',
] as const;

/** The step that switches the database to the new version. */
const COMPLETED_STEP = UPGRADE_PROGRESS.indexOf('9_completed_upgrade');

const TARGETS: Record<string, string[]> = { '13': ['15', '17'], '14': ['15', '17'], '15': ['17'], '17': [], '17-oriole': [] };

function targets(project: ProjectRecord): string[] {
  return TARGETS[project.database.postgresEngine] ?? [];
}

function inProgress(project: ProjectRecord): UpgradeRecord | undefined {
  return project.upgrades.find((u) => u.status === 1);
}

export const getEligibility: Handler = (context) => {
  const project = projectFor(context);
  const available = targets(project);
  return ok({
    eligible: available.length > 0 && project.status === 'ACTIVE_HEALTHY' && !inProgress(project),
    current_app_version: `postgres-${project.database.version}`,
    current_app_version_release_channel: project.database.releaseChannel,
    latest_app_version: `postgres-${POSTGRES_BUILDS[available.at(-1) ?? project.database.postgresEngine] ?? project.database.version}`,
    target_upgrade_versions: available.map((version) => ({ postgres_version: version, release_channel: 'ga', app_version: `postgres-${POSTGRES_BUILDS[version]}` })),
    duration_estimate_hours: 1,
    legacy_auth_custom_roles: [],
    objects_to_be_dropped: [],
    unsupported_extensions: [],
    user_defined_objects_in_internal_schemas: [],
    validation_errors: [],
    warnings: [],
  });
};

export const startUpgrade: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const { target_version, release_channel } = context.body as { target_version: string; release_channel?: string };
  if (project.status !== 'ACTIVE_HEALTHY') throw badRequest(`Project ${project.ref} is ${project.status}: only an ACTIVE_HEALTHY project can be upgraded`);
  const target = target_version.replace(/^postgres-/, '').split('.')[0]!;
  if (!targets(project).includes(target)) {
    throw badRequest(`\`target_version\` ${target_version} is not an upgrade target of this project; eligible: ${targets(project).join(', ') || 'none'}`);
  }
  const stamp = iso(context.now);
  const upgrade: UpgradeRecord = {
    trackingId: newUuid(), targetVersion: POSTGRES_BUILDS[target]!, targetEngine: target, releaseChannel: release_channel ?? 'ga',
    initiatedAt: stamp, latestStatusAt: stamp, progress: '0_requested', status: 1,
  };
  project.upgrades.push(upgrade);
  project.generation++;
  project.status = 'UPGRADING';
  const generation = project.generation;
  // A failing upgrade stops at one step (2..9) with the error of that step, always before
  // `9_completed_upgrade` switches the version: the original instance keeps serving, so the
  // project is ACTIVE_HEALTHY again on its old version, whichever step the draw picks.
  const failAt = context.faults.lifecycleFails('upgrade') ? 2 + Math.floor(context.faults.draw() * (COMPLETED_STEP - 1)) : undefined;
  UPGRADE_PROGRESS.forEach((progress, index) => {
    if (index === 0) return;
    const at = context.now + index * context.durations.upgradeStep;
    context.state.schedule(at, () => {
      if (project.generation !== generation || context.state.projects.get(project.ref) !== project || upgrade.status !== 1) return;
      if (failAt !== undefined && index === failAt) {
        upgrade.error = UPGRADE_ERRORS[index - 2];
        upgrade.status = 0;
        upgrade.latestStatusAt = iso(at);
        project.status = 'ACTIVE_HEALTHY';
        project.serviceReadyAt = serviceSchedule(at, context.durations);
        return;
      }
      upgrade.progress = progress;
      upgrade.latestStatusAt = iso(at);
      if (progress === '9_completed_upgrade') {
        project.database = { version: upgrade.targetVersion, postgresEngine: upgrade.targetEngine, releaseChannel: upgrade.releaseChannel };
        project.status = 'ACTIVE_HEALTHY';
        project.serviceReadyAt = serviceSchedule(at, context.durations);
      }
      if (progress === '10_completed_post_physical_backup') upgrade.status = 2;
    });
  });
  return created({ tracking_id: upgrade.trackingId });
};

export const getUpgradeStatus: Handler = (context) => {
  const project = projectFor(context);
  const trackingId = context.query.tracking_id as string | undefined;
  const upgrade = trackingId ? project.upgrades.find((u) => u.trackingId === trackingId) : project.upgrades.at(-1);
  if (trackingId && !upgrade) throw notFound(`No upgrade with tracking id ${trackingId}`);
  if (!upgrade) return ok({ databaseUpgradeStatus: null });
  return ok({
    databaseUpgradeStatus: {
      initiated_at: upgrade.initiatedAt,
      latest_status_at: upgrade.latestStatusAt,
      target_version: Number(upgrade.targetEngine.split('-')[0]),
      progress: upgrade.progress,
      ...(upgrade.error ? { error: upgrade.error } : {}),
      status: upgrade.status,
    },
  });
};
