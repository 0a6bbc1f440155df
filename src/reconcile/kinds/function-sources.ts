// A function's sources as they are uploaded: every regular file under its source directory
// (dot-files and dot-directories excluded), named by its path relative to that directory.
// The service bundles the sources itself, so modules the entrypoint imports must travel
// with it; uploading the directory whole keeps that true without parsing imports.
import { realpath, stat } from 'node:fs/promises';
import { hash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { sha256Hex } from './common.js';
import { CheckoutFiles, CheckoutReadError, TreeWalkError } from '../../manifests/checkout-files.js';
import { systemClock, type Clock } from '../../util/clock.js';

/** Default cap on the total size of one function's sources: 20 MiB. */
const FUNCTION_SOURCE_LIMIT_BYTES = 20 * 1024 * 1024;

interface FunctionFile {
  /** Path relative to the function root, with `/` separators: the multipart filename. */
  path: string;
  absolute: string;
  size: number;
  /** Lowercase hex SHA-256 of the content. */
  sha256: string;
}

export interface FunctionSources {
  root: string;
  /** The checkout the files are read from (a deploy streams them through it). */
  checkout: CheckoutFiles;
  files: FunctionFile[];
  totalBytes: number;
  /** Digest over the sorted (path, content digest) pairs: equal sources give equal digests. */
  digest: string;
}

interface CollectOptions {
  /** The function's name in messages (its slug). */
  functionName: string;
  /** Directory the manifest's `source` is relative to (the manifest file's directory). */
  baseDir: string;
  source: string;
  entrypoint: string;
  importMap?: string;
  staticPatterns?: readonly string[];
  maxBytes?: number;
  /** Digests reused across calls (default: the process-wide cache). */
  cache?: SourceHashCache;
  /** The checkout's root, which no file may leave (default: the source directory itself). */
  checkoutRoot?: string;
  /** Secret files the documents name, and the reconciler's credential files: a source file that is one of them (a link, hard or symbolic) is refused. */
  sealed?: { secretFiles?: ReadonlyArray<{ path: string; by: string }>; credentialFiles?: readonly string[] };
  /**
   * Source directories resolved and listed already, by path (one plan's: `sourceDirectories()`).
   * The Function documents a plan reads that share a directory resolve and list it once; without
   * it (a deploy's re-read) the directory is resolved and listed again.
   */
  directories?: SourceDirectories;
}

/** A source directory as found: its real path and listing, or why it cannot be used. */
type SourceDirectory = { realRoot: string; listing: Listing } | { unusable: 'not-directory' } | { unusable: 'unreadable'; code: string };

/** Source directories of one plan, by the path the documents name (resolved). */
export type SourceDirectories = Map<string, Promise<SourceDirectory>>;

/** An empty memo of source directories, for one plan. */
export function sourceDirectories(): SourceDirectories {
  return new Map();
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
  // One string, hashed in one call: the same digest as each line fed in turn.
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((file) => `${file.path}\0${file.sha256}\n`);
  return hash('sha256', lines.join(''), 'hex');
}

/** A path given in a manifest, relative to the function root, must stay inside it. */
export function normalizeRelative(functionName: string, field: string, path: string): string {
  const normalized = path.replace(/\\/g, '/').replace(/^\.\//, '');
  if (isAbsolute(path) || normalized.split('/').includes('..') || normalized === '') {
    throw new FunctionSourceError(functionName, `\`${field}\` must be a path inside the source directory, got \`${path}\``);
  }
  return normalized;
}

/** What identifies one version of a file's content without reading it. */
interface FileStamp {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

interface CachedDigest extends FileStamp {
  sha256: string;
  /** Wall clock (ns, as file timestamps) when reading started. */
  readStartedNs: bigint;
}

/** Default age a file's timestamps must have, when it is read, for its digest to be reused. */
const SOURCE_CACHE_SETTLE_MS = 2000;

/**
 * Content digests of source files, so Function documents that share a source directory (and
 * later passes) hash each file once. A digest is reused only while the file's device, inode,
 * size, mtime and ctime are unchanged, and only when its timestamps were already older than
 * `settleMs` when it was read: timestamps are coarse (a write in the same tick as the read
 * leaves them equal), and ctime cannot be set back by a user, so any later write is seen.
 */
export class SourceHashCache {
  readonly maxEntries: number;
  readonly settleMs: number;
  /**
   * For tests and diagnostics: files read and hashed, digests reused, directories walked, and
   * walks shared with a call that asked for the same directory while its walk was under way.
   */
  readonly stats = { hashed: 0, reused: 0, walked: 0, walksShared: 0 };
  readonly #entries = new Map<string, CachedDigest>();
  readonly #pending = new Map<string, { stamp: FileStamp; promise: Promise<string> }>();
  readonly #walks = new Map<string, Promise<Listing>>();

  readonly #clock: Clock;

  constructor(options: { maxEntries?: number; settleMs?: number; clock?: Clock } = {}) {
    const { maxEntries = 10_000, settleMs = SOURCE_CACHE_SETTLE_MS, clock = systemClock } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new TypeError(`Expected \`maxEntries\` to be a positive integer, got \`${String(maxEntries)}\` (${typeof maxEntries})`);
    }
    if (!Number.isSafeInteger(settleMs) || settleMs < 0) {
      throw new TypeError(`Expected \`settleMs\` to be a non-negative integer, got \`${String(settleMs)}\` (${typeof settleMs})`);
    }
    this.maxEntries = maxEntries;
    this.settleMs = settleMs;
    this.#clock = clock;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }

  /**
   * The listing of a source directory. Projects are planned side by side, so the Function
   * documents sharing a directory ask for it at once: they share the walk under way. Nothing
   * is kept once it ends, so a later call (the next pass, the re-read before a deploy) walks
   * the directory again and sees every change.
   */
  listing(root: string, walk: () => Promise<Listing>): Promise<Listing> {
    const running = this.#walks.get(root);
    if (running) {
      this.stats.walksShared++;
      return running;
    }
    this.stats.walked++;
    const started = walk().finally(() => this.#walks.delete(root));
    this.#walks.set(root, started);
    return started;
  }

  /** The file's digest, read only when no trustworthy digest of this exact version is kept. */
  async digest(file: ListedFile, read: () => Promise<string>): Promise<string> {
    const stamp = file.stamp;
    const cached = this.#entries.get(file.absolute);
    if (cached && sameStamp(cached, stamp) && settledBefore(cached, cached.readStartedNs, this.settleMs)) {
      this.stats.reused++;
      // Refresh its place: the least recently used entry is the one dropped.
      this.#entries.delete(file.absolute);
      this.#entries.set(file.absolute, cached);
      return cached.sha256;
    }
    const readStartedNs = BigInt(Math.floor(this.#clock.now())) * 1_000_000n;
    // Documents planned side by side ask for the same file at once: one read serves them, when
    // the version they listed is the one being read and it has not changed for a while.
    const pending = this.#pending.get(file.absolute);
    if (pending && sameStamp(pending.stamp, stamp) && settledBefore(stamp, readStartedNs, this.settleMs)) {
      this.stats.reused++;
      // A failed read names the function that made it: this caller reads for itself instead.
      return pending.promise.catch(() => this.digest(file, read));
    }
    const promise = read();
    this.#pending.set(file.absolute, { stamp, promise });
    try {
      const sha256 = await promise;
      this.stats.hashed++;
      this.#entries.delete(file.absolute);
      this.#entries.set(file.absolute, { ...stamp, sha256, readStartedNs });
      if (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      return sha256;
    } finally {
      if (this.#pending.get(file.absolute)?.promise === promise) this.#pending.delete(file.absolute);
    }
  }
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** Whether the file's timestamps were older than `settleMs` at `timeNs`. */
function settledBefore(stamp: FileStamp, timeNs: bigint, settleMs: number): boolean {
  const newest = stamp.mtimeNs > stamp.ctimeNs ? stamp.mtimeNs : stamp.ctimeNs;
  return newest + BigInt(settleMs) * 1_000_000n < timeNs;
}


/** The process-wide cache collectFunctionSources uses unless given another. */
const sharedSourceCache = new SourceHashCache();

/**
 * Paths found to be real already (no symbolic link on the way): a loaded checkout's root is
 * resolved once at load, so each function of a pass would otherwise resolve it again. A path
 * that resolves elsewhere (a link, which may be swapped) is resolved every time.
 */
const realPaths = new Set<string>();

async function realPathOf(path: string): Promise<string> {
  if (realPaths.has(path)) return path;
  const real = await realpath(path);
  if (real === path) realPaths.add(path);
  return real;
}

/** Resolves a source directory and lists it (the walk shared with any call listing it at the same time). */
async function findSourceDirectory(root: string, cache: SourceHashCache): Promise<SourceDirectory> {
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    if (!(await stat(realRoot)).isDirectory()) return { unusable: 'not-directory' };
  } catch (error) {
    return { unusable: 'unreadable', code: (error as NodeJS.ErrnoException).code ?? 'error' };
  }
  // The walk does not depend on the checkout's root: the directory's own checkout lists it.
  const listing = await cache.listing(realRoot, () => listFiles(CheckoutFiles.resolved(realRoot), realRoot));
  return { realRoot, listing };
}

function sourceDirectoryOf(root: string, cache: SourceHashCache, directories: SourceDirectories | undefined): Promise<SourceDirectory> {
  if (!directories) return findSourceDirectory(root, cache);
  let found = directories.get(root);
  if (!found) directories.set(root, (found = findSourceDirectory(root, cache)));
  return found;
}

export async function collectFunctionSources(options: CollectOptions): Promise<FunctionSources> {
  const name = options.functionName;
  const limit = options.maxBytes ?? FUNCTION_SOURCE_LIMIT_BYTES;
  const cache = options.cache ?? sharedSourceCache;
  const directory = await sourceDirectoryOf(resolve(options.baseDir, options.source), cache, options.directories);
  if ('unusable' in directory) {
    if (directory.unusable === 'not-directory') throw new FunctionSourceError(name, `source \`${options.source}\` is not a directory`);
    throw new FunctionSourceError(name, `source directory \`${options.source}\` cannot be read (${directory.code})`);
  }
  const { realRoot, listing } = directory;

  const checkout = CheckoutFiles.resolved(options.checkoutRoot !== undefined ? await realPathOf(options.checkoutRoot).catch(() => realRoot) : realRoot);
  for (const { path, by } of options.sealed?.secretFiles ?? []) checkout.sealSecretFile(path, by);
  for (const path of options.sealed?.credentialFiles ?? []) checkout.sealCredentialFile(path);
  if ('problem' in listing) throw new FunctionSourceError(name, listing.problem.message, listing.problem.path);
  const paths = listing.files;
  // Checked on every call, a cached listing's too: the same file is sealed by one checkout and not another.
  for (const file of paths) {
    const sealed = checkout.sealedAs(file.stamp);
    if (sealed !== undefined) throw new FunctionSourceError(name, `\`${file.path}\` ${sealed}`, file.path);
  }
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
  for (const file of paths) {
    const sha256 = await cache.digest(file, () => hashFile(checkout, name, file.absolute, file.path, limit, file.size));
    // A digest reused from the cache is a file handed out all the same.
    checkout.record(checkout.relative(file.absolute), sha256);
    files.push({ path: file.path, absolute: file.absolute, size: file.size, sha256 });
  }
  return { root: realRoot, checkout, files, totalBytes: total, digest: sourcesDigest(files) };
}

/** A file found by the walk, with what identifies its current content. */
interface ListedFile extends Omit<FunctionFile, 'sha256'> {
  stamp: FileStamp;
}

/** A source directory's files, or the first entry that makes it unusable (a problem for every function using it). */
type Listing = { files: ListedFile[] } | { problem: { path: string; message: string } };

async function listFiles(checkout: CheckoutFiles, root: string): Promise<Listing> {
  let walked;
  try {
    walked = await checkout.walk(root);
  } catch (error) {
    if (!(error instanceof TreeWalkError)) throw error;
    const message = error.problem === 'outside-link' ? `\`${error.path}\` is a symbolic link that leaves the source directory` : error.message;
    return { problem: { path: error.path, message } };
  }
  const files: ListedFile[] = [];
  for (const { path, absolute, stats } of walked.files) {
    // Every file of the directory is uploaded: a FIFO or device would hang or never end.
    if (!stats.isFile()) return { problem: { path, message: `\`${path}\` is not a regular file` } };
    const stamp = { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs };
    files.push({ path, absolute, size: Number(stats.size), stamp });
  }
  return { files };
}

/**
 * Reads the file through the checkout's walker and hashes it: a file swapped for a FIFO or a
 * device since the walk, one that leaves the checkout, or one that grows past the cap while
 * read is refused.
 */
async function hashFile(checkout: CheckoutFiles, name: string, absolute: string, rel: string, limit: number, expectedSize: number): Promise<string> {
  try {
    return await checkout.hash(absolute, limit, expectedSize);
  } catch (error) {
    if (!(error instanceof CheckoutReadError)) throw error;
    if (error.problem === 'too-large') throw new FunctionSourceTooLargeError(name, rel, limit);
    if (error.problem === 'not-regular') throw new FunctionSourceError(name, `\`${rel}\` is not a regular file`, rel);
    if (error.problem === 'outside-link') throw new FunctionSourceError(name, `\`${rel}\` is a symbolic link that leaves the manifests directory`, rel);
    throw new FunctionSourceError(name, `\`${rel}\` ${error.message.replace(/^`[^`]*` /, '')}`, rel);
  }
}

export { sha256Hex };
