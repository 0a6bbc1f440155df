// The SQL files of a Migrations document: `<version>_<name>.sql` in one directory, in version
// order. Each file is checked by Postgres's own parser (libpg-query, Postgres's parser compiled
// to WebAssembly: no database needed), which also gives the statements that run; the statements
// recorded in the history, and compared with it, are the ones the platform CLI records
// (`cliSplit`). A file that does not parse is a located error (file, line, column), so
// `reconcile validate` and every pass refuse it before any request.
import { createHash } from 'node:crypto';
import { lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TreeWalkError, type CheckoutFiles } from './checkout-files.js';
import { cliSplit } from './sql-split.js';
import { lexSql, normalizeSql, withoutSurroundingComments } from './sql-lexer.js';
import type { ManifestError } from './types.js';
import { postgresParser } from './pg-parser.js';

/**
 * `<version>_<name>.sql`: the version is digits (a timestamp, as the platform's CLI writes them),
 * the name anything on one line: the platform CLI's rule (`^([0-9]+)_(.*)\.sql$`).
 */
export const MIGRATION_FILE = /^([0-9]+)_([^\n]*)\.sql$/;

/** The header line by which a file opts out of the transaction (see docs/migrations.md). */
export const NO_TRANSACTION_HEADER = /^\s*--\s*reconcile:\s*no-transaction\s*$/m;

/**
 * The header line that marks a file disruptive (it locks or rewrites large tables): a rollout
 * holds it to a maintenance window as the `disruptive-migration` change class (docs/rollouts.md).
 */
export const DISRUPTIVE_HEADER = /^\s*--\s*reconcile:\s*disruptive\s*$/m;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Control characters, line separators and bidirectional controls: none is shown as it is in a plan (printable.ts). */
// eslint-disable-next-line no-control-regex
const NAME_CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** Largest migration file read. */
const MAX_MIGRATION_BYTES = 4 * 1024 * 1024;

export interface MigrationFile {
  version: string;
  name: string;
  /** Path relative to the manifests root. */
  file: string;
  /** The statements as the platform CLI splits and records them (comments kept, `;` cut): what the history holds. */
  statements: string[];
  /** The statements that run, as Postgres's parser splits them, without the comments around them and without a wrapping BEGIN/COMMIT. */
  run: string[];
  /** `migrationDigest(statements)`: what the history is compared with. */
  digest: string;
  /** The digest of the rule before the CLI's (`legacyMigrationDigest`), for histories written by then. */
  legacyDigest: string;
  /** The file's statements are wrapped in a leading BEGIN and a final COMMIT, which the migration's own transaction replaces. */
  wrapped: boolean;
  /** The file opts out of the transaction (`-- reconcile: no-transaction`). */
  noTransaction: boolean;
  /** The file is marked disruptive (`-- reconcile: disruptive`): held to maintenance windows. */
  disruptive: boolean;
}

export interface MigrationSet {
  files: MigrationFile[];
  errors: ManifestError[];
}

/**
 * The digest of a migration's statements, as the history table stores them (`statements
 * text[]`): a file and its recorded row are the same migration when their digests are equal.
 * Comments and white space are left out (`normalizeSql`: quoted text is kept as it is), empty
 * statements are dropped, and the rest are joined with `;`, so where the statements were split
 * does not count either: the CLI's statements, Postgres's and those of an older CLI give one digest.
 */
export function migrationDigest(statements: readonly string[]): string {
  const canonical = statements.map(normalizeSql).filter((statement) => statement !== '').join(';');
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The digest of the rule before the CLI's: Postgres's statements, each trimmed and its runs of
 * white space counted as one space. Histories the reconciler wrote by then are still read with it.
 */
export function legacyMigrationDigest(statements: readonly string[]): string {
  const hash = createHash('sha256');
  for (const statement of statements) hash.update(statement.trim().replace(/\s+/g, ' ')).update('\0');
  return hash.digest('hex');
}

/** A recorded migration and a file are the same migration: by the digest, or by the digest of the rule before it. */
export function sameMigration(recorded: readonly string[], file: Pick<MigrationFile, 'digest' | 'legacyDigest'>): boolean {
  return migrationDigest(recorded) === file.digest || legacyMigrationDigest(recorded) === file.legacyDigest;
}


/** Line and column (1-based) of a 0-based character offset. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/** Character offsets of byte offsets of the text's UTF-8 form (one pass, whatever their number). */
function charOffsets(text: string): (bytes: number) => number {
  if (Buffer.byteLength(text, 'utf8') === text.length) return (bytes) => bytes;
  const map: number[] = [];
  for (let at = 0; at < text.length; ) {
    const code = text.codePointAt(at)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    for (let b = 0; b < width; b++) map.push(at);
    at += code > 0xffff ? 2 : 1;
  }
  map.push(text.length);
  return (bytes) => map[Math.min(bytes, map.length - 1)]!;
}

interface ParsedStatement {
  stmt: Record<string, unknown>;
  stmt_location?: number;
  stmt_len?: number;
}

interface TransactionStmt {
  kind?: string;
  options?: unknown[];
  chain?: boolean;
}

/** What a file holds, read the CLI's way and Postgres's way. */
export interface ParsedMigration {
  /** As the platform CLI records them. */
  statements: string[];
  /** As they run (see `MigrationFile.run`). */
  run: string[];
  /** Postgres's statements, trimmed: the statements of the rule before the CLI's. */
  legacy: string[];
  wrapped: boolean;
  errors: ManifestError[];
}

const TRANSACTION_RULE =
  'a migration controls no transaction but one way: a leading BEGIN and a final COMMIT around the whole file, which the migration\'s own transaction replaces';

/** Splits and checks one file's text; errors are located in `file`. */
export async function parseMigration(text: string, file: string, options: { noTransaction?: boolean; quote?: boolean } = {}): Promise<ParsedMigration> {
  const errors: ManifestError[] = [];
  const at = (offset: number, message: string) => errors.push({ file, ...position(text, offset), path: '', message });
  const cli = cliSplit(text);
  const statements = cli.map((statement) => statement.text);
  const result = (run: string[], legacy: string[], wrapped = false): ParsedMigration => ({ statements, run, legacy, wrapped, errors });
  // Only comments and white space: a migration with no statement (the CLI records the comments).
  if (lexSql(text).every((piece) => piece.kind === 'space' || piece.kind === 'comment')) return result([], []);
  const { parse } = await postgresParser();
  let parsed: { stmts?: ParsedStatement[] };
  const charAt = charOffsets(text);
  try {
    parsed = (await parse(text)) as { stmts?: ParsedStatement[] };
  } catch (error) {
    const details = (error as { sqlDetails?: { message?: string; cursorPosition?: number } }).sqlDetails;
    // The error is located by line and column. A file reached through a link (or a second
    // hard link) may hold something else than SQL, a credential the checkout keeps beside it:
    // the text Postgres quotes from it is left out, so such a file is never echoed: the quoted
    // token, and what follows a colon (a name it gives unquoted, such as a too-dotted name).
    const message = details?.message ?? (error as Error).message;
    const said = options.quote === false ? message.replace(/ at or near "[\s\S]*"$/, '').replace(/"[\s\S]*"/g, '"…"').replace(/: [\s\S]*$/, '') : message;
    at(charAt(details?.cursorPosition ?? 0), `SQL syntax error: ${said}`);
    return result([], []);
  }
  const items = (parsed.stmts ?? []).map((item) => {
    const start = charAt(item.stmt_location ?? 0);
    const end = item.stmt_len ? charAt((item.stmt_location ?? 0) + item.stmt_len) : text.length;
    const raw = text.slice(start, end);
    const first = lexSql(raw).find((piece) => piece.kind === 'quoted' || piece.kind === 'code');
    return {
      transaction: (item.stmt as { TransactionStmt?: TransactionStmt }).TransactionStmt,
      at: start + (first?.start ?? 0),
      // From the first token: Postgres 17's parser counts the comments before a statement as part
      // of it, the rule before the CLI's (Postgres 18's) did not.
      legacy: raw.slice(first?.start ?? 0).trim().replace(/;\s*$/, ''),
      run: withoutSurroundingComments(raw).replace(/;+$/, ''),
    };
  });
  const isBegin = (t?: TransactionStmt) => (t?.kind === 'TRANS_STMT_BEGIN' || t?.kind === 'TRANS_STMT_START') && !t.options?.length;
  const isCommit = (t?: TransactionStmt) => t?.kind === 'TRANS_STMT_COMMIT' && !t.chain;
  const wrapped = items.length >= 2 && isBegin(items[0]!.transaction) && isCommit(items[items.length - 1]!.transaction) && !options.noTransaction;
  const body = wrapped ? items.slice(1, -1) : items;
  for (const item of body) {
    if (!item.transaction) continue;
    const kind = (item.transaction.kind ?? '').replace('TRANS_STMT_', '');
    if (options.noTransaction && (kind === 'BEGIN' || kind === 'START' || kind === 'COMMIT')) {
      at(item.at, `a file marked \`-- reconcile: no-transaction\` runs without a transaction: remove its ${kind === 'COMMIT' ? 'COMMIT' : 'BEGIN'}`);
    } else if ((kind === 'BEGIN' || kind === 'START') && item.transaction.options?.length) {
      at(item.at, `${TRANSACTION_RULE}; a BEGIN with options (isolation level, read only) is not one: remove the options`);
    } else if (kind === 'BEGIN' || kind === 'START' || kind === 'COMMIT') {
      at(item.at, `${TRANSACTION_RULE}; this ${kind === 'COMMIT' ? 'COMMIT' : 'BEGIN'} is not around the whole file: put BEGIN first and COMMIT last, or remove both (the migration runs in a transaction of its own)`);
    } else {
      at(item.at, `${TRANSACTION_RULE}; this ${kind.replace(/_/g, ' ')} is not one of them: remove it, or split the file into migrations of their own`);
    }
  }
  errors.push(...cliSplitErrors(text, file, cli, items.map((item) => item.at)));
  return result(body.map((item) => item.run).filter((statement) => statement !== ''), items.map((item) => item.legacy).filter((s) => s !== ''), wrapped);
}

/**
 * The CLI runs each of its statements on its own: where it splits a file elsewhere than Postgres
 * does (inside an E'...\'...' string, or not at all between statements in parentheses), it would
 * fail to apply it. Such a file is refused, as the CLI would refuse it, at the first place.
 */
function cliSplitErrors(text: string, file: string, cli: ReturnType<typeof cliSplit>, starts: number[]): ManifestError[] {
  for (const piece of cli) {
    if (normalizeSql(piece.text) === '') continue;
    const inside = starts.filter((start) => start >= piece.start && start < piece.end).length;
    if (inside === 1) continue;
    const offset = piece.start + (text.slice(piece.start, piece.end).search(/\S/) >>> 0);
    return [{
      file, ...position(text, Math.min(offset, text.length)), path: '',
      message: inside === 0
        ? 'the platform CLI ends a statement here where Postgres does not (a `;` after a backslash-escaped quote \\\' in a string): the CLI would fail to apply the file; write a quote inside a string as \'\''
        : `the platform CLI takes ${inside} statements here for one (it splits only at a \`;\` outside parentheses, quotes, comments and BEGIN ATOMIC ... END): the CLI would fail to apply the file; end each statement with a \`;\` outside parentheses`,
    }];
  }
  return [];
}

/** A symbolic link, or a file with a second hard link: what it holds may not be SQL the checkout wrote. */
function isLinked(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink() || statSync(path).nlink > 1;
  } catch {
    return true;
  }
}

/**
 * Reads the migrations directory `path` (relative to `dir`, the directory of the document's
 * file) through the checkout's walker: every `*.sql` file, in version order. A directory or
 * a file that leaves the checkout (a `..` path, a symbolic link) is refused without being
 * read, so no error can quote what it holds. `where` locates the errors that concern the
 * document itself (its `path` field).
 */
export async function readMigrations(checkout: CheckoutFiles, dir: string, path: string, where: Omit<ManifestError, 'message'>): Promise<MigrationSet> {
  const errors: ManifestError[] = [];
  const documentError = (message: string): MigrationSet => ({ files: [], errors: [{ ...where, message }] });
  const found = checkout.directory(dir, path);
  if ('problem' in found) {
    if (found.problem === 'missing') return documentError(`migrations directory \`${path}\` does not exist`);
    const detail = found.detail.replace(/: files are read from the checkout only$/, '');
    return documentError(`path ${detail}${found.problem.startsWith('outside') ? ': migrations are read from the checkout only' : ''}`);
  }
  const directory = found.absolute;
  let names: string[];
  try {
    names = (await checkout.entries(directory)).filter((entry) => entry.name.endsWith('.sql')).map((entry) => entry.name);
  } catch (error) {
    if (!(error instanceof TreeWalkError)) throw error;
    return { files: [], errors: [{ file: error.path, line: 1, column: 1, path: '', message: error.message }] };
  }
  const files: MigrationFile[] = [];
  const versions = new Map<string, string>();
  for (const name of names) {
    const file = checkout.relative(join(directory, name));
    const match = MIGRATION_FILE.exec(name);
    if (!match) {
      errors.push({ file, line: 1, column: 1, path: '', message: 'a migration file is named `<version>_<name>.sql` (digits, an underscore, then any name: the platform CLI\'s rule): rename it, or move it out of the migrations directory' });
      continue;
    }
    const [, version, migrationName] = match as unknown as [string, string, string];
    // The CLI takes any name; one with a control character would reach terminals through the
    // plan, and a bidirectional one (U+202E) would show it in another order than it is read.
    if (NAME_CONTROL.test(migrationName)) {
      errors.push({ file: file.replace(new RegExp(NAME_CONTROL.source, 'g'), '?'), line: 1, column: 1, path: '', message: 'a migration file name holds a control character: rename it' });
      continue;
    }
    const first = versions.get(version);
    if (first) {
      errors.push({ file, line: 1, column: 1, path: '', message: `version ${version} is used twice (also by ${first}): give one of them a version of its own` });
      continue;
    }
    versions.set(version, name);
    const read = checkout.read(join(directory, name), MAX_MIGRATION_BYTES);
    if ('problem' in read) {
      errors.push({ file, line: 1, column: 1, path: '', message: `the file ${read.detail}` });
      continue;
    }
    // Postgres refuses bytes that are not UTF-8, and its parser stops at a NUL byte: such a file
    // is refused whole, never parsed (nor applied) as something other than what it holds.
    if (read.bytes.includes(0)) {
      errors.push({ file, line: 1, column: 1, path: '', message: 'the file is a binary file (it contains NUL bytes), not SQL' });
      continue;
    }
    let text: string;
    try {
      text = UTF8.decode(read.bytes);
    } catch {
      errors.push({ file, line: 1, column: 1, path: '', message: 'the file is not valid UTF-8 text' });
      continue;
    }
    const noTransaction = NO_TRANSACTION_HEADER.test(text);
    const parsed = await parseMigration(text, file, { noTransaction, quote: !isLinked(join(directory, name)) });
    errors.push(...parsed.errors);
    if (parsed.errors.length > 0) continue;
    files.push({
      version,
      name: migrationName,
      file,
      statements: parsed.statements,
      run: parsed.run,
      digest: migrationDigest(parsed.statements),
      legacyDigest: legacyMigrationDigest(parsed.legacy),
      wrapped: parsed.wrapped,
      noTransaction,
      disruptive: DISRUPTIVE_HEADER.test(text),
    });
  }
  files.sort((a, b) => compareVersions(a.version, b.version));
  return { files, errors };
}

/** Versions compare as numbers (of any length), then as text. */
export function compareVersions(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}

const loaded = new WeakMap<object, MigrationSet>();

/** The files a Migrations document's revision read when it was loaded: the pass applies those. */
export function registerLoadedMigrations(document: object, set: MigrationSet): void {
  loaded.set(document, set);
}

/** The files read for this document at load, if it was loaded (see registerLoadedMigrations). */
export function loadedMigrations(document: object): MigrationSet | undefined {
  return loaded.get(document);
}
