// Facts about a project that the reconciler reports but never writes: network bans, API keys
// (name, type, prefix and id only: never a key or its hash), backups and the point-in-time
// recovery window, read-only mode, service health and the Postgres upgrade status.
// Six requests per project: they are not part of a normal pass; `reconcile status` reads
// them, and the daemon reads them on its own schedule at `drift` priority.
import type { ManagementApi } from '../../api/endpoints.js';
import type { Priority } from '../../api/request.js';
import type { Clock } from '../../util/clock.js';
import { systemClock } from '../../util/clock.js';
import { isApiError } from '../../api/errors.js';

/** Services the health read asks about (every service the API knows). */
const HEALTH_SERVICES = ['auth', 'db', 'db_postgres_user', 'pooler', 'realtime', 'rest', 'storage', 'bouncer'] as const;

export type ObservedResource = 'networkBans' | 'apiKeys' | 'backups' | 'readOnly' | 'health' | 'upgrade';
const OBSERVED_RESOURCES: readonly ObservedResource[] = ['networkBans', 'apiKeys', 'backups', 'readOnly', 'health', 'upgrade'];

interface ObservedApiKey {
  name: string;
  type?: string;
  prefix?: string;
  id?: string;
}

interface ObservedBackups {
  walgEnabled: boolean;
  pitrEnabled: boolean;
  count: number;
  /** ISO time of the newest completed backup. */
  latestBackupAt?: string;
  /** Point-in-time recovery window, unix seconds, when the service reports one. */
  pitrWindow?: { earliest?: number; latest?: number };
}

interface ObservedReadOnly {
  enabled: boolean;
  overrideEnabled: boolean;
  overrideActiveUntil?: string;
}

interface ObservedServiceHealth {
  name: string;
  healthy: boolean;
  status: string;
}

export interface ObservedUpgrade {
  targetVersion: number;
  progress?: string;
  error?: string;
  status: number;
  initiatedAt: string;
  latestStatusAt: string;
}

/** A read that failed: the other reads still count. Error class name and a message free of secrets. */
export interface ObservedError {
  resource: ObservedResource;
  type: string;
  message: string;
  /** HTTP status when the service answered (a 4xx is a fact about the project, for example a paused one). */
  status?: number;
}

/** Stable shape: the daemon exports it as metrics, `reconcile status` prints it. */
export interface ObservedProjectState {
  ref: string;
  /** ms since epoch when the reads finished. */
  observedAt: number;
  networkBans?: { bannedIpv4: string[] };
  apiKeys?: ObservedApiKey[];
  backups?: ObservedBackups;
  readOnly?: ObservedReadOnly;
  health?: ObservedServiceHealth[];
  /** null: no upgrade was ever started. */
  upgrade?: ObservedUpgrade | null;
  errors: ObservedError[];
}

interface ObserveOptions {
  /** Default `drift`: these reads are background work and yield to writes and verifications. */
  priority?: Priority;
  /** Which facts to read (default all six). */
  resources?: readonly ObservedResource[];
  /** Label for fairness in the client's queue (the project's manifest name). */
  project?: string;
  signal?: AbortSignal;
  clock?: Clock;
}

const VALID = new Set<string>(OBSERVED_RESOURCES);

export async function observeProject(api: ManagementApi, ref: string, options: ObserveOptions = {}): Promise<ObservedProjectState> {
  if (typeof ref !== 'string' || ref === '') throw new TypeError(`Expected \`ref\` to be a non-empty string, got \`${String(ref)}\` (${typeof ref})`);
  const resources = options.resources ?? OBSERVED_RESOURCES;
  for (const r of resources) {
    if (!VALID.has(r)) throw new TypeError(`Expected \`resources\` to hold only ${OBSERVED_RESOURCES.join(', ')}, got \`${String(r)}\``);
  }
  const call = {
    priority: options.priority ?? 'drift',
    project: options.project ?? ref,
    ...(options.signal ? { signal: options.signal } : {}),
  } as const;
  const state: ObservedProjectState = { ref, observedAt: 0, errors: [] };
  const want = new Set(resources);
  const read = async (resource: ObservedResource, fn: () => Promise<void>) => {
    if (!want.has(resource)) return;
    try {
      await fn();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const entry: ObservedError = { resource, type: (error as Error).name ?? 'Error', message: (error as Error).message };
      if (isApiError(error) && error.status !== undefined) entry.status = error.status;
      state.errors.push(entry);
    }
  };
  await Promise.all([
    read('networkBans', async () => {
      const bans = await api.listAllNetworkBans(ref, call);
      state.networkBans = { bannedIpv4: [...(bans.banned_ipv4_addresses ?? [])].sort() };
    }),
    read('apiKeys', async () => {
      const keys = await api.getProjectApiKeys(ref, { ...call, query: { reveal: false } });
      // Copy named fields only: the key itself and its hash never leave this function.
      state.apiKeys = keys.map((k) => {
        const key: ObservedApiKey = { name: k.name };
        if (k.type) key.type = k.type;
        if (k.prefix) key.prefix = k.prefix;
        if (k.id) key.id = k.id;
        return key;
      });
    }),
    read('backups', async () => {
      const b = await api.listAllBackups(ref, call);
      const completed = b.backups.filter((x) => x.status === 'COMPLETED').map((x) => x.inserted_at).sort();
      const backups: ObservedBackups = { walgEnabled: b.walg_enabled, pitrEnabled: b.pitr_enabled, count: b.backups.length };
      if (completed.length) backups.latestBackupAt = completed[completed.length - 1]!;
      const p = b.physical_backup_data ?? {};
      if (p.earliest_physical_backup_date_unix !== undefined || p.latest_physical_backup_date_unix !== undefined) {
        backups.pitrWindow = {};
        if (p.earliest_physical_backup_date_unix !== undefined) backups.pitrWindow.earliest = p.earliest_physical_backup_date_unix;
        if (p.latest_physical_backup_date_unix !== undefined) backups.pitrWindow.latest = p.latest_physical_backup_date_unix;
      }
      state.backups = backups;
    }),
    read('readOnly', async () => {
      const r = await api.getReadonlyModeStatus(ref, call);
      state.readOnly = { enabled: r.enabled, overrideEnabled: r.override_enabled };
      if (r.override_active_until) state.readOnly.overrideActiveUntil = r.override_active_until;
    }),
    read('health', async () => {
      const items = await api.getServicesHealth(ref, { ...call, query: { services: [...HEALTH_SERVICES] } });
      state.health = items.map((h) => ({ name: h.name, healthy: h.healthy, status: h.status })).sort((a, b) => (a.name < b.name ? -1 : 1));
    }),
    read('upgrade', async () => {
      const u = (await api.getPostgresUpgradeStatus(ref, call)).databaseUpgradeStatus;
      if (!u) {
        state.upgrade = null;
        return;
      }
      state.upgrade = { targetVersion: u.target_version, status: u.status, initiatedAt: u.initiated_at, latestStatusAt: u.latest_status_at };
      if (u.progress) state.upgrade.progress = u.progress;
      if (u.error) state.upgrade.error = u.error;
    }),
  ]);
  state.errors.sort((a, b) => (a.resource < b.resource ? -1 : 1));
  state.observedAt = (options.clock ?? systemClock).now();
  return state;
}

/** True when a read failed for a reason other than the service's answer about the project (network, 5xx, auth, budget). */
export function observationFailed(state: ObservedProjectState): boolean {
  return state.errors.some((e) => e.status === undefined || e.status >= 500 || e.status === 401 || e.status === 403 || e.status === 429);
}
