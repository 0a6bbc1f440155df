// Helpers shared by the sub-resource kinds (secrets, functions, SSO providers, branches).
import { createHash } from 'node:crypto';
import type { AnyDocument, ManifestKind, Policy } from '../../manifests/types.js';
import type { KindContext, ProjectScope } from '../types.js';
import { entryId } from '../diff.js';

/** Lowercase hex SHA-256, the form the service uses for masked values. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The project's documents of one kind that are not suspended (a suspended resource is neither read nor written). */
export function activeDocuments<D extends AnyDocument>(project: ProjectScope, kind: ManifestKind): D[] {
  return project.documents.filter((doc): doc is D => doc.kind === kind && !policyOf(doc).suspend);
}

/** The project's documents of one kind, suspended ones included (their live objects must never be pruned). */
export function allDocuments<D extends AnyDocument>(project: ProjectScope, kind: ManifestKind): D[] {
  return project.documents.filter((doc): doc is D => doc.kind === kind);
}

function policyOf(doc: AnyDocument): Policy {
  return (doc.spec as { policy?: Policy }).policy ?? {};
}

export function isObserveOnly(doc: AnyDocument): boolean {
  return policyOf(doc).management === 'observe';
}

/** Entry ids a sub-resource change waits for: the project itself. */
export function projectDependency(project: ProjectScope): string[] {
  return [entryId('Project', project.name)];
}

/**
 * The live ref at apply time: a project created earlier in the same pass is known only
 * through `ctx.projectRefs` (the plan was made before it existed).
 */
export function refAtApply(project: ProjectScope, ctx: KindContext): string {
  const ref = ctx.projectRefs.get(project.name) ?? project.ref;
  if (!ref) throw new ProjectNotReadyError(project.name);
  return ref;
}

/** A sub-resource change ran before its project had a ref (its creation failed or was skipped). */
export class ProjectNotReadyError extends Error {
  readonly project: string;
  constructor(project: string) {
    super(`Project \`${project}\` has no live ref yet: its creation did not complete`);
    this.name = 'ProjectNotReadyError';
    this.project = project;
  }
}

export function sourceOf(doc: AnyDocument): { file: string; line: number } {
  return { file: doc.source.file, line: doc.source.line };
}

/** Runs `fn` once however many entries share it (bulk requests behind several plan entries). */
export function once<A extends unknown[], T>(fn: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let promise: Promise<T> | undefined;
  return (...args) => {
    promise ??= fn(...args);
    return promise;
  };
}
