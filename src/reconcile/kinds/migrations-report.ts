// What the Migrations kind tells beyond its plan entries: its metrics (pending and applied
// migrations by project), the schema version each project is left at (the status record, the
// fleet view and `reconcile status`), and the SQL of each pending file in the plan's markdown.
// The daemon's metrics, the status layer and the renderers reach these through the module's
// facets (KindModule.metrics, .status, .render), never by naming the kind.
import { compareVersions } from '../../manifests/migrations.js';
import type { KindMetrics, KindRender, KindStatus, PassResult, PlanEntry } from '../types.js';

const KIND = 'Migration';
const PENDING = 'reconciler_migrations_pending';
const APPLIED = 'reconciler_migrations_applied_total';

/** Pending migrations per project after the pass, and each migration's outcome. */
export const migrationsMetrics: KindMetrics = {
  definitions: {
    [PENDING]: { type: 'gauge', labels: ['project'], help: 'Migrations of the Migrations documents not yet applied to the project (planned and not applied by the last pass that covered it).' },
    [APPLIED]: { type: 'counter', labels: ['project', 'result'], help: 'Migrations by project and result: applied, failed (the database refused it: nothing of it was kept), blocked (an applied file changed, or an older file is refused).' },
  },
  record(result, projects, series) {
    const succeeded = new Set(result.outcomes.filter((o) => o.result === 'success').map((o) => o.entryId));
    const pending = new Map<string, number>();
    for (const name of projects ?? result.projects.map((p) => p.name)) series.remove(PENDING, { project: name });
    for (const entry of result.plan.entries) {
      if (entry.kind !== KIND || entry.project === undefined) continue;
      const waiting = entry.action === 'create' && !entry.observeOnly && !succeeded.has(entry.id) ? 1 : 0;
      pending.set(entry.project, (pending.get(entry.project) ?? 0) + waiting);
    }
    for (const [project, count] of pending) series.set(PENDING, { project }, count);
    for (const outcome of result.outcomes) {
      if (outcome.kind !== KIND) continue;
      const project = result.plan.entries.find((e) => e.id === outcome.entryId)?.project;
      if (project === undefined) continue;
      if (outcome.action === 'blocked') series.inc(APPLIED, { project, result: 'blocked' });
      else if (outcome.action === 'create' && outcome.result === 'success') series.inc(APPLIED, { project, result: 'applied' });
      else if (outcome.action === 'create' && outcome.result === 'failed') series.inc(APPLIED, { project, result: 'failed' });
    }
  },
};

/**
 * Each project's schema version after the pass: the latest version its history held when
 * planned, or a later one the pass applied (absent when no migration is recorded).
 */
function schemaVersions(result: PassResult): Map<string, Record<string, string>> {
  const applied = new Set(result.outcomes.filter((o) => o.kind === KIND && o.action === 'create' && o.result === 'success').map((o) => o.entryId));
  const versions = new Map<string, string | undefined>();
  for (const entry of result.plan.entries) {
    if (entry.kind !== KIND || entry.project === undefined) continue;
    const target = entry.target as { latest?: string; version?: string } | undefined;
    const candidates = [versions.get(entry.project), target?.latest, applied.has(entry.id) ? target?.version : undefined];
    versions.set(entry.project, candidates.reduce<string | undefined>((max, v) => (v === undefined ? max : max === undefined || compareVersions(v, max) > 0 ? v : max), undefined));
  }
  const facts = new Map<string, Record<string, string>>();
  for (const [project, version] of versions) if (version) facts.set(project, { schemaVersion: version });
  return facts;
}

/** The live report's `schema` of a project: the latest version in its history, and how many files are pending. */
interface SchemaReport {
  version: string | null;
  pending: number;
}

export const migrationsStatus: KindStatus = {
  facts: schemaVersions,
  fields: ['schemaVersion'],
  table: {
    heading: 'Schema versions (Migrations)',
    columns: ['VERSION'],
    row: (facts) => (facts.schemaVersion === undefined ? undefined : [String(facts.schemaVersion)]),
  },
  report: {
    field: 'schema',
    of(entries): SchemaReport | undefined {
      const migrations = entries.filter((e) => e.kind === KIND);
      if (migrations.length === 0) return undefined;
      const latest = migrations.map((e) => (e.target as { latest?: string } | undefined)?.latest).find((v) => v !== undefined);
      return { version: latest ?? null, pending: migrations.filter((e) => e.action === 'create').length };
    },
    lines(value) {
      const schema = value as SchemaReport;
      return [`Schema version: ${schema.version ?? '(no migration applied)'}${schema.pending ? `, ${schema.pending} migration${schema.pending === 1 ? '' : 's'} pending` : ''}`];
    },
  },
};

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The SQL of each pending migration among the entries, once per file and content however many
 * projects it is pending in, each folded.
 */
function migrationSql(entries: readonly PlanEntry[], inline: (text: string) => string): string[] {
  const files = new Map<string, { file: string; version: string; digest: string; sql: string; statements: number; projects: number }>();
  for (const entry of entries) {
    const target = entry.target as { file?: string; version?: string; digest?: string; sql?: string; statements?: number } | undefined;
    if (entry.kind !== KIND || entry.action !== 'create' || !target?.file || target.sql === undefined) continue;
    const key = `${target.file}\0${target.digest}`;
    const known = files.get(key);
    if (known) known.projects++;
    else files.set(key, { file: target.file, version: target.version ?? '', digest: target.digest ?? '', sql: target.sql, statements: target.statements ?? 0, projects: 1 });
  }
  const out: string[] = [];
  for (const file of files.values()) {
    // A fence longer than any run of backticks in the SQL.
    const fence = '`'.repeat(Math.max(3, ...[...file.sql.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    out.push(
      '',
      `<details><summary>${inline(file.file)} (${plural(file.statements, 'statement', 'statements')}, digest ${file.digest.slice(0, 12)}, pending in ${plural(file.projects, 'project', 'projects')})</summary>`,
      '',
      `${fence}sql`,
      file.sql,
      fence,
      '',
      '</details>',
    );
  }
  return out;
}

export const migrationsRender: KindRender = { markdown: migrationSql };
