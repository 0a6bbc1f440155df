// The plan as a reviewed diff: `+` create, `~` update, `-` delete, `!` blocked; field paths with
// before -> after; a secret only as `(sensitive value changed)`. Colour only when asked (a TTY).
import type { FieldChange, PassResult } from '../types.js';
import {
  foldTemplateChanges, isTemplateChange, projectOf, templateChangeLine,
  changeMarker, changeText, entryMarker, entryNote, observationFailure, observationFailureLine, interruptedText, outcomeCounts, problemLabel, refusedLine, rolloutLines, summaryLine, verifyLine, visibleEntries, waitLine,
  type Marker,
} from './format.js';

const COLORS: Record<Marker, string> = { '+': '\u001b[32m', '~': '\u001b[33m', '-': '\u001b[31m', '!': '\u001b[35m', ' ': '' };
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';
const BOLD = '\u001b[1m';

interface TextOptions {
  color: boolean;
}

export function renderText(result: PassResult, options: TextOptions): string {
  const paint = (code: string, text: string) => (options.color && code ? `${code}${text}${RESET}` : text);
  const lines: string[] = [];
  if (result.result === 'invalid') {
    lines.push(paint(COLORS['-'], `Manifests are invalid (${result.manifestErrors.length} error${result.manifestErrors.length === 1 ? '' : 's'}): nothing was planned or applied.`));
    for (const error of result.manifestErrors) {
      const where = `${error.file}:${error.line}:${error.column}`;
      lines.push(`  ${where}${error.path ? ` ${error.path}` : ''}: ${error.message}${error.hint ? ` (${error.hint})` : ''}`);
    }
    return `${lines.join('\n')}\n`;
  }
  const unobserved = observationFailure(result);
  if (unobserved) {
    // Nothing was observed: no plan to show, and no claim about the live state.
    lines.push(paint(COLORS['-'], observationFailureLine(unobserved)));
    lines.push(`Result: ${result.result} (${result.requests} API request${result.requests === 1 ? '' : 's'}).`);
    return `${lines.join('\n')}\n`;
  }
  const refused = refusedLine(result);
  const heading = result.dryRun ? 'Plan (dry run: nothing was changed)' : refused ? 'Plan (refused: nothing was applied)' : 'Plan (applied: outcomes below)';
  lines.push(paint(BOLD, `${heading}${result.revision ? ` at revision ${result.revision}` : ''}`));
  const entries = visibleEntries(result);
  const changeLine = (entry: { action: string }, change: FieldChange, indent: string) => {
    const m = entry.action === 'create' ? '+' : entry.action === 'delete' ? '-' : changeMarker(change);
    return paint(COLORS[m], `${indent}${m} ${changeText(change)}`);
  };
  for (const item of foldTemplateChanges(entries)) {
    lines.push('');
    if (isTemplateChange(item)) {
      // A template change, once: the projects it affects and what it costs, then its fields.
      const marker = entryMarker(item.entries[0]!);
      lines.push(`${paint(COLORS[marker], `${marker} ProjectSet ${item.set}: ${item.id}`)} ${paint(DIM, item.action)}${item.note ? paint(DIM, `  (${item.note})`) : ''}`);
      lines.push(paint(DIM, `    ${templateChangeLine(item)}`));
      for (const change of item.common) lines.push(changeLine(item, change, '    '));
      if (item.differing.length > 0 || item.notesDiffer) {
        for (const entry of item.entries) {
          const note = item.notesDiffer ? entryNote(entry) : '';
          lines.push(`    ${projectOf(entry)}${note ? paint(DIM, `  (${note})`) : ''}`);
          for (const change of entry.changes.filter((c) => item.differing.includes(c.path))) lines.push(changeLine(entry, change, '      '));
        }
      }
      continue;
    }
    const entry = item;
    const marker = entryMarker(entry);
    const note = entryNote(entry);
    const set = entry.source?.set;
    lines.push(`${paint(COLORS[marker], `${marker} ${entry.id}`)} ${paint(DIM, entry.action)}${set ? paint(DIM, `  [ProjectSet ${set.name}, element ${set.key}]`) : ''}${note ? paint(DIM, `  (${note})`) : ''}`);
    for (const change of entry.changes) lines.push(changeLine(entry, change, '    '));
  }
  const quiet = !result.plan.hasChanges && result.plan.summary.blocked === 0 && (result.plan.drift ?? 0) === 0 && !entries.some((e) => e.pending);
  if (quiet) lines.push('', 'No changes. The live state matches the manifests.');
  lines.push('', paint(BOLD, `${summaryLine(result)}.`));
  lines.push(...rolloutLines(result.rollout));
  if (refused) lines.push(paint(COLORS['-'], refused));
  if (!result.dryRun && result.outcomes.length > 0) {
    const counts = outcomeCounts(result);
    lines.push(`Apply: ${counts.success} succeeded, ${counts.failed} failed, ${counts.skipped} skipped${interruptedText(counts)}.`);
    const waits = waitLine(result);
    if (waits) lines.push(waits);
    const checks = verifyLine(result);
    if (checks) lines.push(checks);
    for (const outcome of result.outcomes.filter((o) => o.result !== 'success')) {
      const { marker, word } = problemLabel(outcome);
      lines.push(paint(COLORS['-'], `  ${marker} ${outcome.entryId} ${word}${outcome.error ? `: ${outcome.error.message}` : ''}`));
    }
  }
  if (result.result === 'failed' && result.outcomes.length === 0) {
    const failures = result.resources.filter((r) => r.state === 'failed');
    if (failures.length > 0) lines.push(`Failed: ${failures.map((r) => `${r.id}${r.message ? ` (${r.message})` : ''}`).join('; ')}`);
  }
  lines.push(`Result: ${result.result} (${result.requests} API request${result.requests === 1 ? '' : 's'}).`);
  return `${lines.join('\n')}\n`;
}
