// The daemon's read-only status page (`GET /`), rendered on the server from the same view as
// `GET /status`: plain HTML with landmarks, table headers and text for every state (colour is
// never the only cue), readable without script; a small inline script refreshes the main
// region. Every text from the view is escaped; the view itself holds no secret.
import { createHash } from 'node:crypto';
import type { ResourceState } from '../reconcile/types.js';
import type { FleetView, PendingView, ProjectView, RolloutView } from './fleet-view.js';

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
  stale: { title: 'ReconcilerObservationStale', anchor: 'reconcilerobservationstale' },
  bound: { title: 'ReconcilerObservationBoundTooHigh', anchor: 'reconcilerobservationboundtoohigh' },
} as const;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const STATE_LABEL: Record<ResourceState, string> = { in_sync: 'in sync', drifted: 'drifted', pending: 'pending', failed: 'failed' };

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

function state(value: ResourceState): string {
  return `<span class="state state-${value}">${escapeHtml(STATE_LABEL[value])}</span>`;
}

function seconds(value: number | undefined): string {
  if (value === undefined) return '-';
  if (value < 120) return `${Math.round(value)} s`;
  if (value < 7_200) return `${Math.round(value / 60)} min`;
  return `${(value / 3_600).toFixed(1)} h`;
}

function time(iso: string | undefined): string {
  return iso === undefined ? '<span class="muted">never</span>' : `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z'))}</time>`;
}

function shortRevision(revision: string | undefined): string {
  return revision === undefined ? '<span class="muted">none</span>' : `<code title="${escapeHtml(revision)}">${escapeHtml(revision.slice(0, 12))}</code>`;
}

function runbookLink(options: StatusPageOptions, section: keyof typeof RUNBOOK_SECTIONS, text?: string): string {
  const { title, anchor } = RUNBOOK_SECTIONS[section];
  const label = escapeHtml(text ?? `runbook: ${title}`);
  return options.runbookUrl ? `<a href="${escapeHtml(`${options.runbookUrl}#${anchor}`)}">${label}</a>` : `<a href="#runbook">${label}</a>`;
}

function ageAgainstBound(project: ProjectView, bound: number | undefined): string {
  if (project.ageSeconds === undefined) return '<span class="muted">not observed yet</span>';
  if (bound === undefined || !(bound > 0)) return `${seconds(project.ageSeconds)} <span class="muted">(bound not known yet)</span>`;
  const ratio = project.ageSeconds / bound;
  const text = `${seconds(project.ageSeconds)} of ${seconds(bound)} (${ratio.toFixed(2)} × bound)`;
  return ratio > 1 ? `<span class="over">${escapeHtml(text)}, over the bound</span>` : escapeHtml(text);
}

function projectRow(project: ProjectView, view: FleetView, options: StatusPageOptions): string {
  const detail: string[] = [];
  if (project.state === 'drifted') detail.push(runbookLink(options, 'drifted', 'runbook'));
  if (project.state === 'failed') detail.push(runbookLink(options, 'failed', 'runbook'));
  const notes = project.resources.filter((r) => r.state !== 'in_sync').map((r) => `${escapeHtml(r.kind)} ${escapeHtml(r.name)}: ${state(r.state)}${r.fields?.length ? ` (${escapeHtml(r.fields.join(', '))})` : ''}`);
  return `<tr data-project="${escapeHtml(project.name)}" data-state="${project.state}">
<th scope="row">${escapeHtml(project.name)}${project.ref ? ` <span class="muted">(${escapeHtml(project.ref)})</span>` : ''}</th>
<td>${state(project.state)}${notes.length ? `<br>${notes.join('<br>')}` : ''}${detail.length ? `<br>${detail.join(' ')}` : ''}</td>
<td>${project.status ? escapeHtml(project.status) : '<span class="muted">unknown</span>'}</td>
<td>${time(project.observedAt)}</td>
<td>${ageAgainstBound(project, view.freshness.boundSeconds)}</td>
<td>${shortRevision(project.revision)}</td>
<td>${project.pending.length}</td>
<td>${project.lastError ? `${escapeHtml(project.lastError.message)} <span class="muted">(${time(project.lastError.at)})</span>` : '<span class="muted">none</span>'}</td>
</tr>`;
}

function pendingTable(id: string, caption: string, changes: PendingView[]): string {
  return `<table id="${id}"><caption>${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">Project</th><th scope="col">Resource</th><th scope="col">Action</th><th scope="col">Waiting for</th><th scope="col">Since</th><th scope="col">Why</th></tr></thead>
<tbody>${changes
    .map(
      (c) =>
        `<tr><th scope="row">${escapeHtml(c.project)}</th><td>${escapeHtml(`${c.kind} ${c.name}`)}</td><td>${escapeHtml(c.action)}</td><td>${escapeHtml(c.waitingFor)}</td><td>${time(c.since)} <span class="muted">(${seconds(c.waitingSeconds)})</span></td><td>${c.reason ? escapeHtml(c.reason) : ''}</td></tr>`,
    )
    .join('\n')}</tbody></table>`;
}

function rolloutSection(rollouts: RolloutView[]): string {
  return `<section aria-labelledby="rollouts-title" id="rollouts"><h2 id="rollouts-title">Rollouts</h2>
${rollouts
  .map(
    (rollout) => `<table><caption>Rollout ${escapeHtml(rollout.name)}: waves in order</caption>
<thead><tr><th scope="col">Wave</th><th scope="col">State</th><th scope="col">Projects</th><th scope="col">Detail</th></tr></thead>
<tbody>${rollout.waves
      .map((wave) => `<tr><th scope="row">${escapeHtml(wave.name)}</th><td>${escapeHtml(wave.state)}</td><td>${escapeHtml(wave.projects.join(', '))}</td><td>${wave.detail ? escapeHtml(wave.detail) : ''}</td></tr>`)
      .join('\n')}</tbody></table>`,
  )
  .join('\n')}</section>`;
}

function mainContent(view: FleetView, options: StatusPageOptions): string {
  const s = view.summary;
  const f = view.freshness;
  const over = f.largestAgeSeconds !== undefined && f.boundSeconds !== undefined && f.largestAgeSeconds > f.boundSeconds;
  const parts: string[] = [];
  parts.push(`<section aria-labelledby="summary-title" id="summary"><h2 id="summary-title">Fleet summary</h2>
<dl>
<dt>Projects</dt><dd>${s.projects}: ${s.projectStates.in_sync} in sync, ${s.projectStates.drifted} drifted, ${s.projectStates.pending} pending, ${s.projectStates.failed} failed</dd>
<dt>Resources</dt><dd>${s.resources.in_sync} in sync, ${s.resources.drifted} drifted, ${s.resources.pending} pending, ${s.resources.failed} failed</dd>
<dt>Changes waiting</dt><dd>${s.pendingChanges}</dd>
<dt>Revision</dt><dd>${shortRevision(view.revision)}${view.dryRun ? ' <span class="muted">(--dry-run: drift is reported, nothing is written)</span>' : ''}</dd>
<dt>Largest observation age</dt><dd>${f.largestAgeSeconds === undefined ? '<span class="muted">no project observed yet</span>' : `<span${over ? ' class="over"' : ''}>${escapeHtml(seconds(f.largestAgeSeconds))}${f.oldestProject ? ` (${escapeHtml(f.oldestProject)})` : ''}${over ? ', over the bound' : ''}</span>`}${over ? ` ${runbookLink(options, 'stale')}` : ''}</dd>
<dt>Stated bound</dt><dd>${f.boundSeconds === undefined ? '<span class="muted">not known yet</span>' : escapeHtml(seconds(f.boundSeconds))}${f.resync ? ` <span class="muted">(--resync ${escapeHtml(f.resync)})</span>` : ''}</dd>
${f.maxObservationAgeSeconds !== undefined ? `<dt>--max-observation-age</dt><dd>${escapeHtml(seconds(f.maxObservationAgeSeconds))}${f.boundSeconds !== undefined && f.boundSeconds > f.maxObservationAgeSeconds ? ` <span class="over">below the bound</span> ${runbookLink(options, 'bound')}` : ''}</dd>` : ''}
<dt>Last pass recorded</dt><dd>${time(view.updatedAt)}</dd>
<dt>View made</dt><dd>${time(view.generatedAt)}</dd>
</dl></section>`);
  parts.push(`<section aria-labelledby="projects-title" id="projects"><h2 id="projects-title">Projects</h2>
<table><caption>Sync state of every project (${s.projects})</caption>
<thead><tr><th scope="col">Project</th><th scope="col">Sync state</th><th scope="col">Live status</th><th scope="col">Last observed</th><th scope="col">Observation age against the bound</th><th scope="col">Revision applied</th><th scope="col">Changes waiting</th><th scope="col">Last error</th></tr></thead>
<tbody>
${view.projects.map((project) => projectRow(project, view, options)).join('\n')}
</tbody></table></section>`);
  if (view.rollouts && view.rollouts.length > 0) parts.push(rolloutSection(view.rollouts));
  if (view.waiting && view.waiting.length > 0) {
    parts.push(`<section aria-labelledby="waiting-title" id="waiting"><h2 id="waiting-title">Changes waiting for a window or an approval</h2>
${pendingTable('waiting-table', 'Held changes', view.waiting)}</section>`);
  }
  const pending = view.projects.flatMap((project) => project.pending);
  if (pending.length > 0) {
    parts.push(`<section aria-labelledby="pending-title" id="pending"><h2 id="pending-title">Pending changes</h2>
${pendingTable('pending-table', 'Changes not made yet, and why', pending)}</section>`);
  }
  parts.push(`<section aria-labelledby="errors-title" id="errors"><h2 id="errors-title">Recent errors</h2>
${
  view.recentErrors.length === 0
    ? '<p>None recorded.</p>'
    : `<table><caption>Newest first (scrubbed: quoted text and long opaque strings are elided)</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Project</th><th scope="col">Resource</th><th scope="col">Error</th></tr></thead>
<tbody>${view.recentErrors
        .map((e) => `<tr><td>${time(e.at)}</td><td>${e.project ? escapeHtml(e.project) : ''}</td><td>${e.resource ? escapeHtml(e.resource) : ''}</td><td>${escapeHtml(e.message)}</td></tr>`)
        .join('\n')}</tbody></table> ${runbookLink(options, 'failed')}`
}</section>`);
  return parts.join('\n');
}

export function renderStatusPage(view: FleetView, options: StatusPageOptions): string {
  const s = view.summary.projectStates;
  const runbookList = Object.values(RUNBOOK_SECTIONS)
    .map(({ title, anchor }) => `<li>${options.runbookUrl ? `<a href="${escapeHtml(`${options.runbookUrl}#${anchor}`)}">${escapeHtml(title)}</a>` : `<code>docs/runbook.md#${escapeHtml(anchor)}</code>`}</li>`)
    .join('');
  const refresh = options.refreshSeconds > 0;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fleet status: ${view.summary.projects} projects, ${s.drifted} drifted, ${s.failed} failed</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Fleet status${view.shard ? ` (shard ${escapeHtml(view.shard)})` : ''}</h1>
<nav aria-label="Sections"><ul>
<li><a href="#summary">Summary</a></li><li><a href="#projects">Projects</a></li>${view.rollouts?.length ? '<li><a href="#rollouts">Rollouts</a></li>' : ''}${view.waiting?.length ? '<li><a href="#waiting">Waiting</a></li>' : ''}<li><a href="#errors">Recent errors</a></li><li><a href="#runbook">Runbook</a></li><li><a href="/status">JSON (/status)</a></li>
</ul></nav>
${refresh ? `<p><input type="checkbox" id="auto-refresh" data-seconds="${options.refreshSeconds}" checked disabled> <label for="auto-refresh">Refresh every ${options.refreshSeconds} s</label> <span id="refresh-note" role="status" class="muted"></span></p>` : ''}
</header>
<main id="main">
${mainContent(view, options)}
</main>
<footer>
<section aria-labelledby="runbook-title" id="runbook"><h2 id="runbook-title">Runbook</h2>
<p>${options.runbookUrl ? `<a href="${escapeHtml(options.runbookUrl)}">The runbook</a>` : 'The runbook is <code>docs/runbook.md</code> in the reconciler\'s documentation (start the daemon with <code>--runbook-url</code> to link it here)'}: what each state and alert means and what to do.</p>
<ul>${runbookList}</ul>
<p class="muted">Read-only. Reload the page for the current view.</p>
</section>
</footer>
${refresh ? `<script>${SCRIPT}</script>` : ''}
</body>
</html>
`;
}
