// `reconcile validate [DIR]`: offline checks of a manifests directory (schemas, references
// between documents, function sources, secret references), every problem at once. No token,
// no network. A shard map is checked too: it must give every project exactly one owner. Exit 0 when there is no error (warnings allowed), 1 otherwise.
import { join, relative, resolve, sep } from 'node:path';
import { UsageError, type ContextOf } from '../context.js';
import { checkSecretReferences } from '../../manifests/check-refs.js';
import { loadShardedManifests } from '../../shards/load-sharded.js';
import type { ManifestError, ManifestSet } from '../../manifests/types.js';
import { referenceOptions } from '../reference-options.js';

/** Version of the `--output json` shape; bumped only on an incompatible change. */
const VALIDATE_JSON_VERSION = 1;

interface ValidateProblem {
  file: string;
  line: number;
  column: number;
  path: string;
  message: string;
  hint?: string;
  reference?: string;
}

interface ValidateReport {
  version: typeof VALIDATE_JSON_VERSION;
  valid: boolean;
  /** The directory read (symlinks resolved). */
  root: string;
  revision: string | null;
  files: number;
  documents: number;
  /** Count of documents per kind (valid ones). */
  kinds: Record<string, number>;
  errors: ValidateProblem[];
  warnings: ValidateProblem[];
}

function problem(error: ManifestError): ValidateProblem {
  const { file, line, column, path, message, hint, reference } = error;
  return { file, line, column, path, message, ...(hint ? { hint } : {}), ...(reference ? { reference } : {}) };
}

function buildReport(set: ManifestSet, referenceProblems: ManifestError[]): ValidateReport {
  const all = [...set.errors, ...referenceProblems];
  const errors = all.filter((e) => (e.severity ?? 'error') === 'error').map(problem);
  const warnings = all.filter((e) => e.severity === 'warning').map(problem);
  const byPosition = (a: ValidateProblem, b: ValidateProblem) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column;
  const kinds: Record<string, number> = {};
  for (const document of set.documents) kinds[document.kind] = (kinds[document.kind] ?? 0) + 1;
  return {
    version: VALIDATE_JSON_VERSION,
    valid: errors.length === 0,
    root: set.root,
    revision: set.revision ?? null,
    files: set.files?.length ?? 0,
    documents: set.documents.length,
    kinds,
    errors: errors.sort(byPosition),
    warnings: warnings.sort(byPosition),
  };
}

function formatProblem(item: ValidateProblem, severity: 'error' | 'warning'): string {
  const prefix = severity === 'warning' ? 'warning: ' : '';
  return `${item.file}:${item.line}:${item.column} ${item.path || '/'}: ${prefix}${item.message}${item.hint ? ` (${item.hint})` : ''}`;
}

export function renderText(report: ValidateReport): string {
  const lines = [...report.errors.map((e) => formatProblem(e, 'error')), ...report.warnings.map((w) => formatProblem(w, 'warning'))];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const summary = report.valid
    ? `valid: ${plural(report.documents, 'document')} in ${plural(report.files, 'file')}${report.warnings.length ? `, ${plural(report.warnings.length, 'warning')}` : ''}`
    : `invalid: ${plural(report.errors.length, 'error')}${report.warnings.length ? `, ${plural(report.warnings.length, 'warning')}` : ''} (${plural(report.files, 'file')} read)`;
  return `${[...lines, summary].join('\n')}\n`;
}

/** Escapes a workflow command's message (GitHub's `escapeData`). */
function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes a workflow command's property value (GitHub's `escapeProperty`). */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/**
 * GitHub Actions workflow commands: one `::error` or `::warning` line per problem, which the
 * runner turns into annotations on the pull request's files. Annotation paths are relative to
 * the working directory (the checkout in a workflow), so a manifests directory below the
 * repository root still points at the right file.
 */
function renderGithub(report: ValidateReport, dir: string, cwd: string, unsetEnv: readonly ManifestError[]): string {
  const annotation = (item: ValidateProblem, severity: 'error' | 'warning') => {
    const file = relative(cwd, join(dir, item.file)).split(sep).join('/');
    const title = `reconcile validate: ${item.path || '/'}`;
    const message = `${item.path || '/'}: ${item.message}${item.hint ? ` (${item.hint})` : ''}`;
    return `::${severity} file=${escapeProperty(file)},line=${item.line},col=${item.column},title=${escapeProperty(title)}::${escapeData(message)}`;
  };
  const lines = [...report.errors.map((e) => annotation(e, 'error')), ...report.warnings.map((w) => annotation(w, 'warning'))];
  // A workflow validates without the secrets (they reach the plan step alone): one notice names
  // the variables a plan will need, instead of a warning on every reference.
  if (unsetEnv.length > 0) {
    const names = [...new Set(unsetEnv.map((w) => (w.reference ?? '').replace(/^env:/, '')))].sort();
    const count = unsetEnv.length === 1 ? '1 secret reference reads' : `${unsetEnv.length} secret references read`;
    lines.push(`::notice title=${escapeProperty('reconcile validate: secret references')}::${escapeData(`${count} environment variables that are not set in this step (validate needs none; the plan and the apply do): ${names.join(', ')}`)}`);
  }
  // The text output's summary line closes the job log's section as it does on a terminal.
  const summary = renderText(report).trimEnd().split('\n').at(-1)!;
  return `${[...lines, summary].join('\n')}\n`;
}

export async function run(context: ContextOf<'validate'>): Promise<number> {
  if (context.positionals.length > 1) throw new UsageError(`validate takes at most one directory, got ${context.positionals.length}`);
  const output = context.settings.output;
  if (output !== 'text' && output !== 'json' && output !== 'github') throw new UsageError(`validate: --output must be text, json or github, got \`${output}\``);
  const dir = resolve(context.cwd, context.positionals[0] ?? context.settings.manifests ?? '.');
  // The shard map (if any) is checked with the manifests: a project with no owner or two is an error.
  const shardsFile = context.settings.shards;
  const { set } = await loadShardedManifests(dir, { cwd: context.cwd, load: { references: referenceOptions(context) }, ...(shardsFile !== undefined ? { shardsFile } : {}) });
  // Offline in CI the secrets are usually absent: an unset variable is a warning here, while
  // a missing file is an error (files are part of the checkout or of the deployment).
  const referenceProblems = checkSecretReferences(set, { env: context.env, sandbox: context.settings.sandbox, missingEnv: 'warning' });
  if (output === 'github') {
    const unsetEnv = referenceProblems.filter((p) => p.severity === 'warning');
    const report = buildReport(set, referenceProblems.filter((p) => p.severity !== 'warning'));
    context.stdout.write(renderGithub(report, dir, context.cwd, unsetEnv));
    return report.valid ? 0 : 1;
  }
  const report = buildReport(set, referenceProblems);
  context.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderText(report));
  return report.valid ? 0 : 1;
}
