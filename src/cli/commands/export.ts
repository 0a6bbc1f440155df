// `reconcile export (--project REF | --all) [--out DIR]`: manifests for live projects. The
// output is checked with the manifest loader before it is handed over, so it validates with
// `reconcile validate` (once the referenced variables are set, it plans no change). Function
// sources are files: they are exported only into an output directory, never to stdout.
import { mkdtemp, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { stringify } from 'yaml';
import { openApiSession, type ApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, type ContextOf } from '../context.js';
import { commandLogger } from './reconcile.js';
import { exportFleet, ExportSelectionError, ExportVariableCollisionError, FunctionExportError, type ExportedDocument, type ExportedFile, type FleetExport } from '../../reconcile/export.js';
import { loadManifests } from '../../reconcile/load-manifests.js';
import { TreeWalkError, walkTree } from '../../manifests/walk-tree.js';

const HEADER = '# Exported from the live fleet. Secret values are references: set each variable before applying.\n';

/** The documents grouped by file, in a stable order, as YAML text. */
function renderFiles(documents: ExportedDocument[]): Map<string, string> {
  const files = new Map<string, string[]>();
  for (const { file, document } of documents) {
    const list = files.get(file) ?? [];
    list.push(stringify(document, { lineWidth: 0 }));
    files.set(file, list);
  }
  return new Map([...files].map(([file, docs]) => [file, `${HEADER}${docs.join('---\n')}`]));
}

/** Writes the manifests and the function sources below `dir`. */
async function writeAll(dir: string, manifests: Map<string, string>, sources: ExportedFile[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [file, text] of manifests) await writeFile(join(dir, file), text);
  for (const file of sources) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content);
  }
}

/** The function directories (relative to the output directory) the export writes. */
function functionDirectories(documents: ExportedDocument[]): string[] {
  return documents.filter((d) => d.document.kind === 'Function').map((d) => String((d.document.spec as Record<string, unknown>).source));
}

/**
 * Files already in a function directory that the export does not write. The reconciler uploads
 * a directory whole, so a stale file would be deployed with the live sources; removing it is
 * the user's call, not the export's.
 */
async function strayFiles(dir: string, exported: FleetExport): Promise<string[]> {
  const written = new Set(exported.files.map((f) => f.path));
  const stray: string[] = [];
  for (const source of functionDirectories(exported.documents)) {
    const root = join(dir, source);
    if (!existsSync(root)) continue;
    // The reconciler's own walker: what it lists is what a later pass would upload.
    let listed: string[];
    try {
      listed = (await walkTree(await realpath(root))).files.map((file) => file.path);
    } catch (error) {
      if (!(error instanceof TreeWalkError)) throw error;
      // A broken or escaping link would fail the upload: it is for the user to look at too.
      listed = [error.path];
    }
    for (const rel of listed) {
      const path = relative(dir, join(root, ...rel.split('/'))).split(sep).join('/');
      if (!written.has(path)) stray.push(path);
    }
  }
  return stray.sort();
}

export async function run(context: ContextOf<'export'>): Promise<number> {
  const project = context.settings.project;
  const all = context.settings.all;
  if (project === undefined && !all) throw new UsageError('export: give --project REF (or a name) or --all');
  if (project !== undefined && all) throw new UsageError('export: --project and --all exclude each other');
  if (context.positionals.length > 0) throw new UsageError(`export: unexpected argument ${context.positionals[0]}`);
  const out = context.settings.out;
  const log = commandLogger(context);

  const session: ApiSession = context.settings.sandbox ? await openSandboxSession(context.settings, log) : await openApiSession(context.settings, context.env, { log });
  let exported: FleetExport;
  try {
    exported = await exportFleet({
      api: session.client.api,
      ...(project !== undefined ? { projects: [project] } : {}),
      // Sources are files: without a directory to write them to, functions are left out.
      functions: out !== undefined,
      log,
    });
  } catch (error) {
    if (error instanceof ExportSelectionError || error instanceof FunctionExportError || error instanceof ExportVariableCollisionError) {
      context.stderr.write(`reconcile export: ${error.message}\n`);
      if (!(error instanceof ExportSelectionError)) context.stderr.write('reconcile export: nothing was written\n');
      return 1;
    }
    throw error;
  } finally {
    await session.close();
  }
  const { documents, files: sources, functionsLeftOut, unreadable } = exported;
  for (const project of unreadable) {
    context.stderr.write(
      `reconcile export: warning: project ${project.name} (${project.ref}) is ${project.status}, so the service does not serve its configuration: exported as its Organization and Project (adopted by ref) only, without configuration sections, secrets, functions, SSO providers or branches; export it again once it is ACTIVE_HEALTHY\n`,
    );
  }
  if (documents.length === 0) {
    context.stderr.write('reconcile export: no live project to export\n');
    return 1;
  }
  if (functionsLeftOut.length > 0) {
    const count = functionsLeftOut.length;
    context.stderr.write(
      `reconcile export: ${count} function${count === 1 ? '' : 's'} not exported (${functionsLeftOut.join(', ')}): function sources are files, give --out DIR to export them\n`,
    );
  }
  const manifests = renderFiles(documents);

  // Check the output with the same loader `reconcile validate` uses, before handing it over.
  // Function documents point at their sources, so those are written to the scratch copy too.
  const scratch = await mkdtemp(join(tmpdir(), 'reconcile-export-'));
  try {
    await writeAll(scratch, manifests, sources);
    const checked = await loadManifests(scratch);
    if (checked.errors.length > 0) {
      for (const error of checked.errors) {
        const file = relative(scratch, resolve(scratch, error.file)).split(sep).join('/');
        context.stderr.write(`reconcile export: generated ${file}:${error.line}:${error.column} ${error.path}: ${error.message}\n`);
      }
      return 1;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }

  if (out === undefined) {
    context.stdout.write([...manifests.values()].join('---\n'));
    return 0;
  }
  const dir = resolve(context.cwd, out);
  const stray = await strayFiles(dir, exported);
  if (stray.length > 0) {
    context.stderr.write(
      `reconcile export: ${dir} already holds function files the live functions do not have (they would be deployed with them): ${stray.join(', ')}; remove them or export to an empty directory. Nothing was written.\n`,
    );
    return 1;
  }
  await writeAll(dir, manifests, sources);
  const count = manifests.size + sources.length;
  context.stderr.write(`reconcile export: wrote ${count} file${count === 1 ? '' : 's'} to ${dir}\n`);
  return 0;
}
