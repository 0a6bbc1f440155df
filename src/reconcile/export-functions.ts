// Functions of a live project as files plus a `Function` document: the sources come from the
// body endpoint (multipart: a `metadata` part and one part per file), parsed by the same code
// the Function kind compares bodies with, so what is written is exactly what the next plan
// digests. File names come from the service and become paths on this machine: each is checked
// to stay inside the function's directory before anything is written.
import { posix } from 'node:path';
import type { ManagementApi } from '../api/endpoints.js';
import type { FunctionResponse } from '../api/types.js';
import { API_VERSION } from '../manifests/types.js';
import { normalizeBodyPath, parseFunctionBody, type DeployedFile } from './kinds/function-deploy.js';
import { FunctionSourceError, normalizeRelative } from './kinds/function-sources.js';
import type { ExportedFile, Logger } from './types.js';

/** Slugs the service accepts; the slug also names the function's directory. */
const FUNCTION_SLUG = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** A file to write, relative to the output directory. */
export type { ExportedFile } from './types.js';

/** A live function cannot be exported as files safely or faithfully: nothing is written. */
export class FunctionExportError extends Error {
  readonly project: string;
  readonly functionName: string;
  constructor(project: string, functionName: string, message: string) {
    super(`project \`${project}\`, function \`${functionName}\`: ${message}`);
    this.name = 'FunctionExportError';
    this.project = project;
    this.functionName = functionName;
  }
}

/**
 * A file name from the service as a path relative to the function root. Absolute paths (also
 * `file://` URLs and drive letters), names that leave the root through `..`, and control
 * characters are refused: the name decides where a file is written.
 */
export function safeFunctionPath(project: string, slug: string, name: string): string {
  const refuse = (why: string) => new FunctionExportError(project, slug, `file name \`${JSON.stringify(name).slice(1, -1)}\` from the service ${why}`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw refuse('contains control characters');
  const slashed = name.replace(/\\/g, '/');
  // A drive letter (`C:`, also drive-relative `C:x`) or a URL (`file:///x`) is a place outside the directory.
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(slashed)) throw refuse('is absolute; refusing to write it');
  const normalized = posix.normalize(slashed);
  if (normalized === '..' || normalized.startsWith('../')) throw refuse('leaves the function directory; refusing to write it');
  const path = normalized.replace(/\/+$/, '');
  if (path === '' || path === '.') throw refuse('names no file');
  return path;
}

/** The file a reported path (entrypoint, import map; possibly a URL or absolute path) names. */
function fileNamed(reported: string, paths: readonly string[]): string | undefined {
  const wanted = normalizeBodyPath(reported);
  if (paths.includes(wanted)) return wanted;
  // The same suffix rule the plan compares entrypoints with: the longest file the path ends with.
  return paths.filter((p) => wanted.endsWith(`/${p}`)).sort((a, b) => b.length - a.length)[0];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

interface FunctionExportInput {
  api: ManagementApi;
  ref: string;
  /** The Project document's metadata.name. */
  project: string;
  /** Directory of this project's functions, relative to the output directory (`functions/<project>`). */
  dir: string;
  live: FunctionResponse;
  log: Logger;
}

interface ExportedFunction {
  document: Record<string, unknown>;
  files: ExportedFile[];
}

/** One body read: the function's files under `<dir>/<slug>/` and its document. */
export async function exportFunction(input: FunctionExportInput): Promise<ExportedFunction> {
  const { api, ref, project, live, log } = input;
  const slug = live.slug;
  if (!FUNCTION_SLUG.test(slug)) throw new FunctionExportError(project, slug, `the slug does not match ${FUNCTION_SLUG.source}; it cannot name a directory`);
  const body = await parseFunctionBody(await api.getAFunctionBody(ref, slug, { headers: { accept: 'multipart/form-data' }, project }), { content: true });
  if (!body) throw new FunctionExportError(project, slug, 'the service answered an opaque bundle, not the source files (multipart/form-data)');

  const files = new Map<string, DeployedFile>();
  for (const file of body.files) {
    const path = safeFunctionPath(project, slug, file.name);
    if (files.has(path)) throw new FunctionExportError(project, slug, `the service sent the file \`${path}\` twice`);
    files.set(path, file);
  }
  const paths = [...files.keys()].sort();
  for (const path of paths) {
    // `a` as a file and `a/b` cannot both exist on disk.
    const parent = paths.find((other) => path.startsWith(`${other}/`));
    if (parent) throw new FunctionExportError(project, slug, `\`${parent}\` is both a file and a directory in the sources`);
    if (path.split('/').some((segment) => segment.startsWith('.'))) {
      log.warn({ project, function: slug, file: path }, 'exported a dot-file the reconciler does not upload: the next plan shows a sources change for this function');
    }
  }

  const metadata = body.metadata ?? {};
  const entrypointReported = text(live.entrypoint_path) ?? text(metadata.entrypoint_path);
  if (entrypointReported === undefined) throw new FunctionExportError(project, slug, 'the service reports no entrypoint');
  const entrypoint = fileNamed(entrypointReported, paths);
  if (entrypoint === undefined) throw new FunctionExportError(project, slug, `the entrypoint \`${entrypointReported}\` is not among the function's files`);
  const importMapReported = text(live.import_map_path) ?? text(metadata.import_map_path);
  const importMap = importMapReported === undefined ? undefined : fileNamed(importMapReported, paths);
  if (importMapReported !== undefined && importMap === undefined) {
    throw new FunctionExportError(project, slug, `the import map \`${importMapReported}\` is not among the function's files`);
  }
  const staticPatterns = Array.isArray(metadata.static_patterns) ? metadata.static_patterns.filter((p): p is string => typeof p === 'string' && p !== '') : [];
  for (const pattern of staticPatterns) {
    try {
      normalizeRelative(slug, 'static_patterns', pattern);
    } catch (error) {
      if (!(error instanceof FunctionSourceError)) throw error;
      throw new FunctionExportError(project, slug, `the static pattern \`${pattern}\` from the service points outside the function directory`);
    }
  }
  const verifyJwt = typeof live.verify_jwt === 'boolean' ? live.verify_jwt : typeof metadata.verify_jwt === 'boolean' ? metadata.verify_jwt : undefined;
  const name = text(live.name) ?? text(metadata.name) ?? slug;

  const source = `${input.dir}/${slug}`;
  const spec: Record<string, unknown> = { project, source, entrypoint };
  if (importMap !== undefined) spec.import_map = importMap;
  if (staticPatterns.length > 0) spec.static_patterns = staticPatterns;
  if (verifyJwt !== undefined) spec.verify_jwt = verifyJwt;
  spec.name = name;
  return {
    document: { apiVersion: API_VERSION, kind: 'Function', metadata: { name: slug }, spec },
    files: paths.map((path) => ({ path: `${source}/${path}`, content: files.get(path)!.content! })),
  };
}
