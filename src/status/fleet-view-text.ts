// `reconcile status` (the recorded view, from a daemon or the state directory) as text: one
// summary line, the condition (a broken revision with its errors first), the freshness, a
// table of projects, then the facts the kinds give of them (the schema versions of Migrations),
// what is not in sync, the changes not made yet (each once: held by the rollout or pending, and
// why) and the recent errors. JSON output is the view itself (`GET /status`).
import type { FleetView, PendingView } from './fleet-view.js';
import { stateTable as table } from '../reconcile/render/format.js';
import { printable } from '../manifests/printable.js';
import { KIND_MODULES } from '../reconcile/registry.js';

function seconds(value: number | undefined): string {
  return value === undefined ? '-' : `${Math.round(value)} s`;
}

function pendingRows(changes: PendingView[]): string[][] {
  return [
    ['PROJECT', 'RESOURCE', 'ACTION', 'STATE', 'WAITING FOR', 'SINCE', 'WHY'],
    // Names and reasons quote the manifests (a rule's name among them): no control character reaches the terminal.
    ...changes.map((c) => [c.project, `${c.kind}/${c.name}`, c.action, c.state, c.waitingFor, c.since, c.reason ?? ''].map(printable)),
  ];
}

/** A table of each kind's facts (KindModule.status: the schema versions of Migrations), one row per project that has them. */
function kindFactTables(view: FleetView, color: boolean): string[] {
  const out: string[] = [];
  for (const module of KIND_MODULES) {
    const facts = module.status?.table;
    if (!facts) continue;
    const rows = view.projects.flatMap((project) => {
      const cells = facts.row(project);
      return cells ? [[project.name, ...cells].map(printable)] : [];
    });
    if (rows.length === 0) continue;
    out.push('', facts.heading);
    out.push(...table([['PROJECT', ...facts.columns], ...rows], color, -1).map((line) => `  ${line}`));
  }
  return out;
}

export function renderFleetViewText(view: FleetView, options: { color: boolean; from: string }): string {
  const out: string[] = [];
  const p = view.summary.projectStates;
  out.push(
    `Status from ${options.from} at ${view.generatedAt}${view.revision ? ` (revision ${view.revision.slice(0, 12)})` : ''}${view.updatedAt ? `, last pass ${view.updatedAt}` : ''}: ` +
      `${view.summary.projects} projects: ${p.in_sync} in sync, ${p.drifted} drifted, ${p.held} held, ${p.pending} pending, ${p.failed} failed`,
  );
  out.push(`Condition: ${view.condition.state === 'broken-revision' ? 'BROKEN REVISION' : view.condition.state}: ${printable(view.condition.message)}`);
  const broken = view.brokenRevision;
  if (broken) {
    out.push(`Broken revision${broken.revision ? ` ${broken.revision.slice(0, 12)}` : ''} since ${broken.since}: ${broken.errorCount} manifest error${broken.errorCount === 1 ? '' : 's'}, nothing of it applied${broken.lastGoodRevision ? `; the last good revision ${broken.lastGoodRevision.slice(0, 12)} stays applied` : ''}`);
    for (const e of broken.errors) out.push(printable(`  ${e.file}:${e.line}${e.column ? `:${e.column}` : ''}${e.field ? ` ${e.field}` : ''}: ${e.message}`));
  }
  const f = view.freshness;
  out.push(
    `Freshness${f.resync ? ` (--resync ${f.resync})` : ''}: ${f.largestAgeSeconds !== undefined ? `largest observation age ${seconds(f.largestAgeSeconds)}${f.oldestProject ? ` (${f.oldestProject})` : ''}` : 'no project observed yet'}` +
      `, ${f.boundSeconds !== undefined ? `bound ${seconds(f.boundSeconds)}` : 'bound not known'}` +
      `${f.maxObservationAgeSeconds !== undefined ? `, --max-observation-age ${seconds(f.maxObservationAgeSeconds)}${f.largestAgeSeconds !== undefined && f.largestAgeSeconds > f.maxObservationAgeSeconds ? ' EXCEEDED' : ''}` : ''}`,
  );
  if (view.dryRun) out.push('The daemon runs with --dry-run: drift is reported, nothing is written.');
  out.push('');
  out.push(
    ...table(
      [
        ['PROJECT', 'STATE', 'LAST OBSERVED', 'AGE', 'REVISION', 'WAITING', 'LAST ERROR'],
        ...view.projects.map((project) => [
          printable(project.name),
          project.state,
          project.observedAt ?? 'never',
          seconds(project.ageSeconds),
          project.revision?.slice(0, 12) ?? '-',
          String(project.pending.length),
          printable(project.lastError?.message ?? '-'),
        ]),
      ],
      options.color,
      1,
    ),
  );
  out.push(...kindFactTables(view, options.color));
  const notInSync = [...view.fleet.map((r) => ({ project: '', r })), ...view.projects.flatMap((project) => project.resources.map((r) => ({ project: project.name, r })))].filter(({ r }) => r.state !== 'in_sync');
  if (notInSync.length > 0) {
    out.push('', 'Not in sync');
    out.push(
      ...table(
        [['PROJECT', 'RESOURCE', 'STATE', 'DETAIL'], ...notInSync.map(({ project, r }) => [project || '-', `${r.kind}/${r.name}`, r.state, [r.fields?.length ? `fields: ${r.fields.join(', ')}` : '', r.message ?? ''].filter(Boolean).join('; ')].map(printable))],
        options.color,
        2,
      ).map((line) => `  ${line}`),
    );
  }
  const pending = view.projects.flatMap((project) => project.pending);
  if (pending.length > 0) {
    out.push('', `Changes not made yet (${view.summary.heldChanges} held by the rollout)`);
    out.push(...table(pendingRows(pending), false, -1).map((line) => `  ${line}`));
  }
  if (view.rollouts?.length) {
    out.push('', 'Rollouts');
    for (const rollout of view.rollouts) {
      if (rollout.waves.length === 0) out.push(printable(`  ${rollout.name}: no waves (its windows and approval rules hold what they select)`));
      for (const wave of rollout.waves) out.push(printable(`  ${rollout.name} / ${wave.name}: ${wave.state} (${wave.projects.length} projects)${wave.detail ? `: ${wave.detail}` : ''}`));
    }
  }
  if (view.recentErrors.length > 0) {
    out.push('', 'Recent errors (newest first)');
    for (const error of view.recentErrors) out.push(printable(`  ${error.at}  ${error.project ?? '-'}  ${error.resource ?? '-'}  ${error.message}`));
  }
  return `${out.join('\n')}\n`;
}
