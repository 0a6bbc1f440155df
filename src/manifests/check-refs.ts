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

interface Visit {
  value: unknown;
  key: string | number;
  parent?: Visit;
}

function pathOf(visit: Visit): Array<string | number> {
  const path: Array<string | number> = [];
  for (let at: Visit | undefined = visit; at; at = at.parent) path.push(at.key);
  return path.reverse();
}

/** Every SecretRef in the documents' specs, in document order. */
export function findSecretReferences(documents: readonly AnyDocument[]): FoundReference[] {
  const found: FoundReference[] = [];
  for (const document of documents) {
    const local: FoundReference[] = [];
    // Only objects and arrays are visited (a scalar holds no reference); a path is spelled out
    // only for a reference found, from the chain of its parents.
    const stack: Visit[] = [{ value: document.spec, key: 'spec' }];
    while (stack.length) {
      const visit = stack.pop()!;
      const value = visit.value;
      if (isSecretRef(value)) local.push({ document, path: toPointer(pathOf(visit)), ref: value });
      else if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) if (typeof value[index] === 'object' && value[index] !== null) stack.push({ value: value[index], key: index, parent: visit });
      } else if (typeof value === 'object' && value !== null) {
        for (const key in value as Record<string, unknown>) {
          const item = (value as Record<string, unknown>)[key];
          if (typeof item === 'object' && item !== null && Object.hasOwn(value as object, key)) stack.push({ value: item, key, parent: visit });
        }
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
