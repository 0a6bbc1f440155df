// The alert rules and the dashboard's queries, checked by Prometheus' own promtool: the
// rules file loads, each alert fires on synthetic series (alerts.test.yaml), the rules the
// chart renders load too, and every dashboard query parses.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { dashboardExpressions, substituteGrafanaVariables } from './promql.js';
import { findObject, renderObjects } from './render.js';
import { ALERTS_FILE, DASHBOARD_FILE, helmTool, promtoolTool, toolGate } from './tools.js';

const UNIT_TESTS = join(import.meta.dirname, 'alerts.test.yaml');
const gate = toolGate(promtoolTool());

interface RulesFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }[] }[];
}
interface UnitTests {
  rule_files: string[];
  tests: { name?: string; alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

function promtool(path: string, args: string[], cwd?: string) {
  const out = spawnSync(path, args, { encoding: 'utf8', cwd });
  return { status: out.status, output: `${out.stdout}${out.stderr}` };
}

describe.skipIf(gate.skip)('alert rules (promtool)', () => {
  let tool: string;
  let work: string;
  const rules = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as RulesFile;
  const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);

  beforeAll(() => {
    tool = gate.assertPresent();
    work = mkdtempSync(join(tmpdir(), 'reconciler-alerts-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('promtool check rules passes on the shipped rules file', () => {
    const result = promtool(tool, ['check', 'rules', ALERTS_FILE]);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('covers what must page: persisting drift, failing passes, rate limiting, no success, manifest errors, absence', () => {
    const byName = new Map(alerts.map((a) => [a.alert!, a]));
    expect(byName.get('ReconcilerDriftPersists')!.expr).toContain('reconciler_drift_resources');
    expect(byName.get('ReconcilerDriftPersists')!.for).toBe('30m');
    expect(byName.get('ReconcilerPassesFailing')!.expr).toContain('result="failed"');
    expect(byName.get('ReconcilerRateLimited')!.expr).toContain('reconciler_api_rate_limited_total');
    expect(byName.get('ReconcilerNoRecentSuccess')!.expr).toContain('reconciler_last_success_timestamp_seconds');
    expect(byName.get('ReconcilerManifestErrors')!.expr).toContain('reconciler_manifest_errors');
    expect(byName.get('ReconcilerDown')!.expr).toContain('absent(up{job="reconciler"})');
    expect(byName.get('ReconcilerMetricsAbsent')!.expr).toContain('absent(reconciler_');
    expect(byName.get('ReconcilerRolloutHalted')!.expr).toContain('state="halted"');
    expect(byName.get('ReconcilerApprovalWaiting')!.expr).toContain('reconciler_changes_waiting{job="reconciler", reason="approval"}');
    for (const alert of alerts) {
      expect(['critical', 'warning', 'info'], alert.alert).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary, alert.alert).toBeTruthy();
      expect(alert.annotations?.description, alert.alert).toBeTruthy();
      // Every selector names the job, so the chart can scope it to its release.
      const selectors = alert.expr.match(/\{[^}]*\}/g) ?? [];
      expect(selectors.length, alert.alert).toBeGreaterThan(0);
      for (const selector of selectors) expect(selector, `${alert.alert}: ${selector}`).toContain('job="reconciler"');
    }
  });

  it('keeps the alerts on the projects themselves in their own group, each silent without its metric', () => {
    const fleet = rules.groups.find((g) => g.name === 'reconciler-fleet')!;
    expect(fleet.rules.map((r) => r.alert)).toEqual(['ReconcilerProjectReadOnly', 'ReconcilerProjectUpgradeFailed', 'ReconcilerProjectBackupStale', 'ReconcilerProjectPitrStale', 'ReconcilerProjectUnhealthy']);
    const metric: Record<string, string> = {
      ReconcilerProjectReadOnly: 'reconciler_observed_readonly{',
      ReconcilerProjectUpgradeFailed: 'reconciler_observed_upgrade_failed{',
      ReconcilerProjectBackupStale: 'reconciler_observed_backup_last_timestamp_seconds{',
      ReconcilerProjectPitrStale: 'reconciler_observed_pitr_latest_timestamp_seconds{',
      ReconcilerProjectUnhealthy: 'reconciler_project_health{',
    };
    for (const rule of fleet.rules) {
      expect(rule.expr, rule.alert).toContain(metric[rule.alert!]);
      // absent() or a fallback would page for a daemon that does not observe the fact at all.
      expect(rule.expr, rule.alert).not.toMatch(/absent|vector\(|or on/);
      expect(rule.annotations?.summary, rule.alert).toContain('{{ $labels.project }}');
    }
    // The thresholds the file documents are the ones it uses (the chart replaces exactly these).
    const header = readFileSync(ALERTS_FILE, 'utf8');
    expect(header).toContain('ReconcilerProjectBackupStale: 129600 s');
    expect(fleet.rules.find((r) => r.alert === 'ReconcilerProjectBackupStale')!.expr).toContain('> 129600)');
    expect(header).toContain('ReconcilerProjectPitrStale: 3600 s');
    expect(fleet.rules.find((r) => r.alert === 'ReconcilerProjectPitrStale')!.expr).toContain('> 3600)');
  });

  it('promtool test rules fires each alert on synthetic series, and only then', () => {
    const result = promtool(tool, ['test', 'rules', UNIT_TESTS]);
    expect(result.output).toContain('SUCCESS');
    expect(result.status).toBe(0);
    const tests = parseYaml(readFileSync(UNIT_TESTS, 'utf8')) as UnitTests;
    const firing = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname)));
    const silent = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => (a.exp_alerts ?? []).length === 0).map((a) => a.alertname)));
    for (const alert of alerts) {
      expect(firing.has(alert.alert!), `${alert.alert} has a test where it fires`).toBe(true);
      expect(silent.has(alert.alert!), `${alert.alert} has a test where it stays silent`).toBe(true);
    }
    // promtool evaluates every test's hours of series minute by minute: seconds of CPU, more on a busy machine.
  }, 180_000);

  it('the unit tests fail when a rule changes (they can fail)', () => {
    const broken = structuredClone(rules);
    const drift = broken.groups.flatMap((g) => g.rules).find((r) => r.alert === 'ReconcilerDriftPersists')!;
    drift.for = '2h';
    const brokenRules = join(work, 'broken-rules.yaml');
    writeFileSync(brokenRules, stringifyYaml(broken));
    const tests = parseYaml(readFileSync(UNIT_TESTS, 'utf8')) as UnitTests;
    tests.rule_files = [brokenRules];
    const brokenTests = join(work, 'broken-tests.yaml');
    writeFileSync(brokenTests, stringifyYaml(tests));
    const result = promtool(tool, ['test', 'rules', brokenTests]);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('alertname: ReconcilerDriftPersists');
  }, 180_000);

  it('the rules the chart renders into its PrometheusRule pass promtool check rules', (context) => {
    const helm = helmTool();
    if (!helm.path) {
      // Covered by helm.test.ts, which fails under REQUIRE_TOOLS=1 when helm is missing.
      context.skip();
      return;
    }
    const objects = renderObjects(helm.path, { set: ['prometheusRule.enabled=true', 'prometheusRule.driftFor=1h', 'prometheusRule.backupMaxAge=2d', 'prometheusRule.pitrMaxLag=30m', 'prometheusRule.approvalWaitingFor=90m'] });
    const rule = findObject(objects, 'PrometheusRule') as { spec: RulesFile };
    // The approval alert waits as long as configured.
    expect(rule.spec.groups.flatMap((g) => g.rules).find((r) => r.alert === 'ReconcilerApprovalWaiting')?.for).toBe('90m');
    const file = join(work, 'chart-rules.yaml');
    writeFileSync(file, stringifyYaml(rule.spec));
    const result = promtool(tool, ['check', 'rules', file]);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.status).toBe(0);

    // The configured thresholds are the ones the rendered rules fire at: a backup 40 hours old
    // is fine under 2d (it would fire under the file's 36h), one 49 hours old is not; a recovery
    // window ending 50 minutes ago fires under 30m (not under the file's 1h).
    const series = (name: string, project: string, values: string) => ({ series: `${name}{job="reconciler", namespace="fleet", project="${project}"}`, values });
    // promtool compares annotations too: the file's templates, filled in for this project and age.
    const annotations = (alert: string, age: string) => {
      const source = alerts.find((a) => a.alert === alert)!.annotations!;
      const fill = (text: string) => text.replaceAll('{{ $labels.project }}', 'shop-production').replaceAll('{{ $value | humanizeDuration }}', age);
      return { runbook_url: source.runbook_url!, summary: fill(source.summary!), description: fill(source.description!) };
    };
    const unitTests = {
      rule_files: [file],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '5m',
          input_series: [series('reconciler_observed_backup_last_timestamp_seconds', 'shop-production', '0x600')],
          alert_rule_test: [
            { eval_time: '40h', alertname: 'ReconcilerProjectBackupStale', exp_alerts: [] },
            {
              eval_time: '49h',
              alertname: 'ReconcilerProjectBackupStale',
              exp_alerts: [{ exp_labels: { severity: 'warning', job: 'reconciler', namespace: 'fleet', project: 'shop-production' }, exp_annotations: annotations('ReconcilerProjectBackupStale', '2d 1h 0m 0s') }],
            },
          ],
        },
        {
          interval: '1m',
          input_series: [series('reconciler_observed_pitr_latest_timestamp_seconds', 'shop-production', '0x60'), series('reconciler_observed_pitr_enabled', 'shop-production', '1x60')],
          alert_rule_test: [
            { eval_time: '40m', alertname: 'ReconcilerProjectPitrStale', exp_alerts: [] },
            {
              eval_time: '50m',
              alertname: 'ReconcilerProjectPitrStale',
              exp_alerts: [{ exp_labels: { severity: 'warning', job: 'reconciler', namespace: 'fleet', project: 'shop-production' }, exp_annotations: annotations('ReconcilerProjectPitrStale', '50m 0s') }],
            },
          ],
        },
      ],
    };
    const unitFile = join(work, 'chart-rules.test.yaml');
    writeFileSync(unitFile, stringifyYaml(unitTests));
    const fired = promtool(tool, ['test', 'rules', unitFile]);
    expect(fired.output).toContain('SUCCESS');
    expect(fired.status).toBe(0);
    // With the defaults, the same 40-hour-old backup fires (the test above can fail).
    writeFileSync(file, stringifyYaml((findObject(renderObjects(helm.path, { set: ['prometheusRule.enabled=true'] }), 'PrometheusRule') as { spec: RulesFile }).spec));
    const defaults = promtool(tool, ['test', 'rules', unitFile]);
    expect(defaults.status).not.toBe(0);
    expect(defaults.output).toContain('alertname: ReconcilerProjectBackupStale, time: 1d16h');
  });

  it('every dashboard query is valid PromQL', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
    const expressions = dashboardExpressions(dashboard);
    expect(expressions.length).toBeGreaterThan(20);
    const asRules: RulesFile = {
      groups: [{ name: 'dashboard', rules: expressions.map((e, i) => ({ record: `dashboard:query_${i}`, expr: substituteGrafanaVariables(e.expr) })) }],
    };
    const file = join(work, 'dashboard-queries.yaml');
    writeFileSync(file, stringifyYaml(asRules));
    const result = promtool(tool, ['check', 'rules', file]);
    expect(result.output).toContain(`SUCCESS: ${expressions.length} rules found`);
    expect(result.status).toBe(0);
    // A broken query is reported (the check can fail).
    writeFileSync(file, stringifyYaml({ groups: [{ name: 'dashboard', rules: [{ record: 'dashboard:broken', expr: 'sum by (project (reconciler_drift_resources)' }] }] }));
    expect(promtool(tool, ['check', 'rules', file]).status).not.toBe(0);
  });
});
