// The plan as a pull-request comment: what was planned against what first, then the summary
// line, deletions warned before anything else, every entry's details folded in a ```diff
// block so that GitHub colours it (+ added, - removed, ! changed). A comment holds at most
// 65536 characters: a long plan shows fewer entries, never a cut table, fence or <details>.
import type { FieldChange, PassResult, PlanEntry } from '../types.js';
import type { RateSpec } from '../../util/rate.js';
import { applyForecast, applyForecastLine } from '../forecast.js';
import { KIND_MODULES } from '../registry.js';
import {
  foldTemplateChanges, isTemplateChange, projectOf, templateChangeLine, type TemplateChange,
  changeMarker, changeText, entryMarker, entryNote, observationFailure, observationFailureLine, interruptedText, outcomeCounts, problemLabel, refusedLine, rolloutLines, summaryLine, verifyLine, visibleEntries, waitLine,
  type Marker,
} from './format.js';

/**
 * The default size limit: GitHub's 65536 characters for a comment, less room for the few
 * lines a workflow puts around the plan (a marker, a verdict).
 */
const MARKDOWN_MAX_LENGTH = 60_000;

interface MarkdownOptions {
  color?: boolean;
  /** The manifests directory and the environment (API or sandbox), named on the first line. */
  heading?: { dir: string; environment: string };
  /** Longest output in characters; entries past what fits are counted, not shown. */
  maxLength?: number;
  /** A dry run with changes: the apply's forecast at this budget (`budget` names it, e.g. "the daemon's default budget"). */
  forecast?: { rate: RateSpec; budget: string };
}

/** Text inside a fenced block: a fence in a value must not close it. */
function fenced(text: string): string {
  return text.replace(/```/g, '`\u200b``');
}

/** Text in a table cell or a heading. */
function inline(text: string): string {
  return text.replace(/[|<>]/g, (c) => ({ '|': '\\|', '<': '&lt;', '>': '&gt;' })[c]!).replace(/\n/g, ' ');
}

/** GitHub's diff highlighting colours `+`, `-` and `!` lines; `~` (changed) would stay plain. */
function diffPrefix(marker: Marker): string {
  return marker === '~' ? '!' : marker;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function headingLines(options: MarkdownOptions, result: PassResult): string[] {
  if (!options.heading) return [];
  return [`### Manifests \`${inline(options.heading.dir).replace(/`/g, "'")}\` against ${inline(options.heading.environment)}`, ''];
}

/** Renders with at most `shown` items in each list; the caller looks for the largest that fits. */
function renderWith(result: PassResult, options: MarkdownOptions, shown: number): string {
  const out: string[] = headingLines(options, result);
  const more = (total: number, noun: string) => (total > shown ? [`_${total - shown} more ${noun} not shown: the comment is limited to 65536 characters; run the same command locally for all of it._`] : []);
  if (result.result === 'invalid') {
    const errors = result.manifestErrors;
    out.push(`**Manifests are invalid: nothing was planned or applied (${plural(errors.length, 'error', 'errors')}).**`, '');
    for (const error of errors.slice(0, shown)) {
      out.push(`- \`${inline(`${error.file}:${error.line}:${error.column}`)}\`${error.path ? ` \`${inline(error.path)}\`` : ''}: ${inline(error.message)}${error.hint ? ` (${inline(error.hint)})` : ''}`);
    }
    out.push(...more(errors.length, 'errors'));
    return `${out.join('\n')}\n`;
  }
  const unobserved = observationFailure(result);
  if (unobserved) {
    // Nothing was observed: no plan to show, and no claim about the live state.
    out.push(`**${inline(observationFailureLine(unobserved))}**`, '', `Result: **${result.result}**.`);
    return `${out.join('\n')}\n`;
  }
  const mode = result.dryRun ? 'dry run' : refusedLine(result) ? 'refused: nothing was applied' : 'applied';
  out.push(`**${summaryLine(result)}** (${mode}${result.revision ? `, revision \`${inline(result.revision)}\`` : ''})`, '');
  const rollout = rolloutLines(result.rollout);
  if (rollout.length > 0) out.push(...rollout.map(inline), '');
  if (options.forecast && result.dryRun && result.plan.hasChanges) {
    out.push(inline(applyForecastLine(applyForecast(result, options.forecast.rate), options.forecast.rate, options.forecast.budget)), '');
  }

  const entries = visibleEntries(result);
  const deletions = entries.filter((e) => e.action === 'delete' && !e.observeOnly);
  if (deletions.length > 0) {
    out.push('> [!WARNING]', `> **${plural(deletions.length, 'deletion', 'deletions')}:**`);
    for (const entry of deletions.slice(0, shown)) out.push(`> - \`${inline(entry.id)}\`${entry.reason ? `: ${inline(entry.reason)}` : ''}`);
    for (const line of more(deletions.length, 'deletions')) out.push(`> ${line}`);
    out.push('');
  }
  const blocked = entries.filter((e) => e.action === 'blocked');
  if (blocked.length > 0) {
    out.push('> [!CAUTION]', `> **${blocked.length} blocked:**`);
    for (const entry of blocked.slice(0, shown)) out.push(`> - \`${inline(entry.id)}\`: ${inline(entry.reason ?? 'blocked')}`);
    for (const line of more(blocked.length, 'blocked entries')) out.push(`> ${line}`);
    out.push('');
  }
  const quiet = !result.plan.hasChanges && result.plan.summary.blocked === 0 && (result.plan.drift ?? 0) === 0 && !entries.some((e) => e.pending);
  if (quiet) out.push('No changes. The live state matches the manifests.', '');
  if (entries.length > 0) {
    // A change of a ProjectSet's template is one row, its per-project detail folded.
    const items = foldTemplateChanges(entries);
    const listedItems = items.slice(0, shown);
    const listed = listedItems.flatMap((item) => (isTemplateChange(item) ? item.entries : [item]));
    out.push('| | resource | action | note |', '|---|---|---|---|');
    for (const item of listedItems) {
      if (isTemplateChange(item)) {
        const note = [templateChangeLine(item), ...(item.note ? [item.note] : [])].join('; ');
        out.push(`| \`${entryMarker(item.entries[0]!)}\` | ProjectSet \`${inline(item.set)}\`: \`${inline(item.id)}\` | ${item.action} | ${inline(note)} |`);
      } else {
        const set = item.source?.set;
        const note = [...(set ? [`ProjectSet ${set.name}, element ${set.key}`] : []), ...(entryNote(item) ? [entryNote(item)] : [])].join('; ');
        out.push(`| \`${entryMarker(item)}\` | \`${inline(item.id)}\` | ${item.action} | ${inline(note)} |`);
      }
    }
    out.push(...more(items.length, 'entries').map((line) => `\n${line}`));
    out.push('');
    if (listedItems.length > 0) {
      out.push(`<details><summary>Details (${plural(listedItems.length, 'entry', 'entries')})</summary>`, '', '```diff');
      for (const item of listedItems) out.push(...(isTemplateChange(item) ? templateDiffLines(item) : diffLines(item)));
      out.push('```', '', '</details>');
    }
    for (const item of listedItems) if (isTemplateChange(item)) out.push(...templateProjects(item));
    // What only a kind shows of its entries (the SQL of a pending migration).
    for (const module of KIND_MODULES) if (module.render) out.push(...module.render.markdown(listed, inline));
  }
  const refused = refusedLine(result);
  if (refused) out.push('', `**${inline(refused)}**`);
  if (!result.dryRun && result.outcomes.length > 0) {
    const counts = outcomeCounts(result);
    out.push('', `**Apply:** ${counts.success} succeeded, ${counts.failed} failed, ${counts.skipped} skipped${interruptedText(counts)}.`);
    const waits = waitLine(result);
    if (waits) out.push('', waits);
    const checks = verifyLine(result);
    if (checks) out.push('', checks);
    const problems = result.outcomes.filter((o) => o.result !== 'success');
    if (problems.length > 0) {
      out.push('', '<details><summary>Failed, skipped and blocked</summary>', '');
      for (const o of problems.slice(0, shown)) out.push(`- \`${inline(o.entryId)}\` ${problemLabel(o).word}${o.error ? `: ${inline(o.error.message)}` : ''}`);
      out.push(...more(problems.length, 'outcomes').map((line) => `- ${line}`));
      out.push('', '</details>');
    }
  }
  out.push('', `Result: **${result.result}**.`);
  return `${out.join('\n')}\n`;
}

/** A template change's lines in the details: once, with the fields every project shares. */
function templateDiffLines(change: TemplateChange): string[] {
  const lines = [fenced(`${diffPrefix(entryMarker(change.entries[0]!))} ProjectSet ${change.set}: ${change.id} (${change.action}, ${change.entries.length} projects)`)];
  for (const field of change.common) lines.push(...changeLines(change.entries[0]!, field));
  for (const path of change.differing) lines.push(fenced(`!   ${path}: differs by project (below)`));
  return lines;
}

/** The projects of a template change, folded: each with its own fields and notes where they differ. */
function templateProjects(change: TemplateChange): string[] {
  const out = ['', `<details><summary>ProjectSet ${inline(change.set)}: ${inline(change.id)}, ${inline(templateChangeLine(change, 0))}</summary>`, ''];
  if (change.differing.length === 0 && !change.notesDiffer) {
    out.push(change.entries.map((entry) => `\`${inline(projectOf(entry))}\``).join(', '));
  } else {
    out.push('```diff');
    for (const entry of change.entries) {
      out.push(fenced(`${diffPrefix(entryMarker(entry))} ${entry.id}${change.notesDiffer && entryNote(entry) ? ` (${entryNote(entry)})` : ''}`));
      for (const field of entry.changes.filter((c) => change.differing.includes(c.path))) out.push(...changeLines(entry, field));
    }
    out.push('```');
  }
  out.push('', '</details>');
  return out;
}

function changeLines(entry: PlanEntry, change: FieldChange): string[] {
  const marker = entry.action === 'create' ? '+' : entry.action === 'delete' ? '-' : entry.action === 'blocked' ? '!' : changeMarker(change);
  return [fenced(`${diffPrefix(marker)}   ${changeText(change)}`)];
}

function diffLines(entry: PlanEntry): string[] {
  const lines = [fenced(`${diffPrefix(entryMarker(entry))} ${entry.id} (${entry.action})`)];
  for (const change of entry.changes) {
    const marker = entry.action === 'create' ? '+' : entry.action === 'delete' ? '-' : entry.action === 'blocked' ? '!' : changeMarker(change);
    lines.push(fenced(`${diffPrefix(marker)}   ${changeText(change)}`));
  }
  return lines;
}

export function renderMarkdown(result: PassResult, options: MarkdownOptions = {}): string {
  const maxLength = options.maxLength ?? MARKDOWN_MAX_LENGTH;
  const longest = Math.max(result.manifestErrors.length, result.plan.entries.length, result.outcomes.length);
  const whole = renderWith(result, options, longest);
  if (whole.length <= maxLength) return whole;
  // The length grows with the number of items shown: find the most that fit.
  let low = 0;
  let high = longest;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (renderWith(result, options, mid).length <= maxLength) low = mid;
    else high = mid - 1;
  }
  return renderWith(result, options, low);
}
