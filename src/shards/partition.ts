// Which shard owns each project, and the part of the manifest set a shard reconciles. A
// project matched by no shard would never be reconciled; one matched by two would have two
// owners writing it: both are errors naming the project and the shards.
import type { AnyDocument, ManifestError, ProjectDocument } from '../manifests/types.js';
import type { Shard, ShardMap } from './shard-map.js';

export function matches(shard: Shard, project: ProjectDocument): boolean {
  const { labels, organization } = shard.selector;
  if (organization !== undefined && project.spec.organization !== organization) return false;
  const own = project.metadata.labels ?? {};
  return Object.entries(labels ?? {}).every(([key, value]) => own[key] === value);
}

interface Partition {
  /** Owner of each project manifest name that has exactly one. */
  owners: Map<string, string>;
  /** A located error per project with no owner or several. */
  errors: ManifestError[];
  /** Projects with no owner or several (`reconciler_unowned_projects`). */
  unowned: number;
}

export function partition(map: ShardMap, documents: readonly AnyDocument[]): Partition {
  const owners = new Map<string, string>();
  const errors: ManifestError[] = [];
  const names = map.shards.map((s) => s.name).join(', ');
  for (const document of documents) {
    if (document.kind !== 'Project') continue;
    const project = document as ProjectDocument;
    const name = project.metadata.name;
    const matched = map.shards.filter((shard) => matches(shard, project)).map((shard) => shard.name);
    const at = { file: project.source.file, line: project.source.line, column: project.source.column, path: '/metadata/labels' };
    if (matched.length === 1) owners.set(name, matched[0]!);
    else if (matched.length === 0) {
      errors.push({ ...at, message: `project \`${name}\` is matched by no shard of ${map.file} (shards: ${names}): every project needs exactly one owner` });
    } else {
      errors.push({ ...at, message: `project \`${name}\` is matched by ${matched.length} shards of ${map.file}: ${matched.join(', ')}; a project has exactly one owner` });
    }
  }
  return { owners, errors, unowned: errors.length };
}

/**
 * The one shard that may create each organization the checkout declares without `spec.slug`
 * (one with a slug exists already and is never created): the owner the map's `organizations:`
 * names, else the first shard in map order. The rule does not depend on labels, so moving
 * projects between shards never changes who creates an organization. Organizations are shared
 * between shards; every other shard only finds them (by name) and never creates one.
 */
export function organizationOwners(map: ShardMap, documents: readonly AnyDocument[]): Map<string, string> {
  const first = map.shards[0]!.name;
  const result = new Map<string, string>();
  for (const document of documents) {
    if (document.kind !== 'Organization' || (document.spec as { slug?: unknown } | undefined)?.slug !== undefined) continue;
    result.set(document.metadata.name, map.organizations[document.metadata.name] ?? first);
  }
  return result;
}

/**
 * The documents a shard reconciles: its projects, the documents that belong to them, the
 * organizations they live in (an organization is shared; it is matched by name, never pruned
 * by a shard) and the organizations the shard creates (`organizationOwners`).
 */
export function documentsOfShard(
  shard: string,
  owners: ReadonlyMap<string, string>,
  documents: readonly AnyDocument[],
  organizationOwner: ReadonlyMap<string, string> = new Map(),
): AnyDocument[] {
  const projects = new Set([...owners].filter(([, owner]) => owner === shard).map(([name]) => name));
  const organizations = new Set([...organizationOwner].filter(([, owner]) => owner === shard).map(([name]) => name));
  for (const document of documents) {
    if (document.kind === 'Project' && projects.has(document.metadata.name)) organizations.add((document as ProjectDocument).spec.organization);
  }
  return documents.filter((document) => {
    if (document.kind === 'Project') return projects.has(document.metadata.name);
    if (document.kind === 'Organization') return organizations.has(document.metadata.name);
    // A Rollout naming a shard orders that shard alone; one without (its waves inside one shard) is every shard's.
    if (document.kind === 'Rollout') {
      const scope = (document.spec as { shard?: unknown } | undefined)?.shard;
      return scope === undefined || scope === shard;
    }
    const project = (document.spec as { project?: unknown }).project;
    return typeof project === 'string' && projects.has(project);
  });
}
