// Secret references: `{valueFrom: {env: NAME}}` or `{valueFrom: {file: PATH}}`. Values are read
// only when a plan is made, and no error ever carries a value, only the reference's name.
// validate and apply read a reference through the same function, so they give the same answer.
import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { readBoundedFile } from './bounded-read.js';
import { BASE_POLICY, refusal, type ReferencePolicy } from './reference-policy.js';
import type { SecretRef } from './types.js';

/** Largest secret file read; the API accepts at most 24,576 characters per secret. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** `refused`: the reference names the tool's own credentials or a place it never reads (reference-policy.ts). */
type SecretReferenceProblem = 'missing' | 'empty' | 'unreadable' | 'too-large' | 'refused';

export class SecretReferenceError extends Error {
  override readonly name = 'SecretReferenceError';
  /** `env:NAME` or `file:PATH` (the path as written in the manifest). */
  readonly reference: string;
  readonly problem: SecretReferenceProblem;
  /** What to do about it. */
  readonly hint: string;
  constructor(reference: string, problem: SecretReferenceProblem, detail: string, hint = '') {
    super(`secret reference ${reference} ${detail}`);
    this.reference = reference;
    this.problem = problem;
    this.hint = hint;
  }
}

/** The one own enumerable key of an object, or undefined when it has none or more (no array of its keys is made). */
function soleKey(value: object): string | undefined {
  let sole: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (sole !== undefined) return undefined;
    sole = key;
  }
  return sole;
}

export function isSecretRef(value: unknown): value is SecretRef {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  if (soleKey(value) !== 'valueFrom') return false;
  const from = (value as { valueFrom: unknown }).valueFrom;
  if (typeof from !== 'object' || from === null || Array.isArray(from)) return false;
  const key = soleKey(from);
  if (key === undefined) return false;
  const target = (from as Record<string, unknown>)[key];
  return (key === 'env' || key === 'file') && typeof target === 'string' && target.length > 0;
}

/** `env:NAME` or `file:PATH`: how errors, warnings and placeholders name a reference. */
export function referenceName(ref: SecretRef): string {
  return 'env' in ref.valueFrom ? `env:${ref.valueFrom.env}` : `file:${ref.valueFrom.file}`;
}

/** The absolute path a file reference reads: relative paths resolve against the manifest's directory. */
function referencePath(ref: SecretRef, baseDir: string): string | undefined {
  if (!('file' in ref.valueFrom)) return undefined;
  const path = ref.valueFrom.file;
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** Deterministic, so repeated sandbox passes plan no change for a placeholder. */
export function sandboxPlaceholder(reference: string): string {
  // 64 lowercase hex characters: valid wherever a value of this API goes, root keys included.
  return createHash('sha256').update(`sandbox:${reference}`).digest('hex');
}

interface ResolveOptions {
  /** Directory of the manifest file that holds the reference. */
  baseDir: string;
  env: NodeJS.ProcessEnv;
  /** What the reference may name (default: the fixed refusals only). */
  policy?: ReferencePolicy;
  /** In sandbox mode an unresolved reference yields a generated placeholder instead of an error (a refused one never does). */
  sandbox?: boolean;
  /** Called with the reference name (never a value) whenever a placeholder is used. */
  onPlaceholder?: (reference: string) => void;
}

const FILE_HINT = 'paths are relative to the manifest file';

/**
 * The value behind a reference, or throws SecretReferenceError naming it. The one reading of a
 * reference: `reconcile validate` checks with it and a pass resolves with it.
 */
export function readSecretRef(ref: SecretRef, baseDir: string, env: NodeJS.ProcessEnv, policy: ReferencePolicy = BASE_POLICY): string {
  const reference = referenceName(ref);
  const refused = refusal(ref, baseDir, policy);
  if (refused) throw new SecretReferenceError(reference, 'refused', refused.message, refused.hint);
  if ('env' in ref.valueFrom) {
    const name = ref.valueFrom.env;
    const hint = `set ${name} in the reconciler's environment`;
    const value = env[name];
    if (value === undefined) throw new SecretReferenceError(reference, 'missing', 'names an environment variable that is not set', hint);
    if (value === '') throw new SecretReferenceError(reference, 'empty', 'names an environment variable that is empty', hint);
    return value;
  }
  const read = readBoundedFile(referencePath(ref, baseDir)!, MAX_SECRET_FILE_BYTES);
  if ('problem' in read) {
    if (read.problem === 'missing') throw new SecretReferenceError(reference, 'missing', 'names a file that does not exist', FILE_HINT);
    if (read.problem === 'too-large') throw new SecretReferenceError(reference, 'too-large', `names a file larger than ${MAX_SECRET_FILE_BYTES} bytes`, FILE_HINT);
    if (read.problem === 'not-regular') throw new SecretReferenceError(reference, 'unreadable', `names something that ${read.detail}`, FILE_HINT);
    throw new SecretReferenceError(reference, 'unreadable', `names a file that ${read.detail}`, FILE_HINT);
  }
  // Files written with `echo` end with a newline that is not part of the secret.
  const value = read.bytes.toString('utf8').replace(/\r?\n$/, '');
  if (value === '') throw new SecretReferenceError(reference, 'empty', 'names an empty file', FILE_HINT);
  return value;
}

/** The value behind a reference. Throws SecretReferenceError (naming the reference) unless in sandbox mode. */
export async function resolveSecretRef(ref: SecretRef, options: ResolveOptions): Promise<string> {
  try {
    return readSecretRef(ref, options.baseDir, options.env, options.policy);
  } catch (error) {
    if (!(error instanceof SecretReferenceError) || !options.sandbox || error.problem === 'refused') throw error;
    options.onPlaceholder?.(error.reference);
    return sandboxPlaceholder(error.reference);
  }
}
