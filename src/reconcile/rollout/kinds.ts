// The vocabulary of an approval rule's `kinds`: the plan's entry kinds, and the document kinds
// as aliases for every entry kind their documents produce. An alias holds more, never less:
// `Project` is the project, its lifecycle (pause, restore) and every configuration section,
// which a Project document declares.
import { RESOURCE_KINDS, type ResourceKind } from '../resource-kinds.js';

const PROJECT_KINDS: readonly ResourceKind[] = RESOURCE_KINDS.filter((kind) => kind === 'Project' || kind.startsWith('Project'));

/** Document kinds whose entries are of other kinds (or of more kinds than their own name). */
export const KIND_ALIASES: Readonly<Record<string, readonly ResourceKind[]>> = {
  Project: PROJECT_KINDS,
  Secrets: ['Secret'],
  Migrations: ['Migration'],
};

/** Every value `kinds` accepts (the schema's enum): the entry kinds, then the aliases that are not entry kinds. */
export const RULE_KINDS: readonly string[] = [...RESOURCE_KINDS, ...Object.keys(KIND_ALIASES).filter((alias) => !(RESOURCE_KINDS as readonly string[]).includes(alias))];

/** The entry kinds a rule's `kinds` names, aliases expanded. */
export function expandKinds(kinds: readonly string[]): ResourceKind[] {
  const out = new Set<ResourceKind>();
  for (const kind of kinds) {
    for (const entryKind of KIND_ALIASES[kind] ?? [kind as ResourceKind]) out.add(entryKind);
  }
  return [...out];
}
