// The metric names and labels users' dashboards and alerts depend on (the interface table,
// copied here so the tests run without it; metrics.test.ts compares this copy with the
// interface document when that document is beside the repository).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './tools.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export const RECONCILER_METRICS: Record<string, { type: MetricType; labels: string[] }> = {
  reconciler_drift_resources: { type: 'gauge', labels: ['project', 'kind'] },
  reconciler_resource_in_sync: { type: 'gauge', labels: ['project', 'kind', 'name'] },
  reconciler_reconcile_total: { type: 'counter', labels: ['result'] },
  reconciler_reconcile_duration_seconds: { type: 'histogram', labels: [] },
  reconciler_apply_total: { type: 'counter', labels: ['kind', 'action', 'result'] },
  reconciler_api_requests_total: { type: 'counter', labels: ['method', 'route', 'code'] },
  reconciler_api_request_duration_seconds: { type: 'histogram', labels: ['method', 'route'] },
  reconciler_api_rate_limited_total: { type: 'counter', labels: [] },
  reconciler_api_budget_remaining: { type: 'gauge', labels: [] },
  reconciler_api_budget_limit: { type: 'gauge', labels: [] },
  reconciler_queue_depth: { type: 'gauge', labels: ['priority'] },
  reconciler_observation_age_seconds: { type: 'gauge', labels: ['project'] },
  reconciler_last_success_timestamp_seconds: { type: 'gauge', labels: [] },
  reconciler_manifest_errors: { type: 'gauge', labels: [] },
  reconciler_source_info: { type: 'gauge', labels: ['revision'] },
  reconciler_project_status: { type: 'gauge', labels: ['project', 'status'] },
  reconciler_project_health: { type: 'gauge', labels: ['project', 'service'] },
  reconciler_migrations_pending: { type: 'gauge', labels: ['project'] },
  reconciler_migrations_applied_total: { type: 'counter', labels: ['project', 'result'] },
  reconciler_rollout_wave_state: { type: 'gauge', labels: ['rollout', 'wave', 'state'] },
  reconciler_changes_waiting: { type: 'gauge', labels: ['reason'] },
  reconciler_project_revision_info: { type: 'gauge', labels: ['project', 'revision'] },
  reconciler_revision_broken: { type: 'gauge', labels: [] },
};

/**
 * The metrics the interface plans (its "Planned by the open issues" list), which the dashboard
 * and alerts already use: other changes export them. A daemon that does not export one yet
 * simply has no such series; one that does must give it this type and these labels.
 */
export const PLANNED_METRICS: Record<string, { type: MetricType; labels: string[] }> = {
  reconciler_observation_age_bound_seconds: { type: 'gauge', labels: [] },
  reconciler_drift_detected_total: { type: 'counter', labels: ['kind', 'trigger'] },
  reconciler_drift_repaired_total: { type: 'counter', labels: ['kind', 'trigger'] },
  reconciler_resource_condition: { type: 'gauge', labels: ['project', 'kind', 'name', 'state'] },
  reconciler_build_info: { type: 'gauge', labels: ['version', 'revision'] },
  reconciler_unowned_projects: { type: 'gauge', labels: [] },
  reconciler_state_lock_held: { type: 'gauge', labels: [] },
  reconciler_notifications_total: { type: 'counter', labels: ['receiver', 'result'] },
};

/** git-sync v4's own metrics (`--http-metrics`), scraped from the sidecar under the same job. */
export const GIT_SYNC_METRICS: Record<string, { type: MetricType; labels: string[] }> = {
  git_sync_count_total: { type: 'counter', labels: ['status'] },
  git_fetch_count_total: { type: 'counter', labels: [] },
};

/**
 * Environment variables of the interface that the chart sets but that the command in this
 * tree may not read yet (they come with the shard map, rate models, continuous resync,
 * notifications and log formats).
 */
export const INTERFACE_ENV = ['RECONCILE_SHARD', 'RECONCILE_SHARDS', 'RECONCILE_RATE_MODEL', 'RECONCILE_MAX_OBSERVATION_AGE', 'RECONCILE_NOTIFICATIONS', 'RECONCILE_LOG_FORMAT'];

/**
 * Metrics beyond the interface's list: the observed-only facts the daemon exports for the items
 * of `--observe` (the README's metrics table documents them). Absent from a daemon's default
 * /metrics series (the default reads health only), but always typed there.
 */
export const OBSERVED_METRICS: Record<string, { type: MetricType; labels: string[] }> = {
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
};

/** prom-client's default process and Node.js metrics that the dashboard and alerts use. */
export const DEFAULT_METRICS: Record<string, { type: MetricType; labels: string[] }> = {
  process_start_time_seconds: { type: 'gauge', labels: [] },
  process_resident_memory_bytes: { type: 'gauge', labels: [] },
  process_cpu_seconds_total: { type: 'counter', labels: [] },
  nodejs_heap_size_used_bytes: { type: 'gauge', labels: [] },
};

/** Labels Prometheus adds to every scraped series (target labels; `shard` from the chart's per-shard ServiceMonitors), plus `up`. */
export const TARGET_LABELS = ['job', 'instance', 'namespace', 'shard'];
export const SYNTHETIC_METRICS = new Set(['up']);

/** The series names a metric family exposes. */
export function seriesNames(name: string, type: MetricType): string[] {
  return type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
}

/** Base metric of a series name (`x_bucket` -> `x` for histograms), with its catalogue entry. */
export function familyOf(series: string): { name: string; type: MetricType; labels: string[]; extraLabels: string[] } | undefined {
  const all = { ...RECONCILER_METRICS, ...PLANNED_METRICS, ...GIT_SYNC_METRICS, ...OBSERVED_METRICS, ...DEFAULT_METRICS };
  if (all[series]) return { name: series, ...all[series]!, extraLabels: [] };
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = series.endsWith(suffix) ? series.slice(0, -suffix.length) : undefined;
    if (base && all[base]?.type === 'histogram') return { name: base, ...all[base]!, extraLabels: suffix === '_bucket' ? ['le'] : [] };
  }
  return undefined;
}

/** The interface document, when the repository sits beside it (developers' machines and CI). */
export function interfaceDocument(): string | undefined {
  for (const path of [join(REPO_ROOT, '..', 'shared', 'INTERFACE.md'), join(REPO_ROOT, 'shared', 'INTERFACE.md')]) {
    if (existsSync(path)) return readFileSync(path, 'utf8');
  }
  return undefined;
}

/** Parses the metrics table of the interface document: `| name | type | labels |`. */
export function metricsFromInterface(text: string): Record<string, { type: MetricType; labels: string[] }> {
  const metrics: Record<string, { type: MetricType; labels: string[] }> = {};
  for (const line of text.split('\n')) {
    const match = /^\|\s*`(reconciler_[a-z_]+)`\s*\|\s*([a-z]+)[^|]*\|\s*([^|]*)\|/.exec(line);
    if (!match) continue;
    const labels = match[3]!.split(',').map((l) => l.trim()).filter(Boolean);
    metrics[match[1]!] = { type: match[2] as MetricType, labels };
  }
  return metrics;
}

/** Parses the interface's planned list: "- `reconciler_x`, gauge (1), labels a, b." */
export function plannedFromInterface(text: string): Record<string, { type: MetricType; labels: string[] }> {
  const metrics: Record<string, { type: MetricType; labels: string[] }> = {};
  for (const line of text.split('\n')) {
    const match = /^- `(reconciler_[a-z_]+)`, ([a-z]+)[^,]*(?:, labels ([a-z_, ]+))?\./.exec(line);
    if (!match) continue;
    metrics[match[1]!] = { type: match[2] as MetricType, labels: (match[3] ?? '').split(',').map((l) => l.trim()).filter(Boolean) };
  }
  return metrics;
}

/** Environment variable names in the interface's options table. */
export function envFromInterface(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) continue;
    for (const m of line.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1]!);
  }
  return names;
}
