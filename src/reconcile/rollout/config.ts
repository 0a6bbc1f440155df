// The Rollout document read into what the gate works with: its waves (each project in exactly
// one, the first whose selector and share take it; the rest in a last implicit wave), the soak,
// the maintenance windows and the approval rules.
import { createHash } from 'node:crypto';
import type { AnyDocument, ProjectDocument, RolloutDocument } from '../../manifests/types.js';
import type { RolloutSelector } from '../../manifests/schema-types.js';
import { parseDuration } from '../../util/rate.js';
import type { ChangeClass } from './change-class.js';
import { DISRUPTIVE_CLASSES } from './change-class.js';
import { expandKinds } from './kinds.js';

/** The name of the wave of the projects no declared wave takes. */
export const IMPLICIT_WAVE = 'rest';
const DEFAULT_SOAK_MS = 10 * 60_000;

export interface WindowRule {
  name: string;
  schedule: string;
  durationMs: number;
  timeZone: string;
  selector: RolloutSelector;
  classes: readonly ChangeClass[];
}

export interface ApprovalRule {
  name: string;
  classes?: readonly ChangeClass[];
  /** Entry kinds, the document kinds' aliases expanded. */
  kinds?: readonly string[];
  selector?: RolloutSelector;
}

export interface RolloutConfig {
  name: string;
  /** Wave names in order (the implicit last wave included when some project falls to it). */
  waves: string[];
  /** Wave index of each Project manifest name; empty when the rollout declares no waves. */
  waveOf: Map<string, number>;
  soakMs: number;
  windows: WindowRule[];
  approvals: ApprovalRule[];
  /** The Project documents, by manifest name (selectors of windows and approvals read their labels). */
  projects: Map<string, ProjectDocument>;
  /**
   * With a shard: the projects of the waves that other shards own, by wave index (the waves are
   * computed over the whole checkout). A wave with any of them never counts as done here.
   */
  elsewhere: Map<number, string[]>;
  /** The shard the Rollout orders (`spec.shard`), when it names one. */
  shard?: string;
  /** The declared waves' selectors and shares (a removed project is placed by its recorded labels). */
  declared: ReadonlyArray<{ name: string; selector?: RolloutSelector; share?: string }>;
}

/** What a selector reads of a project: its labels and its organization's manifest name. */
export interface Placement {
  labels: Readonly<Record<string, string>>;
  organization: string;
}

export function placementOf(project: ProjectDocument): Placement {
  return { labels: project.metadata.labels ?? {}, organization: project.spec.organization };
}

export function selects(selector: RolloutSelector | undefined, place: Placement): boolean {
  if (!selector) return true;
  if (selector.organization !== undefined && place.organization !== selector.organization) return false;
  return Object.entries(selector.labels ?? {}).every(([key, value]) => place.labels[key] === value);
}

export function matchesSelector(selector: RolloutSelector | undefined, project: ProjectDocument | undefined): boolean {
  if (!selector) return true;
  if (!project) return Object.keys(selector.labels ?? {}).length === 0 && selector.organization === undefined;
  return selects(selector, placementOf(project));
}

/** The Rollout documents that order these projects: every one without a shard map, else the shard's (or the unscoped one). */
export function rolloutDocuments(documents: readonly AnyDocument[]): RolloutDocument[] {
  return documents.filter((d): d is RolloutDocument => d.kind === 'Rollout');
}

/**
 * The declared wave index of each project (declared.length: the implicit last wave); a project
 * in no declared wave's selector and share falls through to it.
 */
export function placeInWaves(spec: RolloutDocument['spec'], projects: Iterable<ProjectDocument>): Map<string, number> {
  const declared = spec.waves ?? [];
  const waveOf = new Map<string, number>();
  for (const project of projects) {
    const name = project.metadata.name;
    const index = declared.findIndex((wave) => matchesSelector(wave.selector, project) && sharePoint(wave.name, name) < parseShare(wave.share));
    waveOf.set(name, index === -1 ? declared.length : index);
  }
  return waveOf;
}

/** A stable number in [0, 100) for a project within a wave: the same project always falls on the same side of a share. */
export function sharePoint(wave: string, project: string): number {
  const digest = createHash('sha256').update(`${wave}\u0000${project}`).digest();
  return (digest.readUInt32BE(0) / 2 ** 32) * 100;
}

export function parseShare(share: string | undefined): number {
  return share === undefined ? 100 : Number(share.slice(0, -1));
}

/** Projects of the rest of the checkout (a shard's `elsewhere`), each with its owner. */
type Elsewhere = ReadonlyArray<{ document: ProjectDocument; shard: string }>;

/**
 * The rollout of a manifest set: its one Rollout document (the loader refuses a second for the
 * same projects), or undefined. A shard's set comes with the rest of the checkout (`elsewhere`):
 * the waves of a Rollout without `shard` are computed over the whole checkout.
 */
export function rolloutConfig(documents: readonly AnyDocument[], elsewhere: Elsewhere = []): RolloutConfig | undefined {
  const found = rolloutDocuments(documents);
  // Several only in a view of the whole fleet with one Rollout per shard: none orders it whole.
  if (found.length !== 1) return undefined;
  const document = found[0]!;
  const spec = document.spec;
  const projects = new Map(documents.filter((d): d is ProjectDocument => d.kind === 'Project').map((d) => [d.metadata.name, d]));
  const waves = (spec.waves ?? []).map((wave) => wave.name);
  let waveOf = new Map<string, number>();
  const others = new Map<number, string[]>();
  if (waves.length > 0) {
    // A suspended project is never in a pass: no wave waits for it.
    const active = (list: Iterable<ProjectDocument>) => [...list].filter((project) => project.spec.policy?.suspend !== true);
    const outside = spec.shard === undefined ? active(elsewhere.map(({ document: d }) => d)).filter((d) => !projects.has(d.metadata.name)) : [];
    const placed = placeInWaves(spec, [...active(projects.values()), ...outside]);
    for (const d of outside) {
      const index = placed.get(d.metadata.name)!;
      placed.delete(d.metadata.name);
      others.set(index, [...(others.get(index) ?? []), d.metadata.name]);
    }
    waveOf = placed;
    const last = (spec.waves ?? []).length;
    if ([...waveOf.values(), ...others.keys()].some((index) => index === last)) waves.push(IMPLICIT_WAVE);
  }
  return {
    name: document.metadata.name,
    waves,
    waveOf,
    soakMs: spec.soak ? parseDuration(spec.soak) : DEFAULT_SOAK_MS,
    windows: (spec.windows ?? []).map((window) => ({
      name: window.name,
      schedule: window.schedule,
      durationMs: parseDuration(window.duration),
      timeZone: window.timeZone ?? 'UTC',
      selector: window.selector ?? {},
      classes: (window.classes as ChangeClass[] | undefined) ?? DISRUPTIVE_CLASSES,
    })),
    approvals: (spec.approvals ?? []).map((rule) => ({
      name: rule.name,
      ...(rule.classes ? { classes: rule.classes as ChangeClass[] } : {}),
      ...(rule.kinds ? { kinds: expandKinds(rule.kinds) } : {}),
      ...(rule.selector ? { selector: rule.selector } : {}),
    })),
    projects,
    elsewhere: others,
    declared: spec.waves ?? [],
    ...(spec.shard !== undefined ? { shard: spec.shard } : {}),
  };
}
