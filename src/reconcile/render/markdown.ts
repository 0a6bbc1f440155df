// The plan as a pull-request comment: the summary line first, deletions warned before
// anything else, every entry's details folded.
import type { PassResult } from '../types.js';
import {
  changeMarker, changeText, entryMarker, entryNote, observationFailure, observationFailureLine, outcomeCounts, problemLabel, refusedLine, summaryLine, visibleEntries, waitLine,
} from './format.js';

/** Text inside a fenced block: a fence in a value must not close it. */
function fenced(text: string): string {
  return text.replace(/```/g, '`\u200b``');
}

/** Text in a table cell or a heading. */
function inline(text: string): string {
  return text.replace(/[|<>]/g, (c) => ({ '|': '\\|', '<': '&lt;', '>': '&gt;' })[c]!).replace(/\n/g, ' ');
}

export function renderMarkdown(result: PassResult, _options: { color?: boolean } = {}): string {
  const out: string[] = [];
  if (result.result === 'invalid') {
    out.push(`**Manifests are invalid: nothing was planned or applied (${result.manifestErrors.length} error${result.manifestErrors.length === 1 ? '' : 's'}).**`, '');
    for (const error of result.manifestErrors) {
      out.push(`- \`${inline(`${error.file}:${error.line}:${error.column}`)}\`${error.path ? ` \`${inline(error.path)}\`` : ''}: ${inline(error.message)}${error.hint ? ` (${inline(error.hint)})` : ''}`);
    }
    return `${out.join('\n')}\n`;
  }
  const unobserved = observationFailure(result);
  if (unobserved) {
    // Nothing was observed: no plan to show, and no claim about the live state.
    out.push(`**${inline(observationFailureLine(unobserved))}**`, '', `Result: **${result.result}**.`);
    return `${out.join('\n')}\n`;
  }
  const mode = result.dryRun ? 'dry run' : 'applied';
  out.push(`**${summaryLine(result)}** (${mode}${result.revision ? `, revision \`${inline(result.revision)}\`` : ''})`, '');

  const entries = visibleEntries(result);
  const deletions = entries.filter((e) => e.action === 'delete' && !e.observeOnly);
  if (deletions.length > 0) {
    out.push('> [!WARNING]', `> **${deletions.length} deletion${deletions.length === 1 ? '' : 's'}:**`);
    for (const entry of deletions) out.push(`> - \`${inline(entry.id)}\`${entry.reason ? `: ${inline(entry.reason)}` : ''}`);
    out.push('');
  }
  const blocked = entries.filter((e) => e.action === 'blocked');
  if (blocked.length > 0) {
    out.push('> [!CAUTION]', `> **${blocked.length} blocked:**`);
    for (const entry of blocked) out.push(`> - \`${inline(entry.id)}\`: ${inline(entry.reason ?? 'blocked')}`);
    out.push('');
  }
  const quiet = !result.plan.hasChanges && result.plan.summary.blocked === 0 && (result.plan.drift ?? 0) === 0 && !entries.some((e) => e.pending);
  if (quiet) out.push('No changes. The live state matches the manifests.', '');
  if (entries.length > 0) {
    out.push('| | resource | action | note |', '|---|---|---|---|');
    for (const entry of entries) {
      out.push(`| \`${entryMarker(entry)}\` | \`${inline(entry.id)}\` | ${entry.action} | ${inline(entryNote(entry))} |`);
    }
    out.push('');
    out.push(`<details><summary>Details (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'})</summary>`, '', '```diff');
    for (const entry of entries) {
      out.push(fenced(`${entryMarker(entry)} ${entry.id} (${entry.action})`));
      for (const change of entry.changes) {
        const m = entry.action === 'create' ? '+' : entry.action === 'delete' ? '-' : entry.action === 'blocked' ? '!' : changeMarker(change);
        out.push(fenced(`${m}   ${changeText(change)}`));
      }
    }
    out.push('```', '', '</details>');
  }
  const refused = refusedLine(result);
  if (refused) out.push('', `**${inline(refused)}**`);
  if (!result.dryRun && result.outcomes.length > 0) {
    const counts = outcomeCounts(result);
    out.push('', `**Apply:** ${counts.success} succeeded, ${counts.failed} failed, ${counts.skipped} skipped.`);
    const waits = waitLine(result);
    if (waits) out.push('', waits);
    const problems = result.outcomes.filter((o) => o.result !== 'success');
    if (problems.length > 0) {
      out.push('', '<details><summary>Failed, skipped and blocked</summary>', '');
      for (const o of problems) out.push(`- \`${inline(o.entryId)}\` ${problemLabel(o).word}${o.error ? `: ${inline(o.error.message)}` : ''}`);
      out.push('', '</details>');
    }
  }
  out.push('', `Result: **${result.result}**.`);
  return `${out.join('\n')}\n`;
}
