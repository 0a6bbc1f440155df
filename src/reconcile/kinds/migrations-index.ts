// Which Migrations documents apply to a project, through an index built once per document
// set: a pass asks for every project, and scanning every document each time is quadratic in
// the fleet. Documents that name their project are found by that name; the few with a
// selector are matched against the project's labels and organization.
import type { AnyDocument, MigrationsDocument, ProjectDocument } from '../../manifests/types.js';

type Selector = NonNullable<MigrationsDocument['spec']['selector']>;

interface MigrationsIndex {
  /** The set's length when indexed: a set that grew since is indexed again. */
  size: number;
  /** Per project name, the documents naming it, with their place in the set. */
  byProject: Map<string, Array<[number, MigrationsDocument]>>;
  bySelector: Array<[number, MigrationsDocument]>;
}

const indexes = new WeakMap<readonly AnyDocument[], MigrationsIndex>();

function indexOf(documents: readonly AnyDocument[]): MigrationsIndex {
  const known = indexes.get(documents);
  if (known && known.size === documents.length) return known;
  const index: MigrationsIndex = { size: documents.length, byProject: new Map(), bySelector: [] };
  documents.forEach((doc, place) => {
    if (doc.kind !== 'Migrations') return;
    const migrations = doc as MigrationsDocument;
    const spec = migrations.spec;
    if ((spec.policy as { suspend?: boolean } | undefined)?.suspend) return;
    if (spec.project !== undefined) {
      const own = index.byProject.get(spec.project);
      if (own) own.push([place, migrations]);
      else index.byProject.set(spec.project, [[place, migrations]]);
    } else if (spec.selector !== undefined) index.bySelector.push([place, migrations]);
  });
  indexes.set(documents, index);
  return index;
}

export function selectorMatches(selector: Selector, project: ProjectDocument): boolean {
  if (selector.organization !== undefined && project.spec.organization !== selector.organization) return false;
  const own = project.metadata.labels ?? {};
  return Object.entries(selector.labels ?? {}).every(([key, value]) => own[key] === value);
}

/** The Migrations documents that apply to a project, in the order of the set: naming it, or with a selector that matches it. */
export function migrationsFor(project: { name: string; document: ProjectDocument }, documents: readonly AnyDocument[]): MigrationsDocument[] {
  const index = indexOf(documents);
  const named = index.byProject.get(project.name) ?? [];
  const selected = index.bySelector.filter(([, doc]) => selectorMatches(doc.spec.selector!, project.document));
  if (selected.length === 0) return named.map(([, doc]) => doc);
  if (named.length === 0) return selected.map(([, doc]) => doc);
  return [...named, ...selected].sort((a, b) => a[0] - b[0]).map(([, doc]) => doc);
}
