// Finds every secret reference of a loaded manifest set and reports those that would not resolve
// now, located at the field that holds them. Reports name the reference, never a value.
import { accessSync, constants, statSync } from 'node:fs';
import { isSecretRef, MAX_SECRET_FILE_BYTES, referenceName, referencePath } from './refs.js';
import { locateField } from './locations.js';
import { printable } from './printable.js';
import { toPointer } from './yaml-source.js';
import type { AnyDocument, ManifestError, ManifestSet, SecretRef } from './types.js';

export interface FoundReference {
  document: AnyDocument;
  /** JSON pointer of the field holding the reference, from the document root. */
  path: string;
  ref: SecretRef;
}

/** Every SecretRef in the documents' specs, in document order. */
export function findSecretReferences(documents: readonly AnyDocument[]): FoundReference[] {
  const found: FoundReference[] = [];
  for (const document of documents) {
    const local: FoundReference[] = [];
    const stack: Array<[unknown, Array<string | number>]> = [[document.spec, ['spec']]];
    while (stack.length) {
      const [value, path] = stack.pop()!;
      if (isSecretRef(value)) local.push({ document, path: toPointer(path), ref: value });
      else if (Array.isArray(value)) value.forEach((item, index) => stack.push([item, [...path, index]]));
      else if (typeof value === 'object' && value !== null) {
        for (const [key, item] of Object.entries(value)) stack.push([item, [...path, key]]);
      }
    }
    found.push(...local.sort((a, b) => a.path.localeCompare(b.path)));
  }
  return found;
}

/** Why a reference would not resolve now, or undefined when it would. */
export function referenceProblem(ref: SecretRef, baseDir: string, env: NodeJS.ProcessEnv): { message: string; kind: 'env' | 'file' } | undefined {
  if ('env' in ref.valueFrom) {
    const value = env[ref.valueFrom.env];
    if (value === undefined) return { kind: 'env', message: 'names an environment variable that is not set' };
    if (value === '') return { kind: 'env', message: 'names an environment variable that is empty' };
    return undefined;
  }
  const path = referencePath(ref, baseDir)!;
  try {
    const info = statSync(path);
    if (!info.isFile()) return { kind: 'file', message: 'does not name a regular file' };
    if (info.size > MAX_SECRET_FILE_BYTES) return { kind: 'file', message: `names a file larger than ${MAX_SECRET_FILE_BYTES} bytes` };
    if (info.size === 0) return { kind: 'file', message: 'names an empty file' };
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'file', message: 'names a file that does not exist' };
    return { kind: 'file', message: `names a file that cannot be read (${code ?? 'error'})` };
  }
}

export interface CheckReferencesOptions {
  env: NodeJS.ProcessEnv;
  /** Sandbox runs use placeholders for unresolved references, so nothing is reported. */
  sandbox?: boolean;
  /** Severity of an unset or empty environment variable (default `error`; validate uses `warning`). */
  missingEnv?: 'error' | 'warning';
}

/**
 * Located problems of the references that would not resolve now. The reconciler calls this
 * before planning and treats every entry as an error; `reconcile validate` reports unset
 * environment variables as warnings (CI may validate without the secrets).
 */
export function checkSecretReferences(set: ManifestSet, options: CheckReferencesOptions): ManifestError[] {
  if (options.sandbox) return [];
  const errors: ManifestError[] = [];
  for (const { document, path, ref } of findSecretReferences(set.documents)) {
    const problem = referenceProblem(ref, document.source.dir, options.env);
    if (!problem) continue;
    const reference = printable(referenceName(ref));
    const severity = problem.kind === 'env' ? (options.missingEnv ?? 'error') : 'error';
    errors.push({
      file: document.source.file,
      ...locateField(document, path),
      path,
      message: `secret reference ${reference} ${problem.message}`,
      hint: problem.kind === 'env' ? `set ${'env' in ref.valueFrom ? ref.valueFrom.env : ''} in the reconciler's environment` : 'paths are relative to the manifest file',
      severity,
      reference,
    });
  }
  return errors.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}
