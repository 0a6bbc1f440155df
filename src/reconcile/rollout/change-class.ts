// The change classes maintenance windows and approval rules name: what a plan entry would do
// that disrupts a project (a restart, an upgrade, a replica, a hostname switch, a pause or
// restore, a deletion). A kind module may name classes of its own on an entry
// (`changeClasses`), as a migration marked disruptive does with `disruptive-migration`.
import type { ProjectDocument } from '../../manifests/types.js';
import { isChange } from '../summary.js';
import type { PlanEntry } from '../types.js';

/** The change classes a maintenance window or an approval rule names (the Rollout schema's enum, ./schema.ts). */
export const CHANGE_CLASSES = [
  'postgres-restart',
  'connection-reset',
  'postgres-major-upgrade',
  'read-replicas',
  'custom-hostname-activation',
  'pause-restore',
  'deletion',
  'disruptive-migration',
] as const;

export type ChangeClass = (typeof CHANGE_CLASSES)[number];

/** Every class is disruptive: a window without `classes` holds all of them. */
export const DISRUPTIVE_CLASSES: readonly ChangeClass[] = CHANGE_CLASSES;

/**
 * Postgres parameters of the `postmaster` context: the server reads them at start only, so
 * the service restarts the database to apply a change of any of them.
 */
const RESTART_PARAMETERS = new Set([
  'max_connections',
  'max_locks_per_transaction',
  'max_replication_slots',
  'max_wal_senders',
  'max_worker_processes',
  'shared_buffers',
  'track_activity_query_size',
  'track_commit_timestamp',
]);

const CUSTOM_HOSTNAME_ACTIVE = '5_services_reconfigured';

/** The classes of a planned write; none for an entry that writes nothing. */
export function changeClasses(entry: PlanEntry, project?: ProjectDocument): ChangeClass[] {
  if (!isChange(entry)) return [];
  const classes = new Set<ChangeClass>((entry.changeClasses ?? []).filter((name): name is ChangeClass => (CHANGE_CLASSES as readonly string[]).includes(name)));
  if (entry.action === 'delete') classes.add('deletion');
  switch (entry.kind) {
    case 'ProjectPostgres': {
      const restartAsked = (project?.spec.postgres as { restart_database?: boolean } | undefined)?.restart_database === true;
      if (restartAsked || entry.changes.some((change) => RESTART_PARAMETERS.has(change.path.split('.').pop()!))) classes.add('postgres-restart');
      break;
    }
    // The platform restarts the database to switch SSL enforcement on or off.
    case 'ProjectSslEnforcement':
    // pgsodium reads its root key when the server starts: a new key takes a restart.
    case 'ProjectCryptoext':
      classes.add('postgres-restart');
      break;
    // The pooler is reconfigured (its clients are disconnected); new network restrictions
    // end the connections they no longer allow.
    case 'ProjectPooler':
    case 'ProjectNetworkRestrictions':
      classes.add('connection-reset');
      break;
    case 'ProjectPostgresVersion':
      classes.add('postgres-major-upgrade');
      break;
    case 'ProjectReadReplicas':
      classes.add('read-replicas');
      break;
    case 'ProjectCustomHostname':
      if (entry.changes.some((change) => change.path === 'custom_hostname.status' && change.after === CUSTOM_HOSTNAME_ACTIVE)) classes.add('custom-hostname-activation');
      break;
    case 'ProjectLifecycle':
      classes.add('pause-restore');
      break;
  }
  return [...classes];
}
