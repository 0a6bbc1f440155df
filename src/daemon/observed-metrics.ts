// Gauges for the observed-only facts (`--observe`): network bans, API keys, backups and the
// point-in-time recovery window, read-only mode, upgrade status. Only counts, flags and times
// reach /metrics: never a key, a hash, a key name or a banned address.
import { Gauge, type Registry } from 'prom-client';
import type { ObservedError, ObservedProjectState, ObservedResource, ObservedUpgrade } from '../reconcile/kinds/observed.js';

export const OBSERVED_METRIC_DEFINITIONS = {
  reconciler_observed_network_bans: { type: 'gauge', labels: ['project'] },
  reconciler_observed_api_keys: { type: 'gauge', labels: ['project', 'type'] },
  reconciler_observed_backup_last_timestamp_seconds: { type: 'gauge', labels: ['project'] },
  reconciler_observed_pitr_enabled: { type: 'gauge', labels: ['project'] },
  reconciler_observed_pitr_earliest_timestamp_seconds: { type: 'gauge', labels: ['project'] },
  reconciler_observed_pitr_latest_timestamp_seconds: { type: 'gauge', labels: ['project'] },
  reconciler_observed_readonly: { type: 'gauge', labels: ['project'] },
  reconciler_observed_readonly_override: { type: 'gauge', labels: ['project'] },
  reconciler_observed_upgrade_in_progress: { type: 'gauge', labels: ['project'] },
  reconciler_observed_upgrade_failed: { type: 'gauge', labels: ['project'] },
} as const;

/** Key types the service knows (more may appear: they get their own series). */
const API_KEY_TYPES = ['legacy', 'publishable', 'secret'];

/** Upgrade progress values after which the new version serves (the engine's planning agrees). */
const UPGRADE_DONE = new Set(['9_completed_upgrade', '10_completed_post_physical_backup']);

/** What the gauges show for one project: each part present only when its read succeeded. */
interface ObservedFacts {
  networkBans?: number;
  /** Count by key type. */
  apiKeys?: Map<string, number>;
  backups?: { lastCompletedSeconds?: number; pitrEnabled: boolean; pitrEarliestSeconds?: number; pitrLatestSeconds?: number };
  readOnly?: { enabled: boolean; overrideActive: boolean };
  upgrade?: { inProgress: boolean; failed: boolean };
}

type FactKey = keyof ObservedFacts;
const FACT_OF: Partial<Record<ObservedResource, FactKey>> = {
  networkBans: 'networkBans',
  apiKeys: 'apiKeys',
  backups: 'backups',
  readOnly: 'readOnly',
  upgrade: 'upgrade',
};

/**
 * A read that failed without the service saying anything about the project (no answer, 5xx,
 * auth, budget): the last value stays, since the fact itself is unknown, not gone. A 4xx answer
 * (a paused project has no backups to list) is a fact: its series go.
 */
function transient(error: ObservedError): boolean {
  return error.status === undefined || error.status >= 500 || error.status === 401 || error.status === 403 || error.status === 429;
}

function upgradeFacts(upgrade: ObservedUpgrade | null): { inProgress: boolean; failed: boolean } {
  if (upgrade === null) return { inProgress: false, failed: false };
  // Status 0 is a failed attempt even when no error step is named.
  const failed = upgrade.error !== undefined || upgrade.status === 0;
  const done = upgrade.progress !== undefined && UPGRADE_DONE.has(upgrade.progress);
  return { inProgress: !failed && !done, failed };
}

function seconds(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** The facts of a new observation, keeping from `previous` what a transient failure left unknown. */
function observedFacts(state: ObservedProjectState, previous: ObservedFacts | undefined): ObservedFacts {
  const facts: ObservedFacts = {};
  if (state.networkBans) facts.networkBans = state.networkBans.bannedIpv4.length;
  if (state.apiKeys) {
    // The known types always have a series (0 when none): a key type that vanished shows as 0, not as absent.
    const byType = new Map<string, number>(API_KEY_TYPES.map((type) => [type, 0]));
    for (const key of state.apiKeys) byType.set(key.type ?? 'unknown', (byType.get(key.type ?? 'unknown') ?? 0) + 1);
    facts.apiKeys = byType;
  }
  if (state.backups) {
    const b = state.backups;
    facts.backups = { pitrEnabled: b.pitrEnabled };
    const last = seconds(b.latestBackupAt);
    if (last !== undefined) facts.backups.lastCompletedSeconds = last;
    if (b.pitrWindow?.earliest !== undefined) facts.backups.pitrEarliestSeconds = b.pitrWindow.earliest;
    if (b.pitrWindow?.latest !== undefined) facts.backups.pitrLatestSeconds = b.pitrWindow.latest;
  }
  if (state.readOnly) facts.readOnly = { enabled: state.readOnly.enabled, overrideActive: state.readOnly.overrideEnabled };
  if (state.upgrade !== undefined) facts.upgrade = upgradeFacts(state.upgrade);
  for (const error of state.errors) {
    const key = FACT_OF[error.resource];
    if (key && transient(error) && previous?.[key] !== undefined) (facts as Record<FactKey, unknown>)[key] = previous[key];
  }
  return facts;
}

interface ObservedGauges {
  /** Replaces a project's facts with those of a new observation. */
  set(project: string, state: ObservedProjectState): void;
  /** Keeps only these projects' series. */
  retain(keep: ReadonlySet<string>): void;
}

export function createObservedGauges(registry: Registry): ObservedGauges {
  const facts = new Map<string, ObservedFacts>();
  const gauge = (name: keyof typeof OBSERVED_METRIC_DEFINITIONS, help: string) =>
    new Gauge({ name, help, labelNames: [...OBSERVED_METRIC_DEFINITIONS[name].labels], registers: [registry] });

  const bans = gauge('reconciler_observed_network_bans', 'IPv4 addresses the project currently bans (network bans), at the last observation.');
  const apiKeys = gauge('reconciler_observed_api_keys', 'API keys of the project by type, at the last observation (counts only: never a key, hash or name).');
  const backupLast = gauge('reconciler_observed_backup_last_timestamp_seconds', 'Unix time of the newest completed backup of the project.');
  const pitrEnabled = gauge('reconciler_observed_pitr_enabled', '1 when point-in-time recovery is enabled for the project, else 0.');
  const pitrEarliest = gauge('reconciler_observed_pitr_earliest_timestamp_seconds', 'Earliest point the project can be recovered to (Unix time), when the service reports a window.');
  const pitrLatest = gauge('reconciler_observed_pitr_latest_timestamp_seconds', 'Latest point the project can be recovered to (Unix time), when the service reports a window.');
  const readonly = gauge('reconciler_observed_readonly', '1 when the project is in read-only mode, else 0.');
  const readonlyOverride = gauge('reconciler_observed_readonly_override', '1 while a temporary override of read-only mode is active, else 0.');
  const upgradeInProgress = gauge('reconciler_observed_upgrade_in_progress', '1 while a Postgres upgrade of the project is in progress, else 0.');
  const upgradeFailed = gauge('reconciler_observed_upgrade_failed', "1 when the project's latest Postgres upgrade failed, else 0.");
  const all = [bans, apiKeys, backupLast, pitrEnabled, pitrEarliest, pitrLatest, readonly, readonlyOverride, upgradeInProgress, upgradeFailed];

  function rebuild(): void {
    for (const g of all) g.reset();
    for (const [project, f] of facts) {
      if (f.networkBans !== undefined) bans.set({ project }, f.networkBans);
      for (const [type, count] of f.apiKeys ?? []) apiKeys.set({ project, type }, count);
      if (f.backups) {
        pitrEnabled.set({ project }, f.backups.pitrEnabled ? 1 : 0);
        if (f.backups.lastCompletedSeconds !== undefined) backupLast.set({ project }, f.backups.lastCompletedSeconds);
        if (f.backups.pitrEarliestSeconds !== undefined) pitrEarliest.set({ project }, f.backups.pitrEarliestSeconds);
        if (f.backups.pitrLatestSeconds !== undefined) pitrLatest.set({ project }, f.backups.pitrLatestSeconds);
      }
      if (f.readOnly) {
        readonly.set({ project }, f.readOnly.enabled ? 1 : 0);
        readonlyOverride.set({ project }, f.readOnly.overrideActive ? 1 : 0);
      }
      if (f.upgrade) {
        upgradeInProgress.set({ project }, f.upgrade.inProgress ? 1 : 0);
        upgradeFailed.set({ project }, f.upgrade.failed ? 1 : 0);
      }
    }
  }

  return {
    set(project, state) {
      facts.set(project, observedFacts(state, facts.get(project)));
      rebuild();
    },
    retain(keep) {
      for (const project of [...facts.keys()]) if (!keep.has(project)) facts.delete(project);
      rebuild();
    },
  };
}
