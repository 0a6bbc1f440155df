// The one way the reconciler reads a file of the checkout: manifests, migration files, function
// sources, and whatever a document names as a file (secret files given by `valueFrom.file` and
// credential files aside: refs.ts and src/cli/credential-paths.ts have their own rules). A path
// is taken relative to the checkout's root, which is resolved once; a path or a symbolic link
// that leaves the root is refused before anything is opened, and the refusal names the path
// and the rule, never the content. Every file handed out is recorded with its digest: the
// revision of a checkout is its documents and every file they read (`inputs`; the revision of
// a checkout without git hashes them, src/reconcile/document-files.ts).
// test/architecture/checkout-reads.test.ts checks that no other module of src opens such a file.
import { createHash, hash } from 'node:crypto';
import { constants, openAsBlob, readdirSync, realpathSync, statSync } from 'node:fs';
import { open, readdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readBoundedFile, type BoundedRead } from './bounded-read.js';
import { TreeWalkError, walkTree, type ListedFile, type WalkOptions, type WalkResult } from './walk-tree.js';

export { TreeWalkError } from './walk-tree.js';

/** Why a path of the checkout is not read: it leaves the checkout, or it is not there. */
export type CheckoutRefusal = { problem: 'outside' | 'outside-link' | 'secret-file' | 'missing' | 'unreadable' | 'not-directory'; detail: string };

/** A `.` or `..` segment, or an empty one: a path with none of them is normalized. */
const UNNORMALIZED = sep === '/' ? /\/\/|\/\.\.?(?:\/|$)/ : /[\\/][\\/]|[\\/]\.\.?(?:[\\/]|$)|\//;

/**
 * `target` relative to `root` (`sep`-separated, `''` for the root itself) when `target` is a
 * normalized absolute path at or under `root` (a normalized absolute path itself), else
 * `undefined`. The cheap answer for the paths the walker and `realpath` give; any other path is
 * left to `path.relative`. Every file read asks this two or three times.
 */
export function below(root: string, target: string): string | undefined {
  // Only for an absolute root: an empty one is a prefix of every path.
  if (!isAbsolute(root) || !isAbsolute(target) || !target.startsWith(root)) return undefined;
  if (target.length === root.length) return '';
  const rootEndsInSep = root.endsWith(sep);
  if (!rootEndsInSep && target[root.length] !== sep) return undefined;
  return UNNORMALIZED.test(target) || target.endsWith(sep) ? undefined : target.slice(rootEndsInSep ? root.length : root.length + 1);
}

export function insideOf(root: string, target: string): boolean {
  if (below(root, target) !== undefined) return true;
  const rel = relative(root, target);
  // `..` leaves the root; a name that only starts with two dots (`...`, `..a`) is a file in it.
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function toSlash(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

/** A file of a listed directory: its path relative to the checkout and where it really is. */
interface ListedEntry {
  /** The entry's name in the directory. */
  name: string;
  /** Path relative to the checkout's root, `/`-separated. */
  path: string;
  absolute: string;
}

/** The checkout's files as the reconciler reads them, rooted at one resolved directory. */
export class CheckoutFiles {
  /** The checkout's root, symbolic links resolved. */
  readonly root: string;
  readonly #inputs = new Map<string, string>();
  /**
   * Secret files (`valueFrom.file`) and credential files, by file identity (device and inode:
   * a symbolic or a hard link to one is the same file), with why each is refused: never read
   * as a checkout file.
   */
  readonly #secretFiles = new Map<string, string>();
  /** Identities of the files read so far, with their paths relative to the root. */
  readonly #readReal = new Map<string, string>();

  private constructor(root: string) {
    this.root = root;
  }

  /** The checkout at `path` (resolved once: a swapped link later changes nothing here). */
  static async at(path: string): Promise<CheckoutFiles> {
    return new CheckoutFiles(await realpath(path));
  }

  /** The checkout whose root is already resolved (a loaded set's `root`). */
  static resolved(root: string): CheckoutFiles {
    return new CheckoutFiles(root);
  }

  /** A path relative to the root (`/`-separated), for messages and the record. */
  relative(absolute: string): string {
    return toSlash(below(this.root, absolute) ?? relative(this.root, absolute)) || '.';
  }

  /**
   * Where `path`, written in a document whose file is in `baseDir`, lies in the checkout: its
   * lexical place (a path with `..` that leaves the root is refused) and its real place (a
   * symbolic link on the way that leaves the root is refused).
   */
  locate(baseDir: string, path: string): { absolute: string; real: string } | CheckoutRefusal {
    const absolute = resolve(baseDir, path);
    if (!insideOf(this.root, absolute)) return { problem: 'outside', detail: `\`${path}\` lies outside the manifests directory: files are read from the checkout only` };
    let real: string;
    try {
      real = realpathSync.native(absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: 'missing', detail: `\`${path}\` does not exist` };
      return { problem: 'unreadable', detail: `\`${path}\` cannot be read (${code ?? 'error'})` };
    }
    if (!insideOf(this.root, real)) return { problem: 'outside-link', detail: `\`${path}\` links outside the manifests directory: files are read from the checkout only` };
    return { absolute, real };
  }

  /** A directory a document names, or why it is not read. */
  directory(baseDir: string, path: string): { absolute: string; real: string } | CheckoutRefusal {
    const found = this.locate(baseDir, path);
    if ('problem' in found) return found;
    try {
      if (!statSync(found.real).isDirectory()) return { problem: 'not-directory', detail: `\`${path}\` is not a directory` };
    } catch (error) {
      return { problem: 'unreadable', detail: `\`${path}\` cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    return found;
  }

  /**
   * The entries of one directory of the checkout (not its subdirectories), sorted by name,
   * dot-entries included. An entry that is a symbolic link leaving the checkout makes the
   * listing a TreeWalkError naming it: the directory would be read incompletely otherwise.
   */
  async entries(directory: string): Promise<ListedEntry[]> {
    const rel = this.relative(directory);
    let dirents;
    try {
      dirents = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      throw new TreeWalkError(rel, 'unreadable', `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const listed: ListedEntry[] = [];
    for (const dirent of dirents) {
      const absolute = join(directory, dirent.name);
      const path = this.relative(absolute);
      if (dirent.isSymbolicLink()) {
        const real = await realpath(absolute).catch(() => undefined);
        if (real === undefined) throw new TreeWalkError(path, 'dangling-link', 'is a symbolic link whose target does not exist');
        if (!insideOf(this.root, real)) throw new TreeWalkError(path, 'outside-link', 'is a symbolic link that leaves the manifests directory: files are read from the checkout only');
      }
      listed.push({ name: dirent.name, path, absolute });
    }
    return listed;
  }

  /** Every entry below `directory` (the walker of walk-tree.ts): links that leave `directory` are refused. */
  walk(directory: string, options: WalkOptions & { statFiles: false }): Promise<WalkResult<ListedFile>>;
  walk(directory: string, options?: WalkOptions): Promise<WalkResult>;
  walk(directory: string, options: WalkOptions = {}): Promise<WalkResult<ListedFile> | WalkResult> {
    return walkTree(directory, options);
  }

  /**
   * From now on, the file at `path` (a secret file a document names with `valueFrom.file`,
   * named by `by`) is refused as a checkout file: a migration file linked to it would
   * otherwise be parsed, and a syntax error quote the secret.
   */
  sealSecretFile(path: string, by: string): void {
    this.#seal(path, `is the secret file ${by} names (valueFrom.file): a secret is read only as a secret reference`);
  }

  /**
   * The same for every file a secret file path of a template may name (`secrets/${tenant}`,
   * absolute): a segment with a variable matches every entry of its directory that fits it,
   * but for the paths `except` names (the checkout's manifest files: a link among them to a
   * secret file is refused through the secret file's own path).
   */
  sealSecretTemplate(pattern: string, by: string, except: ReadonlySet<string>): void {
    for (const path of templateMatches(pattern)) if (!except.has(path)) this.sealSecretFile(path, by);
  }

  /** The same for one of the reconciler's own credential files (its token file, ...). */
  sealCredentialFile(path: string): void {
    this.#seal(path, "is one of the reconciler's own credential files: never read as a checkout file");
  }

  #seal(path: string, detail: string): void {
    try {
      this.#secretFiles.set(fileIdentity(statSync(path, { bigint: true })), detail);
    } catch {
      // Not there: nothing can link to it.
    }
  }

  /**
   * Files read before a seal named them (a manifest or values file linked to a secret file that
   * a document read later names): what was made of them must be dropped unseen.
   */
  readBeforeSealed(): Array<{ file: string; detail: string }> {
    const found: Array<{ file: string; detail: string }> = [];
    for (const [identity, file] of this.#readReal) {
      const detail = this.#secretFiles.get(identity);
      if (detail !== undefined) found.push({ file, detail });
    }
    return found;
  }

  /** Why the file of this identity (device and inode, from a stat) is never read as a checkout file, if it is sealed. */
  sealedAs(info: { dev: bigint; ino: bigint }): string | undefined {
    return this.#secretFiles.get(fileIdentity(info));
  }

  #secretRefusal(identity: string): CheckoutRefusal | undefined {
    const detail = this.#secretFiles.get(identity);
    return detail === undefined ? undefined : { problem: 'secret-file', detail };
  }

  /**
   * The content of a file of the checkout (at most `maxBytes`), recorded with its digest; or
   * why not. A file whose real place is outside the checkout, or a secret file, is refused
   * without being opened.
   */
  read(absolute: string, maxBytes: number): BoundedRead | CheckoutRefusal {
    const rel = this.relative(absolute);
    let real: string;
    try {
      real = realpathSync.native(absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: 'missing', detail: 'does not exist' };
      return { problem: 'unreadable', detail: `cannot be read (${code ?? 'error'})` };
    }
    if (!insideOf(this.root, real) || !insideOf(this.root, absolute)) {
      return { problem: 'outside-link', detail: 'is a symbolic link that leaves the manifests directory: files are read from the checkout only' };
    }
    // The seal is checked on the opened file, before a byte of it is read: a link renamed over
    // the path after a check of the path would otherwise be read.
    let identity = '';
    const read = readBoundedFile(real, maxBytes, {
      // The real path has no link left: one swapped in since is not followed.
      noFollow: true,
      refuse: (file) => {
        identity = fileIdentity(file);
        return this.#secretRefusal(identity);
      },
    });
    if (!('problem' in read)) {
      this.record(rel, hash('sha256', read.bytes, 'hex'));
      this.#readReal.set(identity, rel);
    }
    return read;
  }

  /**
   * The SHA-256 of a file of the checkout, read in chunks (a function's source file), checked
   * on the opened descriptor to be a regular file of at most `maxBytes`; recorded. Throws
   * CheckoutReadError, naming the path, never the content.
   */
  async hash(absolute: string, maxBytes: number, expectedSize = 0): Promise<string> {
    const rel = this.relative(absolute);
    const real = await realpath(absolute).catch((error: NodeJS.ErrnoException) => {
      throw new CheckoutReadError(rel, 'unreadable', `cannot be read (${error.code ?? 'error'})`);
    });
    if (!insideOf(this.root, real)) throw new CheckoutReadError(rel, 'outside-link', 'is a symbolic link that leaves the manifests directory');
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
      throw new CheckoutReadError(rel, 'unreadable', `cannot be read (${error.code ?? 'error'})`);
    });
    try {
      const info = await handle.stat({ bigint: true });
      const secret = this.#secretRefusal(fileIdentity(info));
      if (secret) throw new CheckoutReadError(rel, 'unreadable', secret.detail);
      if (!info.isFile()) throw new CheckoutReadError(rel, 'not-regular', 'is not a regular file');
      const running = createHash('sha256');
      const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(expectedSize + 1, HASH_CHUNK_BYTES)));
      let total = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > maxBytes) throw new CheckoutReadError(rel, 'too-large', `is larger than the limit of ${maxBytes} bytes`);
        running.update(buffer.subarray(0, bytesRead));
      }
      const digest = running.digest('hex');
      this.record(rel, digest);
      return digest;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /** A file of the checkout as a file-backed blob (a deploy's upload streams it from disk). */
  async blob(absolute: string): Promise<Blob> {
    const rel = this.relative(absolute);
    const real = await realpath(absolute);
    if (!insideOf(this.root, real)) throw new CheckoutReadError(rel, 'outside-link', 'is a symbolic link that leaves the manifests directory');
    return openAsBlob(real);
  }

  /** Records a file handed out (its path relative to the root, and its content's SHA-256). */
  record(path: string, sha256: string): void {
    this.#inputs.set(path, sha256);
  }

  /** Every file handed out so far, by path relative to the root, with its digest, sorted by path. */
  inputs(): Map<string, string> {
    return new Map([...this.#inputs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** The paths an absolute path with `${...}` in some of its segments may name: each variable matches any part of an entry's name. */
function templateMatches(pattern: string): string[] {
  const segments = pattern.split(sep);
  let found = [segments[0] === '' ? sep : segments[0]!];
  for (const segment of segments.slice(1)) {
    if (!segment.includes('${')) {
      found = found.map((base) => join(base, segment));
      continue;
    }
    const literal = segment.split(/\$\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const fits = new RegExp(`^${literal.join('.*')}$`);
    found = found.flatMap((base) => {
      try {
        return readdirSync(base).filter((name) => fits.test(name)).map((name) => join(base, name));
      } catch {
        return [];
      }
    });
  }
  return found;
}

/** What a file is, whatever its path: a symbolic or a hard link to it is the same file. */
function fileIdentity(info: { dev: bigint; ino: bigint }): string {
  return `${info.dev}:${info.ino}`;
}

/** Largest read while hashing a file in chunks. */
const HASH_CHUNK_BYTES = 64 * 1024;

/** A file of the checkout that cannot be read; the message names its path and the reason, never its content. */
export class CheckoutReadError extends Error {
  override readonly name = 'CheckoutReadError';
  constructor(readonly path: string, readonly problem: 'unreadable' | 'outside-link' | 'not-regular' | 'too-large', detail: string) {
    super(`\`${path}\` ${detail}`);
  }
}
