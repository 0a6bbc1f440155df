// The SQL files of a Migrations document: `<version>_<name>.sql` in one directory, in version
// order, each split into statements by Postgres's own parser (libpg-query, Postgres's parser
// compiled to WebAssembly: no database needed). A file that does not parse is a located error
// (file, line, column), so `reconcile validate` and every pass refuse it before any request.
import { createHash } from 'node:crypto';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { readBoundedFile } from './bounded-read.js';
import type { ManifestError } from './types.js';

/** `<version>_<name>.sql`: the version is digits (a timestamp, as the platform's CLI writes them). */
export const MIGRATION_FILE = /^(\d+)_([A-Za-z0-9][A-Za-z0-9_.-]*)\.sql$/;

/** The header line by which a file opts out of the transaction (see docs/migrations.md). */
export const NO_TRANSACTION_HEADER = /^\s*--\s*reconcile:\s*no-transaction\s*$/m;

/**
 * The header line that marks a file disruptive (it locks or rewrites large tables): a rollout
 * holds it to a maintenance window as the `disruptive-migration` change class (docs/rollouts.md).
 */
export const DISRUPTIVE_HEADER = /^\s*--\s*reconcile:\s*disruptive\s*$/m;

/** Largest migration file read. */
const MAX_MIGRATION_BYTES = 4 * 1024 * 1024;

export interface MigrationFile {
  version: string;
  name: string;
  /** Path relative to the manifests root. */
  file: string;
  /** The statements as Postgres's parser splits them, trimmed, without their `;`. */
  statements: string[];
  /** SHA-256 of the statements (`migrationDigest`): what the history is compared with. */
  digest: string;
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
 * Each statement is trimmed and its runs of white space count as one space.
 */
export function migrationDigest(statements: readonly string[]): string {
  const hash = createHash('sha256');
  for (const statement of statements) hash.update(statement.trim().replace(/\s+/g, ' ')).update('\0');
  return hash.digest('hex');
}

type Parser = typeof import('libpg-query');
let parserOnce: Promise<Parser> | undefined;
/** Loaded only when a manifest set has Migrations documents. */
function parser(): Promise<Parser> {
  parserOnce ??= import('libpg-query');
  return parserOnce;
}

/** Line and column (1-based) of a 0-based character offset. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/** Character offset of a byte offset of the text's UTF-8 form. */
function charOffset(text: string, bytes: number): number {
  return Buffer.from(text, 'utf8').subarray(0, bytes).toString('utf8').length;
}

interface ParsedStatement {
  stmt: Record<string, unknown>;
  stmt_location?: number;
  stmt_len?: number;
}

/**
 * The byte offset of a statement's first token. Postgres 17's parser (libpg-query 17) starts a
 * statement where the previous one ended, so the whitespace and comments before it count as
 * part of it; they are not (Postgres 18 starts it at its first token).
 */
function firstToken(bytes: Buffer, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const c = bytes[i];
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c) {
      i++;
    } else if (c === 0x2d && bytes[i + 1] === 0x2d) {
      const newline = bytes.indexOf(0x0a, i);
      i = newline === -1 || newline >= end ? end : newline + 1;
    } else if (c === 0x2f && bytes[i + 1] === 0x2a) {
      // Block comments nest.
      let depth = 1;
      i += 2;
      while (i < end && depth > 0) {
        if (bytes[i] === 0x2f && bytes[i + 1] === 0x2a) {
          depth++;
          i += 2;
        } else if (bytes[i] === 0x2a && bytes[i + 1] === 0x2f) {
          depth--;
          i += 2;
        } else i++;
      }
    } else break;
  }
  return i;
}

/** Splits and checks one file's text; errors are located in `file`. */
export async function parseMigration(text: string, file: string): Promise<{ statements: string[]; errors: ManifestError[] }> {
  const { parse } = await parser();
  const errors: ManifestError[] = [];
  const at = (offset: number, message: string) => errors.push({ file, ...position(text, offset), path: '', message });
  let parsed: { stmts?: ParsedStatement[] };
  try {
    parsed = (await parse(text)) as { stmts?: ParsedStatement[] };
  } catch (error) {
    const details = (error as { sqlDetails?: { message?: string; cursorPosition?: number } }).sqlDetails;
    at(charOffset(text, details?.cursorPosition ?? 0), `SQL syntax error: ${details?.message ?? (error as Error).message}`);
    return { statements: [], errors };
  }
  const bytes = Buffer.from(text, 'utf8');
  const statements: string[] = [];
  for (const item of parsed.stmts ?? []) {
    const located = item.stmt_location ?? 0;
    const end = item.stmt_len ? located + item.stmt_len : bytes.length;
    const start = firstToken(bytes, located, end);
    const statement = bytes.subarray(start, end).toString('utf8').trim().replace(/;\s*$/, '');
    // Transaction control would end the migration's own transaction and with it the guarantee
    // that the statements and the history row are written together.
    if ('TransactionStmt' in item.stmt) {
      at(charOffset(text, start), 'a migration may not control transactions (BEGIN, COMMIT, ROLLBACK, SAVEPOINT): each migration runs in a transaction of its own');
      continue;
    }
    if (statement !== '') statements.push(statement);
  }
  if (statements.length === 0 && errors.length === 0) at(0, 'the migration holds no statement');
  return { statements, errors };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Reads the migrations directory `path` (relative to `dir`, the directory of the document's
 * file) inside the manifests root: every `*.sql` file, in version order. `where` locates the
 * errors that concern the document itself (its `path` field).
 */
export async function readMigrations(root: string, dir: string, path: string, where: Omit<ManifestError, 'message'>): Promise<MigrationSet> {
  const errors: ManifestError[] = [];
  const documentError = (message: string): MigrationSet => ({ files: [], errors: [{ ...where, message }] });
  const directory = resolve(dir, path);
  if (!inside(root, directory)) return documentError(`path \`${path}\` lies outside the manifests directory: migrations are read from the checkout only`);
  let names: string[];
  try {
    if (!statSync(directory).isDirectory()) return documentError(`path \`${path}\` is not a directory`);
    if (!inside(realpathSync(root), realpathSync(directory))) return documentError(`path \`${path}\` links outside the manifests directory`);
    names = readdirSync(directory).filter((name) => name.endsWith('.sql')).sort();
  } catch {
    return documentError(`migrations directory \`${path}\` does not exist`);
  }
  const files: MigrationFile[] = [];
  const versions = new Map<string, string>();
  for (const name of names) {
    const file = relative(root, join(directory, name));
    const match = MIGRATION_FILE.exec(name);
    if (!match) {
      errors.push({ file, line: 1, column: 1, path: '', message: 'a migration file is named `<version>_<name>.sql`: digits, an underscore, then a name' });
      continue;
    }
    const [, version, migrationName] = match as unknown as [string, string, string];
    const first = versions.get(version);
    if (first) {
      errors.push({ file, line: 1, column: 1, path: '', message: `version ${version} is used twice (also by ${first})` });
      continue;
    }
    versions.set(version, name);
    const read = readBoundedFile(join(directory, name), MAX_MIGRATION_BYTES);
    if ('problem' in read) {
      errors.push({ file, line: 1, column: 1, path: '', message: `the file ${read.detail}` });
      continue;
    }
    const text = read.bytes.toString('utf8');
    const parsed = await parseMigration(text, file);
    errors.push(...parsed.errors);
    if (parsed.errors.length > 0) continue;
    files.push({
      version,
      name: migrationName,
      file,
      statements: parsed.statements,
      digest: migrationDigest(parsed.statements),
      noTransaction: NO_TRANSACTION_HEADER.test(text),
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
