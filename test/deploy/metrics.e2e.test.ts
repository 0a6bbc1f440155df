// Every metric the dashboard and the alert rules use exists, with those labels, in the
// interface's list and in the /metrics output of a running daemon.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_METRICS, GIT_SYNC_METRICS, OBSERVED_METRICS, PLANNED_METRICS, RECONCILER_METRICS, SYNTHETIC_METRICS, TARGET_LABELS, familyOf, interfaceDocument, metricsFromInterface, plannedFromInterface, seriesNames } from './metrics-catalogue.js';
import { OBSERVED_METRIC_DEFINITIONS } from '../../src/daemon/observed-metrics.js';
import { dashboardExpressions, promqlUse } from './promql.js';
import { ALERTS_FILE, DASHBOARD_FILE, NODE24, REPO_ROOT, freePort } from './tools.js';

interface Use {
  where: string;
  expr: string;
}

function alertExpressions(): Use[] {
  const rules = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

function dashboardUses(): Use[] {
  return dashboardExpressions(JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')));
}

const USES = [...dashboardUses(), ...alertExpressions()];

describe('metric names in the dashboard and alert rules', () => {
  it('the catalogue these tests use is the interface document\'s table', (context) => {
    const document = interfaceDocument();
    if (!document) {
      context.skip();
      return;
    }
    // A planned name moves into the table when its change lands: compare the union.
    expect({ ...metricsFromInterface(document), ...plannedFromInterface(document) }).toEqual({ ...RECONCILER_METRICS, ...PLANNED_METRICS });
    expect(Object.keys(plannedFromInterface(document)).length + Object.keys(metricsFromInterface(document)).length).toBe(Object.keys(RECONCILER_METRICS).length + Object.keys(PLANNED_METRICS).length);
  });

  it('the observed-only facts of the catalogue are the daemon\'s own definitions', () => {
    expect(OBSERVED_METRICS).toEqual(JSON.parse(JSON.stringify(OBSERVED_METRIC_DEFINITIONS)));
  });

  it('reads metric and label names out of PromQL', () => {
    const use = promqlUse('histogram_quantile(0.9, sum by (le, route) (rate(reconciler_api_request_duration_seconds_bucket{job=~"$job"}[$__rate_interval]))) / on (job) group_left up');
    expect([...use.metrics].sort()).toEqual(['reconciler_api_request_duration_seconds_bucket', 'up']);
    expect([...use.labels].sort()).toEqual(['job', 'le', 'route']);
    expect([...promqlUse('(time() - a_b{x="1"} > 3600) and (c offset 5m) or absent(d)').metrics].sort()).toEqual(['a_b', 'c', 'd']);
  });

  it('uses only metrics of the interface (or the default process metrics), each with its own labels', () => {
    expect(USES.length).toBeGreaterThan(30);
    const used = new Set<string>();
    for (const { where, expr } of USES) {
      const use = promqlUse(expr);
      expect(use.metrics.size, `${where}: ${expr}`).toBeGreaterThan(0);
      const allowed = new Set(TARGET_LABELS);
      for (const metric of use.metrics) {
        used.add(metric);
        if (SYNTHETIC_METRICS.has(metric)) continue;
        const family = familyOf(metric);
        expect(family, `${where}: unknown metric ${metric}`).toBeDefined();
        for (const label of [...family!.labels, ...family!.extraLabels]) allowed.add(label);
        if (family!.type === 'histogram') expect(metric, `${where}: a histogram is read through its series`).not.toBe(family!.name);
      }
      for (const label of use.labels) expect(allowed.has(label), `${where}: label ${label} is not a label of ${[...use.metrics].join(', ')}`).toBe(true);
    }
    // The dashboard shows every metric of the interface somewhere.
    const families = new Set([...used].map((m) => familyOf(m)?.name).filter(Boolean));
    for (const name of [...Object.keys(RECONCILER_METRICS), ...Object.keys(PLANNED_METRICS)]) {
      if (name === 'reconciler_resource_in_sync') continue;
      expect(families.has(name), `${name} is shown or alerted on`).toBe(true);
    }
    expect(families.has('git_sync_count_total'), 'git-sync is alerted on').toBe(true);
  });

  it('the dashboard has a shard variable every query honours, and shows the last success per shard', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
    const shard = dashboard.templating.list.find((v: { name: string }) => v.name === 'shard');
    // All matches an install without shards too (no shard label).
    expect(shard).toMatchObject({ type: 'query', includeAll: true, multi: true, allValue: '.*', definition: 'label_values(reconciler_manifest_errors{job=~"$job"}, shard)' });
    for (const { where, expr } of dashboardExpressions(dashboard)) {
      if (where.startsWith('variable')) continue;
      const selectors = expr.match(/\{[^}]*\}/g) ?? [];
      for (const selector of selectors.filter((s) => s.includes('job=~'))) expect(selector, `${where}: ${expr}`).toContain('shard=~"$shard"');
    }
    const stat = dashboard.panels.find((p: { title: string }) => p.title === 'Since last successful pass');
    // One value per shard: the age of each shard's latest success, so one stuck shard is not
    // hidden behind the others' recent successes.
    expect(stat.targets[0].expr).toContain('max by (shard) (reconciler_last_success_timestamp_seconds{job=~"$job", shard=~"$shard"} > 0)');
    expect(stat.targets[0].expr).not.toMatch(/^time\(\) - max\(/);
    expect(stat.targets[0].legendFormat).toBe('{{shard}}');
  });

  it('the dashboard is importable on its own: a datasource input, a datasource variable, no fixed id', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    expect(dashboard.id).toBeNull();
    expect(dashboard.uid).toBe('reconciler-overview');
    const datasourceVariable = dashboard.templating.list.find((v: { name: string }) => v.name === 'datasource');
    expect(datasourceVariable).toMatchObject({ type: 'datasource', query: 'prometheus', current: { value: '${DS_PROMETHEUS}' } });
    const panels = dashboard.panels.filter((p: { type: string }) => p.type !== 'row');
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const target of panel.targets) expect(target.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
    }
    expect(new Set(dashboard.panels.map((p: { id: number }) => p.id)).size).toBe(dashboard.panels.length);
    const titles = panels.map((p: { title: string }) => p.title);
    for (const title of ['Drift over time', 'Out of sync by project and kind', 'Apply results', 'API requests by route and code', '429s', 'Budget remaining vs limit', 'Queue depth by priority', 'Observation staleness', 'Pass duration', 'Project status', 'Project health']) {
      expect(titles).toContain(title);
    }
  });
});

/** Metric families and series of a Prometheus text exposition. */
function parseExposition(text: string): { types: Map<string, string>; series: { name: string; labels: Record<string, string>; value: number }[] } {
  const types = new Map<string, string>();
  const series: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!sample) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    series.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { types, series };
}

describe('metric names against a running daemon', () => {
  const bin = join(REPO_ROOT, 'dist', 'cli', 'bin.js');
  let daemon: ChildProcess | undefined;
  let stateDir: string;
  let exposition: ReturnType<typeof parseExposition>;
  let output = '';
  let exit: Promise<number | null>;

  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npx tsc -p .)`);
    stateDir = mkdtempSync(join(tmpdir(), 'reconciler-metrics-'));
    const port = await freePort();
    // --dry-run: the sandboxed pass only observes, so it finishes quickly and changes nothing.
    daemon = spawn(NODE24, [bin, join(REPO_ROOT, 'examples'), '--watch', '--sandbox', '--dry-run', '--metrics-addr', `127.0.0.1:${port}`, '--state-dir', stateDir, '--log-level', 'warn'], {
      cwd: stateDir,
      env: { PATH: process.env.PATH ?? '', HOME: stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    daemon.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exit = new Promise((resolve) => daemon!.once('exit', (code) => resolve(code)));
    // Poll until the first pass has been recorded (its duration histogram counts it).
    for (let attempt = 0; ; attempt++) {
      if (daemon.exitCode !== null) throw new Error(`the daemon exited with ${daemon.exitCode}: ${output}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/metrics`);
        const parsed = parseExposition(await response.text());
        if (parsed.series.some((s) => s.name === 'reconciler_reconcile_duration_seconds_count' && s.value >= 1)) {
          exposition = parsed;
          break;
        }
      } catch {
        // not listening yet
      }
      if (attempt > 600) throw new Error(`no pass recorded on /metrics after 600 polls: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 120_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGKILL');
      await exit;
    }
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('exports every metric of the interface (and the observed-only facts), with its type', () => {
    for (const [name, spec] of Object.entries({ ...RECONCILER_METRICS, ...OBSERVED_METRICS, ...DEFAULT_METRICS })) {
      expect(exposition.types.get(name), name).toBe(spec.type);
    }
  });

  it('exports every metric the dashboard and alerts use (histograms as _bucket, _sum and _count)', () => {
    const names = new Set(exposition.series.map((s) => s.name));
    const typed = new Set<string>();
    for (const [name, type] of exposition.types) for (const series of seriesNames(name, type as 'counter')) typed.add(series);
    for (const { where, expr } of USES) {
      for (const metric of promqlUse(expr).metrics) {
        if (SYNTHETIC_METRICS.has(metric)) continue;
        // git-sync serves its own; planned metrics come with other changes (typed when exported).
        const family = familyOf(metric)!.name;
        if (GIT_SYNC_METRICS[family]) continue;
        if (PLANNED_METRICS[family]) {
          if (exposition.types.has(family)) expect(exposition.types.get(family), family).toBe(PLANNED_METRICS[family]!.type);
          continue;
        }
        expect(typed.has(metric), `${where}: ${metric} is not in /metrics`).toBe(true);
      }
    }
    // The pass filled the series the dashboard's main panels read (project status and health
    // need live projects: a dry run against an empty sandbox has none).
    for (const name of ['reconciler_drift_resources', 'reconciler_resource_in_sync', 'reconciler_reconcile_total', 'reconciler_reconcile_duration_seconds_bucket', 'reconciler_api_requests_total', 'reconciler_api_request_duration_seconds_bucket', 'reconciler_api_budget_limit', 'reconciler_api_budget_remaining', 'reconciler_manifest_errors', 'reconciler_source_info']) {
      expect(names.has(name), `${name} has a series after a pass`).toBe(true);
    }
  });

  it('labels every series exactly as the interface says', () => {
    for (const series of exposition.series) {
      const family = familyOf(series.name);
      if (!family || !series.name.startsWith('reconciler_')) continue;
      expect(Object.keys(series.labels).sort(), `${series.name}`).toEqual([...family.labels, ...family.extraLabels].sort());
      if (series.labels.route !== undefined) expect(series.labels.route, 'route is a template').toMatch(/^\/v1\/[a-z0-9_/{}-]*$/);
    }
  });

  it('stops cleanly on SIGTERM', async () => {
    daemon!.kill('SIGTERM');
    expect(await exit).toBe(0);
  }, 60_000);
});
