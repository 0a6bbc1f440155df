// Helpers shared by every per-project kind (configuration sections and sub-resources) and the
// Project module: the observe policy, the live ref at apply time, the deletion of undeclared
// children.
import { hash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import type { AnyDocument, ManifestKind, Policy } from '../../manifests/types.js';
import type { FieldChange, KindContext, PlanEntry, ProjectScope, ResourceKind } from '../types.js';
import { entryId, makeEntry } from '../diff.js';

/** Lowercase hex SHA-256, the form the service uses for masked values (one call: a plan makes thousands). */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** The project's documents of one kind that are not suspended (a suspended resource is neither read nor written). */
export function activeDocuments<D extends AnyDocument>(project: ProjectScope, kind: ManifestKind): D[] {
  return project.documents.filter((doc): doc is D => doc.kind === kind && !policyOf(doc).suspend);
}

/** The project's documents of one kind, suspended ones included (their live objects must never be pruned). */
export function allDocuments<D extends AnyDocument>(project: ProjectScope, kind: ManifestKind): D[] {
  return project.documents.filter((doc): doc is D => doc.kind === kind);
}

/** The manifests root (the checkout) a document was loaded from: its file is relative to it. */
export function checkoutRootOf(doc: AnyDocument): string {
  const depth = dirname(doc.source.file).split(/[\\/]/).filter((part) => part !== '' && part !== '.').length;
  return resolve(doc.source.dir, ...Array<string>(depth).fill('..'));
}

function policyOf(doc: AnyDocument): Policy {
  return (doc.spec as { policy?: Policy }).policy ?? {};
}

/**
 * The document is under the observe policy: drift is reported, never written. A section's
 * document is its Project; a sub-resource's, its own document.
 */
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
  if (!ref) throw new ProjectRefUnknownError(project.name);
  return ref;
}

/** A change ran before its project had a live ref (its creation failed, was skipped or was not recorded). */
export class ProjectRefUnknownError extends Error {
  readonly project: string;
  constructor(project: string) {
    super(`Project \`${project}\` has no live ref yet: its creation did not complete, so nothing of it can be applied`);
    this.name = 'ProjectRefUnknownError';
    this.project = project;
  }
}

/** An entry names a document the project's scope no longer has: its apply cannot know what to send. */
export class DocumentGoneError extends Error {
  constructor(kind: string, name: string, project: string) {
    super(`no active ${kind} document declares \`${name}\` in project \`${project}\`: the entry cannot be applied`);
    this.name = 'DocumentGoneError';
  }
}

/** What a prune deletion entry says of one undeclared live child. */
export interface PrunedChild {
  name: string;
  reason: string;
  changes?: FieldChange[];
  /** The live id (or the batch) the delete needs at apply time. */
  target?: Record<string, unknown>;
}

export interface PruneOptions<L> {
  kind: ResourceKind;
  /** Live children no document declares (a suspended document still declares its child: it is never pruned). */
  undeclared: readonly L[];
  /** The manifests opt in to deleting them (`spec.prune.<kind>` on the Project, `prune: true` on Secrets). */
  enabled: boolean;
  child(item: L): PrunedChild;
  /** Says, at debug level, what is kept because pruning is not enabled: the manifests do not manage it. */
  kept(items: readonly L[]): void;
  /** Fields of the declaring document every deletion carries too (the Secrets document's source and policy). */
  document?: { source?: { file: string; line: number }; observeOnly?: boolean };
}

/**
 * The deletion entries of the live children of a project that no document declares, one per
 * child, each waiting for the project; none unless the manifests opt in to pruning.
 */
export function planPrune<L>(project: ProjectScope, options: PruneOptions<L>): PlanEntry[] {
  if (!options.enabled) {
    if (options.undeclared.length > 0) options.kept(options.undeclared);
    return [];
  }
  return options.undeclared.map((item) => {
    const child = options.child(item);
    return makeEntry({
      kind: options.kind,
      name: child.name,
      project: project.name,
      changes: child.changes ?? [],
      action: 'delete',
      reason: child.reason,
      ...(options.document?.observeOnly ? { observeOnly: true } : {}),
      dependsOn: projectDependency(project),
      ...(options.document?.source ? { source: options.document.source } : {}),
      ...(child.target ? { target: child.target } : {}),
    });
  });
}

export function sourceOf(doc: AnyDocument): { file: string; line: number } {
  return { file: doc.source.file, line: doc.source.line };
}

/**
 * Runs `send` once per pass and key however many entries share it (a bulk request behind
 * several plan entries): every entry of the batch gets the one request's result.
 */
export function oncePerPass(ctx: KindContext, key: string, send: () => Promise<void>): Promise<void> {
  return ctx.pass.once(key, send);
}
