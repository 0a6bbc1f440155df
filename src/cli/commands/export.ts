// `reconcile export (--project REF | --all) [--out DIR]`: manifests for live projects. The
// output is checked with the manifest loader before it is handed over, so it validates with
// `reconcile validate` (once the referenced variables are set, it plans no change).
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { openApiSession, type ApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, stringOption, type CommandContext } from '../context.js';
import { commandLogger } from './reconcile.js';
import { exportFleet, ExportSelectionError, type ExportedDocument } from '../../reconcile/export.js';
import { loadManifests } from '../../manifests/load.js';

const HEADER = '# Exported from the live fleet. Secret values are references: set each variable before applying.\n';

/** The documents grouped by file, in a stable order, as YAML text. */
export function renderFiles(documents: ExportedDocument[]): Map<string, string> {
  const files = new Map<string, string[]>();
  for (const { file, document } of documents) {
    const list = files.get(file) ?? [];
    list.push(stringify(document, { lineWidth: 0 }));
    files.set(file, list);
  }
  return new Map([...files].map(([file, docs]) => [file, `${HEADER}${docs.join('---\n')}`]));
}

export async function run(context: CommandContext): Promise<number> {
  const project = stringOption(context, 'project');
  const all = context.values.all === true;
  if (project === undefined && !all) throw new UsageError('export: give --project REF (or a name) or --all');
  if (project !== undefined && all) throw new UsageError('export: --project and --all exclude each other');
  if (context.positionals.length > 0) throw new UsageError(`export: unexpected argument ${context.positionals[0]}`);
  const out = stringOption(context, 'out');
  const log = commandLogger(context);

  const session: ApiSession = context.values.sandbox === true ? await openSandboxSession(context, log) : await openApiSession(context, { log });
  let documents: ExportedDocument[];
  try {
    documents = await exportFleet({ api: session.client.api, ...(project !== undefined ? { projects: [project] } : {}), log });
  } catch (error) {
    if (error instanceof ExportSelectionError) {
      context.stderr.write(`reconcile export: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await session.close();
  }
  if (documents.length === 0) {
    context.stderr.write('reconcile export: no live project to export\n');
    return 1;
  }
  const files = renderFiles(documents);

  // Check the output with the same loader `reconcile validate` uses, before handing it over.
  const scratch = await mkdtemp(join(tmpdir(), 'reconcile-export-'));
  try {
    for (const [file, text] of files) await writeFile(join(scratch, file), text);
    const checked = await loadManifests(scratch);
    if (checked.errors.length > 0) {
      for (const error of checked.errors) context.stderr.write(`reconcile export: generated ${error.file}:${error.line}:${error.column} ${error.path}: ${error.message}\n`);
      return 1;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }

  if (out === undefined) {
    context.stdout.write([...files.values()].join('---\n'));
    return 0;
  }
  const dir = resolve(context.cwd, out);
  await mkdir(dir, { recursive: true });
  for (const [file, text] of files) await writeFile(join(dir, file), text);
  context.stderr.write(`reconcile export: wrote ${files.size} file${files.size === 1 ? '' : 's'} to ${dir}\n`);
  return 0;
}
