// The daemon's read-only status page (`GET /`), rendered on the server from the same view as
// `GET /status`: plain HTML with landmarks, table headers and text for every state (colour is
// never the only cue), readable without script; a small inline script refreshes the main
// region. Every value is escaped by the `html` tag (./html.ts) unless it is a fragment the tag
// made; the view itself holds no secret.
import { createHash } from 'node:crypto';
import type { ResourceState } from '../reconcile/types.js';
import type { BrokenRevisionView, FleetView, PendingView, ProjectView, RolloutView } from './fleet-view.js';
import { html, joinHtml, trusted, type SafeHtml } from './html.js';

export { escapeHtml } from './html.js';

export interface StatusPageOptions {
  /** Seconds between refreshes by the page's script (0: none). */
  refreshSeconds: number;
  /** Where the runbook (docs/runbook.md) is published; its sections are linked by anchor. */
  runbookUrl?: string;
}

/** The runbook's sections the page points to, by what they are about (GitHub-style anchors of docs/runbook.md). */
export const RUNBOOK_SECTIONS = {
  drifted: { title: 'ReconcilerDriftPersists', anchor: 'reconcilerdriftpersists' },
  failed: { title: 'ReconcilerPassesFailing', anchor: 'reconcilerpassesfailing' },
  broken: { title: 'ReconcilerManifestErrors', anchor: 'reconcilermanifesterrors' },
  held: { title: 'ReconcilerApprovalWaiting', anchor: 'reconcilerapprovalwaiting' },
  stale: { title: 'ReconcilerObservationStale', anchor: 'reconcilerobservationstale' },
  bound: { title: 'ReconcilerObservationBoundTooHigh', anchor: 'reconcilerobservationboundtoohigh' },
} as const;

const STATE_LABEL: Record<ResourceState | 'broken-revision', string> = { in_sync: 'in sync', drifted: 'drifted', held: 'held', pending: 'pending', failed: 'failed', 'broken-revision': 'broken revision' };

const STYLE = `
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
header,main,footer{padding:0 1.25rem}
header{border-bottom:1px solid #d0d7de}
h1{font-size:1.4rem;margin:.8rem 0 .3rem}
h2{font-size:1.15rem;margin:1.4rem 0 .5rem}
nav ul{list-style:none;padding:0;margin:.3rem 0 .8rem;display:flex;flex-wrap:wrap;gap:1rem}
a{color:#0550ae}
a:focus,input:focus{outline:3px solid #0969da;outline-offset:2px}
table{border-collapse:collapse;margin:.3rem 0 1rem;min-width:50%}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:left;vertical-align:top}
thead th{background:#f6f8fa}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem;margin:.3rem 0}
dt{font-weight:600}
dd{margin:0}
.state{font-weight:600;white-space:nowrap}
.state-in_sync{color:#116329}
.state-drifted{color:#7d4e00}
.state-pending{color:#0a3069}
.state-held{color:#6639ba}
.broken{border:2px solid #a40e26;padding:.2rem .8rem;margin:.6rem 0}
.state-failed{color:#a40e26}
.over{color:#a40e26;font-weight:600}
.muted{color:#57606a}
code{font-size:.92em}
`;

const SCRIPT = `(function(){
var box=document.getElementById('auto-refresh');var note=document.getElementById('refresh-note');
if(!box)return;box.disabled=false;var seconds=Number(box.getAttribute('data-seconds'))||30;
function refresh(){if(!box.checked)return;fetch(location.href,{headers:{accept:'text/html'},cache:'no-store',credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.text();}).then(function(text){var doc=new DOMParser().parseFromString(text,'text/html');var next=doc.getElementById('main');var main=document.getElementById('main');if(next&&main){main.innerHTML=next.innerHTML;}note.textContent='Refreshed '+new Date().toLocaleTimeString()+'.';}).catch(function(e){note.textContent='Refresh failed: '+e.message+'.';});}
setInterval(refresh,seconds*1000);})();`;

function hash(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

/** The page's Content-Security-Policy: nothing but its own inline style and script, and requests to itself. */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hash(STYLE)}`,
  `script-src ${hash(SCRIPT)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function state(value: ResourceState | 'broken-revision'): SafeHtml {
  return html`<span class="state state-${value}">${STATE_LABEL[value]}</span>`;
}

function seconds(value: number | undefined): string {
  if (value === undefined) return '-';
  if (value < 120) return `${Math.round(value)} s`;
  if (value < 7_200) return `${Math.round(value / 60)} min`;
  return `${(value / 3_600).toFixed(1)} h`;
}

function time(iso: string | undefined): SafeHtml {
  return iso === undefined ? html`<span class="muted">never</span>` : html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

function shortRevision(revision: string | undefined): SafeHtml {
  return revision === undefined ? html`<span class="muted">none</span>` : html`<code title="${revision}">${revision.slice(0, 12)}</code>`;
}

function runbookLink(options: StatusPageOptions, section: keyof typeof RUNBOOK_SECTIONS, text?: string): SafeHtml {
  const { title, anchor } = RUNBOOK_SECTIONS[section];
  const label = text ?? `runbook: ${title}`;
  return options.runbookUrl ? html`<a href="${`${options.runbookUrl}#${anchor}`}">${label}</a>` : html`<a href="#runbook">${label}</a>`;
}

function ageAgainstBound(project: ProjectView, bound: number | undefined): SafeHtml {
  if (project.ageSeconds === undefined) return html`<span class="muted">not observed yet</span>`;
  if (bound === undefined || !(bound > 0)) return html`${seconds(project.ageSeconds)} <span class="muted">(bound not known yet)</span>`;
  const ratio = project.ageSeconds / bound;
  const text = `${seconds(project.ageSeconds)} of ${seconds(bound)} (${ratio.toFixed(2)} × bound)`;
  return ratio > 1 ? html`<span class="over">${text}, over the bound</span>` : html`${text}`;
}

function projectRow(project: ProjectView, view: FleetView, options: StatusPageOptions): SafeHtml {
  const detail: SafeHtml[] = [];
  if (project.state === 'drifted') detail.push(runbookLink(options, 'drifted', 'runbook'));
  if (project.state === 'failed') detail.push(runbookLink(options, 'failed', 'runbook'));
  const notes = project.resources.filter((r) => r.state !== 'in_sync').map((r) => html`${r.kind} ${r.name}: ${state(r.state)}${r.fields?.length ? html` (${r.fields.join(', ')})` : ''}`);
  return html`<tr data-project="${project.name}" data-state="${project.state}">
<th scope="row">${project.name}${project.ref ? html` <span class="muted">(${project.ref})</span>` : ''}</th>
<td>${state(project.state)}${notes.length ? html`<br>${joinHtml(notes, '<br>')}` : ''}${detail.length ? html`<br>${joinHtml(detail, ' ')}` : ''}</td>
<td>${project.status ?? html`<span class="muted">unknown</span>`}</td>
<td>${time(project.observedAt)}</td>
<td>${ageAgainstBound(project, view.freshness.boundSeconds)}</td>
<td>${shortRevision(project.revision)}</td>
<td>${project.pending.length}</td>
<td>${project.lastError ? html`${project.lastError.message} <span class="muted">(${time(project.lastError.at)})</span>` : html`<span class="muted">none</span>`}</td>
</tr>`;
}

/** Every change not made yet, once: held by the rollout (its wave, a window, an approval) or pending for another reason. */
function changesTable(changes: PendingView[]): SafeHtml {
  return html`<table id="pending-table"><caption>Changes not made yet: held by the rollout, or pending, and why</caption>
<thead><tr><th scope="col">Project</th><th scope="col">Resource</th><th scope="col">Action</th><th scope="col">State</th><th scope="col">Waiting for</th><th scope="col">Since</th><th scope="col">Why</th></tr></thead>
<tbody>${changes.map(
    (c) =>
      html`<tr data-state="${c.state}"><th scope="row">${c.project}</th><td>${`${c.kind} ${c.name}`}</td><td>${c.action}</td><td>${state(c.state)}</td><td>${c.waitingFor}</td><td>${time(c.since)} <span class="muted">(${seconds(c.waitingSeconds)})</span></td><td>${c.reason ?? ''}</td></tr>\n`,
  )}</tbody></table>`;
}

function rolloutSection(rollouts: RolloutView[]): SafeHtml {
  return html`<section aria-labelledby="rollouts-title" id="rollouts"><h2 id="rollouts-title">Rollouts</h2>
${rollouts.map(
  (rollout) => html`<table><caption>Rollout ${rollout.name}: waves in order</caption>
<thead><tr><th scope="col">Wave</th><th scope="col">State</th><th scope="col">Projects</th><th scope="col">Detail</th></tr></thead>
<tbody>${rollout.waves.map((wave) => html`<tr data-state="${wave.state}"><th scope="row">${wave.name}</th><td>${wave.state}</td><td>${wave.projects.join(', ')}</td><td>${wave.detail ?? ''}</td></tr>\n`)}</tbody></table>
`,
)}</section>`;
}

function brokenSection(broken: BrokenRevisionView, options: StatusPageOptions): SafeHtml {
  return html`<section aria-labelledby="broken-title" id="broken" class="broken" role="alert"><h2 id="broken-title">Broken revision ${shortRevision(broken.revision)}</h2>
<p>The newest revision of the manifests has ${broken.errorCount} error${broken.errorCount === 1 ? '' : 's'} (since ${time(broken.since)}): nothing of it is applied. ${
    broken.lastGoodRevision ? html`The last good revision ${shortRevision(broken.lastGoodRevision)} stays applied.` : 'No earlier revision was applied by this process.'
  } ${runbookLink(options, 'broken')}</p>
<table><caption>Manifest errors (the first ${broken.errors.length})</caption>
<thead><tr><th scope="col">File</th><th scope="col">Line</th><th scope="col">Field</th><th scope="col">Error</th></tr></thead>
<tbody>${broken.errors.map((e) => html`<tr><th scope="row">${e.file}</th><td>${e.line}${e.column ? `:${e.column}` : ''}</td><td>${e.field ?? ''}</td><td>${e.message}</td></tr>\n`)}</tbody></table></section>`;
}

function mainContent(view: FleetView, options: StatusPageOptions): SafeHtml {
  const s = view.summary;
  const f = view.freshness;
  const over = f.largestAgeSeconds !== undefined && f.boundSeconds !== undefined && f.largestAgeSeconds > f.boundSeconds;
  const counts = (c: Record<ResourceState, number>) => `${c.in_sync} in sync, ${c.drifted} drifted, ${c.held} held, ${c.pending} pending, ${c.failed} failed`;
  const pending = view.projects.flatMap((project) => project.pending);
  return html`<section aria-labelledby="summary-title" id="summary"><h2 id="summary-title">Fleet summary</h2>
<dl>
<dt>Condition</dt><dd id="condition" data-state="${view.condition.state}">${state(view.condition.state)}: ${view.condition.message}</dd>
<dt>Projects</dt><dd>${s.projects}: ${counts(s.projectStates)}</dd>
<dt>Resources</dt><dd>${counts(s.resources)}</dd>
<dt>Changes not made yet</dt><dd>${s.pendingChanges} (${s.heldChanges} held by the rollout)</dd>
<dt>Revision</dt><dd>${shortRevision(view.revision)}${view.dryRun ? html` <span class="muted">(--dry-run: drift is reported, nothing is written)</span>` : ''}</dd>
<dt>Largest observation age</dt><dd>${
    f.largestAgeSeconds === undefined
      ? html`<span class="muted">no project observed yet</span>`
      : html`<span${over ? trusted(' class="over"') : ''}>${seconds(f.largestAgeSeconds)}${f.oldestProject ? ` (${f.oldestProject})` : ''}${over ? ', over the bound' : ''}</span>`
  }${over ? html` ${runbookLink(options, 'stale')}` : ''}</dd>
<dt>Stated bound</dt><dd>${f.boundSeconds === undefined ? html`<span class="muted">not known yet</span>` : seconds(f.boundSeconds)}${f.resync ? html` <span class="muted">(--resync ${f.resync})</span>` : ''}</dd>
${
  f.maxObservationAgeSeconds !== undefined
    ? html`<dt>--max-observation-age</dt><dd>${seconds(f.maxObservationAgeSeconds)}${f.boundSeconds !== undefined && f.boundSeconds > f.maxObservationAgeSeconds ? html` <span class="over">below the bound</span> ${runbookLink(options, 'bound')}` : ''}</dd>`
    : ''
}
<dt>Last pass recorded</dt><dd>${time(view.updatedAt)}</dd>
<dt>View made</dt><dd>${time(view.generatedAt)}</dd>
</dl></section>
${view.brokenRevision ? brokenSection(view.brokenRevision, options) : ''}
<section aria-labelledby="projects-title" id="projects"><h2 id="projects-title">Projects</h2>
<table><caption>Sync state of every project (${s.projects})</caption>
<thead><tr><th scope="col">Project</th><th scope="col">Sync state</th><th scope="col">Live status</th><th scope="col">Last observed</th><th scope="col">Observation age against the bound</th><th scope="col">Revision applied</th><th scope="col">Changes not made yet</th><th scope="col">Last error</th></tr></thead>
<tbody>
${joinHtml(view.projects.map((project) => projectRow(project, view, options)), '\n')}
</tbody></table></section>
${view.rollouts && view.rollouts.length > 0 ? rolloutSection(view.rollouts) : ''}
${
  pending.length > 0
    ? html`<section aria-labelledby="pending-title" id="pending"><h2 id="pending-title">Changes not made yet</h2>
${changesTable(pending)}${s.heldChanges > 0 ? html` ${runbookLink(options, 'held')}` : ''}</section>`
    : ''
}
<section aria-labelledby="errors-title" id="errors"><h2 id="errors-title">Recent errors</h2>
${
  view.recentErrors.length === 0
    ? html`<p>None recorded.</p>`
    : html`<table><caption>Newest first (values such as quoted text and long opaque strings are elided; names are kept)</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Project</th><th scope="col">Resource</th><th scope="col">Error</th></tr></thead>
<tbody>${view.recentErrors.map((e) => html`<tr><td>${time(e.at)}</td><td>${e.project ?? ''}</td><td>${e.resource ?? ''}</td><td>${e.message}</td></tr>\n`)}</tbody></table> ${runbookLink(options, 'failed')}`
}</section>`;
}

export function renderStatusPage(view: FleetView, options: StatusPageOptions): string {
  const s = view.summary.projectStates;
  const runbookList = Object.values(RUNBOOK_SECTIONS).map(({ title, anchor }) =>
    html`<li>${options.runbookUrl ? html`<a href="${`${options.runbookUrl}#${anchor}`}">${title}</a>` : html`<code>docs/runbook.md#${anchor}</code>`}</li>`,
  );
  const refresh = options.refreshSeconds > 0;
  const title = view.condition.state === 'broken-revision' ? `Fleet status: broken revision, ${view.summary.projects} projects` : `Fleet status: ${view.summary.projects} projects, ${s.drifted} drifted, ${s.held} held, ${s.failed} failed`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${trusted(STYLE)}</style>
</head>
<body>
<header>
<h1>Fleet status${view.shard ? ` (shard ${view.shard})` : ''}</h1>
<nav aria-label="Sections"><ul>
<li><a href="#summary">Summary</a></li>${view.brokenRevision ? html`<li><a href="#broken">Broken revision</a></li>` : ''}<li><a href="#projects">Projects</a></li>${view.rollouts?.length ? html`<li><a href="#rollouts">Rollouts</a></li>` : ''}${view.summary.pendingChanges > 0 ? html`<li><a href="#pending">Changes not made yet</a></li>` : ''}<li><a href="#errors">Recent errors</a></li><li><a href="#runbook">Runbook</a></li><li><a href="/status">JSON (/status)</a></li>
</ul></nav>
${refresh ? html`<p><input type="checkbox" id="auto-refresh" data-seconds="${options.refreshSeconds}" checked disabled> <label for="auto-refresh">Refresh every ${options.refreshSeconds} s</label> <span id="refresh-note" role="status" class="muted"></span></p>` : ''}
</header>
<main id="main">
${mainContent(view, options)}
</main>
<footer>
<section aria-labelledby="runbook-title" id="runbook"><h2 id="runbook-title">Runbook</h2>
<p>${options.runbookUrl ? html`<a href="${options.runbookUrl}">The runbook</a>` : html`The runbook is <code>docs/runbook.md</code> in the reconciler's documentation (start the daemon with <code>--runbook-url</code> to link it here)`}: what each state and alert means and what to do.</p>
<ul>${runbookList}</ul>
<p class="muted">Read-only. Reload the page for the current view.</p>
</section>
</footer>
${refresh ? html`<script>${trusted(SCRIPT)}</script>` : ''}
</body>
</html>
`.text;
}
