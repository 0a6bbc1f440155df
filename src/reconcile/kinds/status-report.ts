// `reconcile status`: every managed resource of every project, in sync / drifted / pending /
// failed with the time it was last observed, plus the observed-only facts of each project.
// Built from a dry pass (the plan) and the observed reads; rendered as text or JSON.
import { KIND_MODULES } from '../registry.js';
import { stateOfPlanEntry } from '../summary.js';
import type { PassResult, PlanEntry, ResourceKind, ResourceState, ResourceStatus } from '../types.js';
import type { ObservedProjectState } from './observed.js';
import { rolloutLines, stateTable as table } from '../render/format.js';
import { shortRevision, type RolloutSummary } from '../rollout/gate.js';

interface StatusResource {
  id: string;
  kind: ResourceKind;
  name: string;
  state: ResourceState;
  /** Drifted field paths (names only, never values). */
  fields?: string[];
  message?: string;
  /** ISO time of the last observation. */
  observedAt?: string;
}

export interface ProjectStatus {
  name: string;
  ref?: string;
  status?: string;
  observedAt?: string;
  resources: StatusResource[];
  observed?: ObservedProjectState;
  /** With a Rollout document: the revision last applied to the project in full. */
  appliedRevision?: string;
  /**
   * What the registry's kinds report of the project from their plan entries (KindModule.status),
   * each a field of its own: `schema`, the latest version in its migrations history and how many
   * files are pending (Migrations documents).
   */
  [field: string]: unknown;
}

interface StatusReport {
  /** ISO time the report was made. */
  generatedAt: string;
  revision?: string;
  /** The dry pass's result (`failed` when a read failed). */
  result: PassResult['result'];
  counts: Record<ResourceState, number>;
  /** Resources that belong to no project (organizations, projects that are neither declared nor live). */
  resources: StatusResource[];
  projects: ProjectStatus[];
  manifestErrors: PassResult['manifestErrors'];
  /** The daemon's last statement of freshness (its state directory's freshness file), when a daemon runs on it. */
  freshness?: DaemonFreshness;
  /** With a Rollout document: each wave's state, a halt, the changes waiting for a window or an approval. */
  rollout?: Omit<RolloutSummary, 'events'>;
}

/** How fresh a daemon's observations are, as it last wrote them. */
export interface DaemonFreshness {
  /** `continuous` or the cron expression of `--resync`. */
  resync: string;
  /** When the daemon wrote it (ms since the epoch). */
  writtenAt: number;
  /** Seconds since the least recently observed project was observed, at the report's time. */
  largestAgeSeconds?: number;
  oldestProject?: string;
  /** The floor of the largest observation age the budget allows, seconds. */
  boundSeconds?: number;
  /** `--max-observation-age`, seconds. */
  maxObservationAgeSeconds?: number;
}

function seconds(value: number): string {
  return `${Math.round(value)} s`;
}

/** One line: the largest observation age, the bound and the limit. */
export function freshnessLine(f: DaemonFreshness): string {
  const parts = [
    f.largestAgeSeconds !== undefined ? `largest observation age ${seconds(f.largestAgeSeconds)}${f.oldestProject ? ` (${f.oldestProject})` : ''}` : 'no project observed yet',
    f.boundSeconds !== undefined ? `bound ${seconds(f.boundSeconds)}` : 'bound not known yet',
    ...(f.maxObservationAgeSeconds !== undefined ? [`--max-observation-age ${seconds(f.maxObservationAgeSeconds)}${f.largestAgeSeconds !== undefined && f.largestAgeSeconds > f.maxObservationAgeSeconds ? ' EXCEEDED' : ''}`] : []),
  ];
  return `Daemon freshness (--resync ${f.resync}, written ${new Date(f.writtenAt).toISOString()}): ${parts.join(', ')}`;
}

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** The state of an entry for which the pass reported no ResourceStatus. */
const stateOfEntry = stateOfPlanEntry;

function fromStatus(status: ResourceStatus): StatusResource {
  const out: StatusResource = { id: status.id, kind: status.kind, name: status.name, state: status.state };
  if (status.fields?.length) out.fields = [...status.fields];
  if (status.message) out.message = status.message;
  const at = iso(status.observedAt);
  if (at) out.observedAt = at;
  return out;
}

/** What the plan would do, in words, for a resource that is not in sync. */
function planMessage(entry: PlanEntry): string | undefined {
  if (entry.action === 'create') return 'to be created';
  if (entry.action === 'delete') return `to be deleted${entry.reason ? `: ${entry.reason}` : ''}`;
  return entry.reason;
}

function fromEntry(entry: PlanEntry, observedAt: number | undefined): StatusResource {
  const out: StatusResource = { id: entry.id, kind: entry.kind, name: entry.name, state: stateOfEntry(entry) };
  const fields = entry.changes.map((c) => c.path);
  if (fields.length && out.state !== 'in_sync') out.fields = fields;
  const message = planMessage(entry);
  if (message && out.state !== 'in_sync') out.message = message;
  const at = iso(observedAt);
  if (at) out.observedAt = at;
  return out;
}

/** The project a resource is listed under: its own project, or itself for a Project. */
function ownerOf(item: { kind: ResourceKind; name: string; project?: string }): { project?: string } {
  if (item.project !== undefined) return { project: item.project };
  return item.kind === 'Project' ? { project: item.name } : {};
}

/** The fields the registry's kinds report of one project from its plan entries (KindModule.status.report), in registry order. */
function kindReports(entries: readonly PlanEntry[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const module of KIND_MODULES) {
    const report = module.status?.report;
    const value = report?.of(entries.filter((e) => e.kind === module.kind));
    if (report && value !== undefined) fields[report.field] = value;
  }
  return fields;
}

/** The lines the registry's kinds print under a project for the fields they reported. */
function kindReportLines(project: ProjectStatus): string[] {
  return KIND_MODULES.flatMap((module) => {
    const report = module.status?.report;
    return report && project[report.field] !== undefined ? report.lines(project[report.field]) : [];
  });
}

export function buildStatusReport(result: PassResult, observed: ReadonlyMap<string, ObservedProjectState>, now: number): StatusReport {
  const byId = new Map(result.resources.map((r) => [r.id, r]));
  const all: Array<StatusResource & { project?: string }> = [];
  const seen = new Set<string>();
  // The pass's own statuses win (they include apply outcomes); plan entries fill any gap.
  const entryById = new Map(result.plan.entries.map((e) => [e.id, e]));
  for (const status of result.resources) {
    seen.add(status.id);
    const item = fromStatus(status);
    const entry = entryById.get(status.id);
    if (!item.message && item.state !== 'in_sync' && entry) {
      const message = planMessage(entry);
      if (message) item.message = message;
    }
    all.push({ ...item, ...ownerOf(status) });
  }
  for (const entry of result.plan.entries) {
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    all.push({ ...fromEntry(entry, byId.get(entry.id)?.observedAt ?? result.finishedAt), ...ownerOf(entry) });
  }
  // A failed outcome marks its resource failed whatever the plan said.
  for (const outcome of result.outcomes) {
    const item = all.find((r) => r.id === outcome.entryId);
    if (item && outcome.result === 'failed') {
      item.state = 'failed';
      if (outcome.error) item.message = `${outcome.error.type}: ${outcome.error.message}`;
    }
  }
  const counts: Record<ResourceState, number> = { in_sync: 0, drifted: 0, held: 0, pending: 0, failed: 0 };
  for (const r of all) counts[r.state] += 1;

  const projectNames = new Set<string>([...result.projects.map((p) => p.name), ...all.flatMap((r) => (r.project ? [r.project] : []))]);
  const projects: ProjectStatus[] = [...projectNames].sort().map((name) => {
    const info = result.projects.find((p) => p.name === name);
    const project: ProjectStatus = {
      name,
      resources: all.filter((r) => r.project === name).map(strip).sort(byKindThenName),
    };
    if (info?.ref) project.ref = info.ref;
    if (info?.status) project.status = info.status;
    const at = iso(info?.observedAt);
    if (at) project.observedAt = at;
    const facts = info?.ref ? observed.get(info.ref) : undefined;
    if (facts) project.observed = facts;
    Object.assign(project, kindReports(result.plan.entries.filter((e) => e.project === name)));
    return project;
  });
  const report: StatusReport = {
    generatedAt: new Date(now).toISOString(),
    result: result.result,
    counts,
    resources: all.filter((r) => r.project === undefined).map(strip).sort(byKindThenName),
    projects,
    manifestErrors: result.manifestErrors,
  };
  if (result.revision) report.revision = result.revision;
  if (result.rollout) {
    const { events: _events, ...rollout } = result.rollout;
    report.rollout = rollout;
    for (const project of projects) {
      const applied = rollout.revisions[project.name];
      if (applied) project.appliedRevision = applied.revision;
    }
  }
  return report;
}

function strip(r: StatusResource & { project?: string }): StatusResource {
  const { project: _project, ...rest } = r;
  return rest;
}

function byKindThenName(a: StatusResource, b: StatusResource): number {
  return a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1;
}


/** Tables stay readable: a long field list is cut (the JSON output has all of it). */
const MAX_FIELDS_SHOWN = 8;
function shortList(fields: readonly string[]): string {
  if (fields.length <= MAX_FIELDS_SHOWN) return fields.join(', ');
  return `${fields.slice(0, MAX_FIELDS_SHOWN).join(', ')} (+${fields.length - MAX_FIELDS_SHOWN} more)`;
}

function resourceRows(resources: StatusResource[]): string[][] {
  return [
    ['KIND', 'NAME', 'STATE', 'LAST OBSERVED', 'DETAIL'],
    ...resources.map((r) => [
      r.kind,
      r.name,
      r.state,
      r.observedAt ?? '-',
      [r.fields?.length ? `fields: ${shortList(r.fields)}` : '', r.message ?? ''].filter(Boolean).join('; '),
    ]),
  ];
}

/** One line per observed-only fact. */
function observedLines(state: ObservedProjectState): string[] {
  const lines: string[] = [];
  if (state.health) {
    const bad = state.health.filter((h) => !h.healthy);
    lines.push(`health: ${state.health.length - bad.length}/${state.health.length} services healthy${bad.length ? ` (not healthy: ${bad.map((h) => `${h.name} ${h.status}`).join(', ')})` : ''}`);
  }
  if (state.readOnly) {
    lines.push(`read-only mode: ${state.readOnly.enabled ? 'ON' : 'off'}${state.readOnly.overrideEnabled ? ` (override until ${state.readOnly.overrideActiveUntil ?? '?'})` : ''}`);
  }
  if (state.networkBans) {
    lines.push(`network bans: ${state.networkBans.bannedIpv4.length ? state.networkBans.bannedIpv4.join(', ') : 'none'}`);
  }
  if (state.apiKeys) {
    lines.push(`API keys: ${state.apiKeys.length ? state.apiKeys.map((k) => `${k.name} (${[k.type, k.prefix ? `prefix ${k.prefix}` : ''].filter(Boolean).join(', ') || 'no type'})`).join('; ') : 'none'}`);
  }
  if (state.backups) {
    const b = state.backups;
    const window = b.pitrWindow
      ? `, recovery window ${b.pitrWindow.earliest !== undefined ? new Date(b.pitrWindow.earliest * 1000).toISOString() : '?'} .. ${b.pitrWindow.latest !== undefined ? new Date(b.pitrWindow.latest * 1000).toISOString() : '?'}`
      : '';
    lines.push(`backups: ${b.count}${b.latestBackupAt ? `, latest ${b.latestBackupAt}` : ''}; PITR ${b.pitrEnabled ? 'on' : 'off'}${window}`);
  }
  if (state.upgrade !== undefined) {
    const u = state.upgrade;
    lines.push(`upgrade: ${u === null ? 'none' : `to ${u.targetVersion}, ${u.progress ?? 'no progress yet'}${u.error ? `, error ${u.error}` : ''}`}`);
  }
  for (const e of state.errors) lines.push(`${e.resource}: not read (${e.type}: ${e.message})`);
  return lines;
}

export function renderStatusText(report: StatusReport, options: { color: boolean }): string {
  const out: string[] = [];
  const c = report.counts;
  out.push(`Status at ${report.generatedAt}${report.revision ? ` (revision ${report.revision})` : ''}: ${c.in_sync} in sync, ${c.drifted} drifted, ${c.held ? `${c.held} held, ` : ''}${c.pending} pending, ${c.failed} failed`);
  if (report.freshness) out.push(freshnessLine(report.freshness));
  if (report.rollout) {
    out.push(...rolloutLines(report.rollout));
    for (const change of report.rollout.waiting) out.push(`  ${change.id}: ${change.reason === 'window' ? 'waiting for a window' : 'waiting for approval'} since ${new Date(change.since).toISOString()}: ${change.message}`);
  }
  for (const e of report.manifestErrors) out.push(`manifest error: ${e.file}:${e.line}:${e.column} ${e.path} ${e.message}`);
  if (report.resources.length) {
    out.push('', 'Organizations and fleet');
    out.push(...table(resourceRows(report.resources), options.color, 2).map((l) => `  ${l}`));
  }
  for (const project of report.projects) {
    out.push('', `Project ${project.name}${project.ref ? ` (ref ${project.ref}${project.status ? `, ${project.status}` : ''})` : ' (not created yet)'}${project.observedAt ? `, observed ${project.observedAt}` : ''}${project.appliedRevision ? `, applied revision ${shortRevision(project.appliedRevision)}` : ''}`);
    if (project.resources.length) out.push(...table(resourceRows(project.resources), options.color, 2).map((l) => `  ${l}`));
    else out.push('  (no managed resources)');
    out.push(...kindReportLines(project).map((l) => `  ${l}`));
    if (project.observed) {
      out.push(`  Observed only (read ${new Date(project.observed.observedAt).toISOString()}):`);
      out.push(...observedLines(project.observed).map((l) => `    ${l}`));
    }
  }
  return `${out.join('\n')}\n`;
}

export function renderStatusJson(report: StatusReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
