// A function's sources as they are uploaded: every regular file under its source directory
// (dot-files and dot-directories excluded), named by its path relative to that directory.
// The service bundles the sources itself, so modules the entrypoint imports must travel
// with it; uploading the directory whole keeps that true without parsing imports.
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { sha256Hex } from './common.js';

/** Default cap on the total size of one function's sources: 20 MiB. */
export const FUNCTION_SOURCE_LIMIT_BYTES = 20 * 1024 * 1024;

export interface FunctionFile {
  /** Path relative to the function root, with `/` separators: the multipart filename. */
  path: string;
  absolute: string;
  size: number;
  /** Lowercase hex SHA-256 of the content. */
  sha256: string;
}

export interface FunctionSources {
  root: string;
  files: FunctionFile[];
  totalBytes: number;
  /** Digest over the sorted (path, content digest) pairs: equal sources give equal digests. */
  digest: string;
}

export interface CollectOptions {
  /** The function's name in messages (its slug). */
  functionName: string;
  /** Directory the manifest's `source` is relative to (the manifest file's directory). */
  baseDir: string;
  source: string;
  entrypoint: string;
  importMap?: string;
  staticPatterns?: readonly string[];
  maxBytes?: number;
}

/** The function's sources cannot be used: missing entrypoint, escaping path, size cap. Terminal for that function. */
export class FunctionSourceError extends Error {
  readonly functionName: string;
  readonly file: string | undefined;
  constructor(functionName: string, message: string, file?: string) {
    super(`Function \`${functionName}\`: ${message}`);
    this.name = 'FunctionSourceError';
    this.functionName = functionName;
    this.file = file;
  }
}

/** The sources are larger than the cap. */
export class FunctionSourceTooLargeError extends FunctionSourceError {
  readonly limitBytes: number;
  constructor(functionName: string, file: string, limitBytes: number) {
    super(functionName, `sources exceed the limit of ${formatBytes(limitBytes)} per function at file \`${file}\``, file);
    this.name = 'FunctionSourceTooLargeError';
    this.limitBytes = limitBytes;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** Digest of a set of files given as (relative path, content digest): the same whether read from disk or from the service. */
export function sourcesDigest(files: ReadonlyArray<{ path: string; sha256: string }>): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    hash.update(`${file.path}\0${file.sha256}\n`);
  }
  return hash.digest('hex');
}

/** A path given in a manifest, relative to the function root, must stay inside it. */
export function normalizeRelative(functionName: string, field: string, path: string): string {
  const normalized = path.replace(/\\/g, '/').replace(/^\.\//, '');
  if (isAbsolute(path) || normalized.split('/').includes('..') || normalized === '') {
    throw new FunctionSourceError(functionName, `\`${field}\` must be a path inside the source directory, got \`${path}\``);
  }
  return normalized;
}

export async function collectFunctionSources(options: CollectOptions): Promise<FunctionSources> {
  const name = options.functionName;
  const limit = options.maxBytes ?? FUNCTION_SOURCE_LIMIT_BYTES;
  const root = resolve(options.baseDir, options.source);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    if (!(await stat(realRoot)).isDirectory()) throw new FunctionSourceError(name, `source \`${options.source}\` is not a directory`);
  } catch (error) {
    if (error instanceof FunctionSourceError) throw error;
    throw new FunctionSourceError(name, `source directory \`${options.source}\` cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }

  const paths = await listFiles(name, realRoot);
  const present = new Set(paths.map((p) => p.path));
  const entrypoint = normalizeRelative(name, 'entrypoint', options.entrypoint);
  if (!present.has(entrypoint)) throw new FunctionSourceError(name, `entrypoint \`${entrypoint}\` not found in \`${options.source}\``, entrypoint);
  if (options.importMap !== undefined) {
    const importMap = normalizeRelative(name, 'import_map', options.importMap);
    if (!present.has(importMap)) throw new FunctionSourceError(name, `import map \`${importMap}\` not found in \`${options.source}\``, importMap);
  }
  for (const pattern of options.staticPatterns ?? []) normalizeRelative(name, 'static_patterns', pattern);

  // Sizes first, from the directory listing: the cap is checked before anything is read.
  let total = 0;
  for (const file of paths) {
    total += file.size;
    if (total > limit) throw new FunctionSourceTooLargeError(name, file.path, limit);
  }
  const files: FunctionFile[] = [];
  for (const file of paths) files.push({ ...file, sha256: await hashFile(name, file.absolute, file.path, limit) });
  return { root: realRoot, files, totalBytes: total, digest: sourcesDigest(files) };
}

async function listFiles(name: string, root: string): Promise<Array<Omit<FunctionFile, 'sha256'>>> {
  const out: Array<Omit<FunctionFile, 'sha256'>> = [];
  const visited = new Set<string>();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    if (visited.has(dir)) return; // a link back to an ancestor
    visited.add(dir);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      let target = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        // A link may point anywhere on the machine: follow it only while it stays inside the root.
        target = await realpath(target).catch(() => '');
        if (!target || (target !== root && !target.startsWith(root + sep))) {
          throw new FunctionSourceError(name, `\`${rel}\` is a symbolic link that leaves the source directory`, rel);
        }
      }
      const info = await lstat(target);
      if (info.isDirectory()) await walk(target, rel);
      else if (info.isFile()) out.push({ path: rel, absolute: target, size: info.size });
    }
  };
  await walk(root, '');
  return out;
}

/** Streams the file through the hash; a file that grows past the cap while read is refused. */
async function hashFile(name: string, absolute: string, rel: string, limit: number): Promise<string> {
  const handle = await open(absolute, 'r');
  try {
    const hash = createHash('sha256');
    let read = 0;
    for await (const chunk of handle.createReadStream({ highWaterMark: 64 * 1024 })) {
      read += (chunk as Buffer).length;
      if (read > limit) throw new FunctionSourceTooLargeError(name, rel, limit);
      hash.update(chunk as Buffer);
    }
    return hash.digest('hex');
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export { sha256Hex };
