// Loads a checkout with the registry's facets: the checks of each document kind and the files it
// reads at load time, declared by its kind module (KindModule.checks, KindModule.files.read) and,
// for the Rollout document, beside its schema (rollout/document-checks.ts). Every caller of src
// loads manifests here, so no kind's checks or files are left out by a caller that forgot them;
// the manifests layer below knows no kind module (src/manifests/load.ts takes the facets).
import { loadCheckout, type LoadOptions } from '../manifests/load.js';
import type { DocumentFacets, LoadFacets } from '../manifests/load-facets.js';
import type { ManifestSet } from '../manifests/types.js';
import { KIND_MODULES } from './registry.js';
import { rolloutDocument } from './rollout/schema.js';
import { checkRolloutDocuments } from './rollout/document-checks.js';
import type { KindModule } from './types.js';

export type { LoadOptions } from '../manifests/load.js';

/** The facets of a module's document kind; a module with checks or files read at load time has a document kind of its own. */
function facetsOf(module: Pick<KindModule<string>, 'kind' | 'document' | 'checks' | 'files'>): Array<[string, DocumentFacets]> {
  const read = module.files?.readAt === 'load' ? module.files.read : undefined;
  if (!module.checks && !read) return [];
  if (!module.document) throw new Error(`kind ${module.kind} declares checks or files read at load time but no document kind: they would check nothing`);
  return [[module.document.kind, { ...(module.checks ? { check: module.checks } : {}), ...(read ? { read } : {}) }]];
}

/** The registry's facets by document kind: every kind module's, then the Rollout document's. */
export const LOAD_FACETS: LoadFacets = new Map([
  ...KIND_MODULES.flatMap((module) => facetsOf(module)),
  [rolloutDocument.kind, { check: checkRolloutDocuments }],
]);

/** Loads the manifests directory `dir` (load.ts), each document kind with its checks and files. */
export function loadManifests(dir: string, options: LoadOptions = {}): Promise<ManifestSet> {
  return loadCheckout(dir, LOAD_FACETS, options);
}
