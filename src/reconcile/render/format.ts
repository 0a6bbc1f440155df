// Formatting shared by the renderers: the summary line, values and change lines. A sensitive
// change never shows a value, whatever the entry holds.
import type { FieldChange, PassResult, PlanEntry } from '../types.js';
import { isChange, isObservedDrift } from '../summary.js';

export const SENSITIVE = '(sensitive value changed)';

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
  if (entry.reason) notes.push(entry.reason);
  return notes.join('; ');
}

export function outcomeCounts(result: PassResult): { success: number; failed: number; skipped: number } {
  const counts = { success: 0, failed: 0, skipped: 0 };
  for (const outcome of result.outcomes) counts[outcome.result] += 1;
  return counts;
}
