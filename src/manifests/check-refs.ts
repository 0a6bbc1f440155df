// Finds every secret reference of a loaded manifest set and reports those that would not resolve
// now, located at the field that holds them. Reports name the reference, never a value.
import { isSecretRef, readSecretRef, SecretReferenceError } from './refs.js';
import { referencePolicyOf } from './reference-policy.js';
import { locateField } from './locations.js';
import { printable } from './printable.js';
import { toPointer } from './yaml-source.js';
import { generatedBy } from './project-set.js';
import type { AnyDocument, ManifestError, ManifestSet, SecretRef } from './types.js';

interface FoundReference {
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

/** The located error of a reference that does not resolve: the same for validate and for a pass. */
export function referenceError(document: AnyDocument, path: string, error: SecretReferenceError, severity: 'error' | 'warning' = 'error'): ManifestError {
  return {
    file: document.source.file,
    ...locateField(document, path),
    path,
    // A document a ProjectSet made names its element: a missing secret is that tenant's.
    message: printable(error.message + generatedBy(document)),
    ...(error.hint ? { hint: printable(error.hint) } : {}),
    severity,
    reference: printable(error.reference),
  };
}

interface CheckReferencesOptions {
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
  const errors: ManifestError[] = [];
  for (const { document, path, ref } of findSecretReferences(set.documents)) {
    try {
      readSecretRef(ref, document.source.dir, options.env, referencePolicyOf(document));
    } catch (error) {
      if (!(error instanceof SecretReferenceError)) throw error;
      // A refused reference is refused in the sandbox too: only what is missing gets a placeholder there.
      if (options.sandbox && error.problem !== 'refused') continue;
      const unset = 'env' in ref.valueFrom && (error.problem === 'missing' || error.problem === 'empty');
      errors.push(referenceError(document, path, error, unset ? (options.missingEnv ?? 'error') : 'error'));
    }
  }
  return errors.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
}
