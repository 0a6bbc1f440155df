// Secret references: `{valueFrom: {env: NAME}}` or `{valueFrom: {file: PATH}}`. Values are read
// only when a plan is made, and no error ever carries a value, only the reference's name.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { SecretRef } from './types.js';

/** Largest secret file read; the API accepts at most 24,576 characters per secret. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

export type SecretReferenceProblem = 'missing' | 'empty' | 'unreadable' | 'too-large';

export class SecretReferenceError extends Error {
  override readonly name = 'SecretReferenceError';
  /** `env:NAME` or `file:PATH` (the path as written in the manifest). */
  readonly reference: string;
  readonly problem: SecretReferenceProblem;
  constructor(reference: string, problem: SecretReferenceProblem, detail: string) {
    super(`secret reference ${reference} ${detail}`);
    this.reference = reference;
    this.problem = problem;
  }
}

export function isSecretRef(value: unknown): value is SecretRef {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'valueFrom') return false;
  const from = (value as { valueFrom: unknown }).valueFrom;
  if (typeof from !== 'object' || from === null || Array.isArray(from)) return false;
  const fromKeys = Object.keys(from);
  if (fromKeys.length !== 1) return false;
  const key = fromKeys[0];
  const target = (from as Record<string, unknown>)[key!];
  return (key === 'env' || key === 'file') && typeof target === 'string' && target.length > 0;
}

/** `env:NAME` or `file:PATH`: how errors, warnings and placeholders name a reference. */
export function referenceName(ref: SecretRef): string {
  return 'env' in ref.valueFrom ? `env:${ref.valueFrom.env}` : `file:${ref.valueFrom.file}`;
}

/** The absolute path a file reference reads: relative paths resolve against the manifest's directory. */
export function referencePath(ref: SecretRef, baseDir: string): string | undefined {
  if (!('file' in ref.valueFrom)) return undefined;
  const path = ref.valueFrom.file;
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** Deterministic, so repeated sandbox passes plan no change for a placeholder. */
export function sandboxPlaceholder(reference: string): string {
  // 64 lowercase hex characters: valid wherever a value of this API goes, root keys included.
  return createHash('sha256').update(`sandbox:${reference}`).digest('hex');
}

export interface ResolveOptions {
  /** Directory of the manifest file that holds the reference. */
  baseDir: string;
  env: NodeJS.ProcessEnv;
  /** In sandbox mode an unresolved reference yields a generated placeholder instead of an error. */
  sandbox?: boolean;
  /** Called with the reference name (never a value) whenever a placeholder is used. */
  onPlaceholder?: (reference: string) => void;
}

async function readSecretFile(reference: string, path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SecretReferenceError(reference, 'missing', 'names a file that does not exist');
    throw new SecretReferenceError(reference, 'unreadable', `names a file that cannot be read (${code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new SecretReferenceError(reference, 'unreadable', 'does not name a regular file');
    if (stat.size > MAX_SECRET_FILE_BYTES) throw new SecretReferenceError(reference, 'too-large', `names a file larger than ${MAX_SECRET_FILE_BYTES} bytes`);
    const text = await handle.readFile({ encoding: 'utf8' });
    // Files written with `echo` end with a newline that is not part of the secret.
    return text.replace(/\r?\n$/, '');
  } catch (error) {
    if (error instanceof SecretReferenceError) throw error;
    throw new SecretReferenceError(reference, 'unreadable', `names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await handle.close();
  }
}

async function resolveStrict(ref: SecretRef, options: ResolveOptions): Promise<string> {
  const reference = referenceName(ref);
  if ('env' in ref.valueFrom) {
    const value = options.env[ref.valueFrom.env];
    if (value === undefined) throw new SecretReferenceError(reference, 'missing', 'names an environment variable that is not set');
    if (value === '') throw new SecretReferenceError(reference, 'empty', 'names an environment variable that is empty');
    return value;
  }
  const value = await readSecretFile(reference, referencePath(ref, options.baseDir)!);
  if (value === '') throw new SecretReferenceError(reference, 'empty', 'names an empty file');
  return value;
}

/** The value behind a reference. Throws SecretReferenceError (naming the reference) unless in sandbox mode. */
export async function resolveSecretRef(ref: SecretRef, options: ResolveOptions): Promise<string> {
  try {
    return await resolveStrict(ref, options);
  } catch (error) {
    if (!(error instanceof SecretReferenceError) || !options.sandbox) throw error;
    options.onPlaceholder?.(error.reference);
    return sandboxPlaceholder(error.reference);
  }
}
