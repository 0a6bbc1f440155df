// Formatting shared by the renderers: the summary line, values and change lines. A sensitive
// change never shows a value, whatever the entry holds.
import type { ApplyOutcome, FieldChange, PassResult, PlanEntry, ResourceState } from '../types.js';
import { isChange, isObservedDrift, isWriteOutcome } from '../summary.js';
import { shortRevision, type RolloutSummary } from '../rollout/gate.js';
import { printable } from '../../manifests/printable.js';

const SENSITIVE = '(sensitive value changed)';

export function summaryLine(result: PassResult): string {
  const s = result.plan.summary;
  const drift = result.plan.drift ?? 0;
  const tail = drift > 0 ? `, ${drift} drifted under observe` : '';
  return `Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.blocked} blocked${tail}`;
}

/** Compact JSON for a value; long values are cut so a plan stays readable. */
export function formatValue(value: unknown, max = 120): string {
  const text = value === undefined ? '(unset)' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export type Marker = '+' | '~' | '-' | '!' | ' ';

export function entryMarker(entry: PlanEntry): Marker {
  if (entry.action === 'blocked') return '!';
  if (entry.action === 'create') return '+';
  if (entry.action === 'delete') return '-';
  if (entry.action === 'update') return '~';
  return ' ';
}

export function changeMarker(change: FieldChange): Marker {
  if (change.sensitive) return '~';
  if (change.before === undefined && change.after !== undefined) return '+';
  if (change.after === undefined && change.before !== undefined) return '-';
  return '~';
}

export function changeText(change: FieldChange): string {
  if (change.sensitive) return `${change.path}: ${SENSITIVE}`;
  if (change.before === undefined) return `${change.path}: ${formatValue(change.after)}`;
  if (change.after === undefined) return `${change.path}: ${formatValue(change.before)}`;
  return `${change.path}: ${formatValue(change.before)} -> ${formatValue(change.after)}`;
}

/** Entries a reader needs to see: changes, drift under observe, blocked, pending, and notes. */
export function visibleEntries(result: PassResult): PlanEntry[] {
  return result.plan.entries.filter((e) => isChange(e) || isObservedDrift(e) || e.action === 'blocked' || e.pending || (e.action === 'noop' && e.reason !== undefined));
}

export function entryNote(entry: PlanEntry): string {
  const notes: string[] = [];
  if (entry.observeOnly && entry.action !== 'noop') notes.push('observe only: not applied');
  if (entry.pending) notes.push('pending');
  if (entry.wave !== undefined && entry.action !== 'noop') notes.push(`wave ${entry.wave}`);
  if (entry.held) notes.push(`${entry.held.reason === 'wave' ? 'held' : entry.held.reason === 'window' ? 'waiting for a window' : 'waiting for approval'}: ${entry.held.message}`);
  if (entry.reason) notes.push(entry.reason);
  // Notes quote names from the manifests (waves, windows, rules): no control character reaches the terminal.
  return printable(notes.join('; '));
}

/**
 * The rollout's line (`Rollout tenants at 1a2b3c4d5e6f: canary done, early soaking until ..., rest waiting; 2 changes wait for a window`), or undefined without a Rollout.
 */
export function rolloutLines(rollout: Omit<RolloutSummary, 'events'> | undefined): string[] {
  if (!rollout) return [];
  const lines: string[] = [];
  if (rollout.waves.length > 0) {
    const waves = rollout.waves.map((wave) => `${wave.name} ${wave.state}${wave.soakUntil !== undefined ? ` until ${new Date(wave.soakUntil).toISOString()}` : ''} (${wave.projects} project${wave.projects === 1 ? '' : 's'})`);
    lines.push(`Rollout ${rollout.name} at ${shortRevision(rollout.revision)}: ${waves.join(', ')}.`);
  }
  if (rollout.halted) lines.push(`The rollout is halted at wave ${rollout.halted.wave}: ${rollout.halted.reason}. Later waves keep their state until \`reconcile resume\` or a newer revision.`);
  const windows = rollout.waiting.filter((w) => w.reason === 'window').length;
  const approvals = rollout.waiting.filter((w) => w.reason === 'approval').length;
  if (windows > 0) lines.push(`${windows} change${windows === 1 ? '' : 's'} wait${windows === 1 ? 's' : ''} for a maintenance window.`);
  if (approvals > 0) lines.push(`${approvals} change${approvals === 1 ? '' : 's'} wait${approvals === 1 ? 's' : ''} for approval: reconcile approve --revision ${shortRevision(rollout.revision)}.`);
  return lines.map(printable);
}

interface OutcomeCounts {
  success: number;
  failed: number;
  skipped: number;
  /** Under way when the process started stopping: planned again by the next pass. */
  interrupted: number;
}

/** The apply's counts: writes only (create, update, delete), so they add up to the plan's changes. */
export function outcomeCounts(result: PassResult): OutcomeCounts {
  return countResults(result.outcomes.filter(isWriteOutcome));
}

function countResults(outcomes: ApplyOutcome[]): OutcomeCounts {
  const counts = { success: 0, failed: 0, skipped: 0, interrupted: 0 };
  for (const outcome of outcomes) counts[outcome.result] += 1;
  return counts;
}

/** The line of a step of the apply (steps, not changes), or undefined when the pass ran none. */
function stepLine(result: PassResult, action: 'wait' | 'verify', lead: (projects: string) => string, succeeded: string, failed: string): string | undefined {
  const counts = countResults(result.outcomes.filter((o) => o.action === action));
  const total = counts.success + counts.failed + counts.skipped + counts.interrupted;
  if (total === 0) return undefined;
  const parts = [
    `${counts.success} ${succeeded}`,
    ...(counts.failed ? [`${counts.failed} ${failed}`] : []),
    ...(counts.skipped ? [`${counts.skipped} skipped`] : []),
    ...(counts.interrupted ? [`${counts.interrupted} interrupted`] : []),
  ];
  return `${lead(`${total} project${total === 1 ? '' : 's'}`)}: ${parts.join(', ')}.`;
}

/** The readiness line (`Waited for 3 projects to become ready: 3 ready.`), or undefined when the pass waited for no project. */
export function waitLine(result: PassResult): string | undefined {
  return stepLine(result, 'wait', (projects) => `Waited for ${projects} to become ready`, 'ready', 'not ready');
}

/** The read-back line (`Read back the writes of 2 projects: 2 confirmed.`), or undefined when the pass wrote nothing to read back. */
export function verifyLine(result: PassResult): string | undefined {
  return stepLine(result, 'verify', (projects) => `Read back the writes of ${projects}`, 'confirmed', 'not confirmed');
}

/**
 * A failed pass that planned nothing could not observe the fleet (bad token, API down): the
 * error it stopped on (class and secret-free message), so no renderer claims the live state
 * matches. `undefined` for any other pass.
 */
export function observationFailure(result: PassResult): { type: string; message: string } | undefined {
  if (result.result !== 'failed' || result.plan.entries.length > 0) return undefined;
  const failed = result.outcomes.find((o) => o.result === 'failed' && o.error);
  return failed?.error ?? { type: 'Error', message: 'the pass stopped before anything was observed' };
}

export function observationFailureLine(error: { type: string; message: string }): string {
  return `Could not observe the fleet: ${error.type}: ${error.message}. Nothing was planned or applied.`;
}

/** `, 2 interrupted` after the apply's counts, when a stop interrupted changes. */
export function interruptedText(counts: OutcomeCounts): string {
  return counts.interrupted ? `, ${counts.interrupted} interrupted` : '';
}

/** How a problem outcome reads: a blocked entry was refused, not skipped for another's sake. */
export function problemLabel(outcome: ApplyOutcome): { marker: 'x' | '-' | '!'; word: string } {
  if (outcome.action === 'blocked') return { marker: '!', word: 'blocked' };
  return outcome.result === 'failed' ? { marker: 'x', word: 'failed' } : { marker: '-', word: outcome.result };
}

/** A saved plan refused by `reconcile apply` (its outcomes carry StalePlanError): the line that says nothing was applied. */
export function refusedLine(result: PassResult): string | undefined {
  const refused = result.outcomes.filter((o) => o.error?.type === 'StalePlanError').length;
  if (refused === 0) return undefined;
  return `The saved plan is refused (${refused} reason${refused === 1 ? '' : 's'} below): nothing was applied. Make a new plan.`;
}

const STATE_COLORS: Record<ResourceState, string> = { in_sync: '\u001b[32m', drifted: '\u001b[33m', held: '\u001b[35m', pending: '\u001b[36m', failed: '\u001b[31m' };
const RESET = '\u001b[0m';

/**
 * A text table of `reconcile status`: columns padded to their widest cell, the last left
 * unpadded; with `color`, the cells of column `stateColumn` (a resource state) coloured.
 */
export function stateTable(rows: string[][], color: boolean, stateColumn: number): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((row, index) =>
    row
      .map((cell, i) => {
        const padded = i === row.length - 1 ? cell : cell.padEnd(widths[i]!);
        return color && index > 0 && i === stateColumn && cell in STATE_COLORS ? `${STATE_COLORS[cell as ResourceState]}${padded}${RESET}` : padded;
      })
      .join('  ')
      .trimEnd(),
  );
}

/**
 * The same change of a ProjectSet's template in many of its projects: one kind, resource,
 * action and set of changed fields. Shown once, with the projects it affects and its requests.
 */
export interface TemplateChange {
  set: string;
  /** One entry per project, in plan order. */
  entries: PlanEntry[];
  /** The entry id with its project left out: `ProjectPostgres/*\/postgres`, `Project/*`. */
  id: string;
  action: PlanEntry['action'];
  /** Changes the same in every project (path and values). */
  common: FieldChange[];
  /** Changed fields whose values differ between the projects. */
  differing: string[];
  /** The note every entry has (`''`: none), unless `notesDiffer`. */
  note: string;
  /** The entries' notes differ: each project's is shown with it. */
  notesDiffer: boolean;
  /** Write requests the change costs: one per entry, one per project for a kind written in bulk (secrets). */
  requests: number;
}

/** Kinds whose entries of one project are written together by one request. */
const BULK_KINDS: ReadonlySet<string> = new Set(['Secret']);

function changeKey(change: FieldChange): string {
  return JSON.stringify([change.path, change.sensitive ?? false, change.before, change.after]);
}

function genericId(entry: PlanEntry): string {
  if (entry.kind === 'Project') return 'Project/*';
  return entry.project !== undefined ? `${entry.kind}/*/${entry.name}` : entry.id;
}

/**
 * Entries in plan order, the entries of a ProjectSet's projects that make the same change
 * folded into one TemplateChange (an element's own change, in one project, stays an entry).
 */
export function foldTemplateChanges(entries: readonly PlanEntry[]): Array<PlanEntry | TemplateChange> {
  // Each entry's group key is made once, and a group grows in place: the fold stays linear in
  // the set's projects.
  const keys = entries.map((entry) => {
    const set = entry.source?.set;
    if (!set) return undefined;
    const paths = entry.changes.map((change) => change.path).sort();
    return JSON.stringify([set.name, genericId(entry), entry.action, paths, entry.observeOnly ?? false, entry.pending ?? false, entry.held?.reason ?? '']);
  });
  const groups = new Map<string, PlanEntry[]>();
  entries.forEach((entry, index) => {
    const key = keys[index];
    if (key === undefined) return;
    const group = groups.get(key);
    if (group) group.push(entry);
    else groups.set(key, [entry]);
  });
  const out: Array<PlanEntry | TemplateChange> = [];
  const placed = new Set<string>();
  entries.forEach((entry, index) => {
    const key = keys[index];
    const group = key !== undefined ? groups.get(key)! : undefined;
    if (!group || group.length < 2) {
      out.push(entry);
      return;
    }
    if (placed.has(key!)) return;
    placed.add(key!);
    out.push(templateChange(group));
  });
  return out;
}

/** A group of two or more entries (one set, the same change to the same paths) as one TemplateChange. */
function templateChange(group: PlanEntry[]): TemplateChange {
  const first = group[0]!;
  // Every entry of the group changes the same paths: a change is common when each has it.
  const others = group.slice(1).map((other) => new Set(other.changes.map(changeKey)));
  const common = first.changes.filter((change) => {
    const key = changeKey(change);
    return others.every((changes) => changes.has(key));
  });
  const commonPaths = new Set(common.map((change) => change.path));
  const notes = new Set(group.map(entryNote));
  return {
    set: first.source!.set!.name,
    entries: group,
    id: genericId(first),
    action: first.action,
    common,
    differing: first.changes.map((change) => change.path).filter((path) => !commonPaths.has(path)),
    note: notes.size === 1 ? [...notes][0]! : '',
    notesDiffer: notes.size > 1,
    requests: isChange(first) ? (BULK_KINDS.has(first.kind) ? new Set(group.map((e) => e.project)).size : group.length) : 0,
  };
}

export function isTemplateChange(item: PlanEntry | TemplateChange): item is TemplateChange {
  return 'entries' in item;
}

/** The project of an entry of a template change. */
export function projectOf(entry: PlanEntry): string {
  return entry.project ?? entry.name;
}

/** `50 projects (acme-prod, globex-prod, ...), 50 write requests`. */
export function templateChangeLine(change: TemplateChange, maxNames = 5): string {
  const names = change.entries.map(projectOf);
  const shown = names.length > maxNames ? `${names.slice(0, maxNames).join(', ')}, and ${names.length - maxNames} more` : names.join(', ');
  const cost = change.requests > 0 ? `, ${change.requests} write request${change.requests === 1 ? '' : 's'}` : '';
  return maxNames === 0 ? `${names.length} projects${cost}` : `${names.length} projects: ${shown}${cost}`;
}
