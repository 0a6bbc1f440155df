// Every secret reference of the manifests is resolved before anything is observed or planned:
// one missing variable or file makes the whole pass invalid (nothing applied), with errors
// that name the file, the field and the reference, never a value: the same located errors,
// hints and refusals `reconcile validate` gives (check-refs.ts). The values themselves are
// kept only in memory, for the kinds that need them.
import { findSecretReferences, referenceError } from '../manifests/check-refs.js';
import { referencePolicyOf } from '../manifests/reference-policy.js';
import { isSecretRef, referenceName, resolveSecretRef, SecretReferenceError } from '../manifests/refs.js';
import type { AnyDocument, ManifestError } from '../manifests/types.js';

export interface SecretResolver {
  /** Every reference of the documents checked; errors located. */
  check(documents: readonly AnyDocument[]): Promise<ManifestError[]>;
  /** The value behind a reference of a document (cached; never logged). */
  resolve(ref: unknown, document: AnyDocument): Promise<string>;
}

export function secretResolver(options: { env: NodeJS.ProcessEnv; sandbox: boolean; onPlaceholder: (reference: string) => void }): SecretResolver {
  const cache = new Map<string, Promise<string>>();
  const warned = new Set<string>();
  const onPlaceholder = (reference: string) => {
    if (warned.has(reference)) return;
    warned.add(reference);
    options.onPlaceholder(reference);
  };
  const resolve = (ref: unknown, document: AnyDocument): Promise<string> => {
    if (!isSecretRef(ref)) return Promise.reject(new TypeError(`Expected a secret reference in ${document.source.file}`));
    const key = `${document.source.dir}\u0000${referenceName(ref)}`;
    let value = cache.get(key);
    if (!value) {
      value = resolveSecretRef(ref, { baseDir: document.source.dir, env: options.env, policy: referencePolicyOf(document), sandbox: options.sandbox, onPlaceholder });
      cache.set(key, value);
    }
    return value;
  };
  return {
    resolve,
    async check(documents) {
      const errors: ManifestError[] = [];
      for (const { document, path, ref } of findSecretReferences(documents)) {
        try {
          await resolve(ref, document);
        } catch (error) {
          if (!(error instanceof SecretReferenceError)) throw error;
          errors.push(referenceError(document, path, error));
        }
      }
      return errors;
    },
  };
}
