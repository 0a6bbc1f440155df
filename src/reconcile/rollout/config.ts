// The Rollout document read into what the gate works with: its waves (each project in exactly
// one, the first whose selector and share take it; the rest in a last implicit wave), the soak,
// the maintenance windows and the approval rules.
import { createHash } from 'node:crypto';
import type { AnyDocument, ProjectDocument, RolloutDocument } from '../../manifests/types.js';
import type { RolloutSelector } from '../../manifests/schema-types.js';
import { parseDuration } from '../../util/rate.js';
import type { ChangeClass } from './change-class.js';
import { DISRUPTIVE_CLASSES } from './change-class.js';

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
}

export function matchesSelector(selector: RolloutSelector | undefined, project: ProjectDocument | undefined): boolean {
  if (!selector) return true;
  if (!project) return Object.keys(selector.labels ?? {}).length === 0 && selector.organization === undefined;
  if (selector.organization !== undefined && project.spec.organization !== selector.organization) return false;
  const own = project.metadata.labels ?? {};
  return Object.entries(selector.labels ?? {}).every(([key, value]) => own[key] === value);
}

/** A stable number in [0, 100) for a project within a wave: the same project always falls on the same side of a share. */
export function sharePoint(wave: string, project: string): number {
  const digest = createHash('sha256').update(`${wave}\u0000${project}`).digest();
  return (digest.readUInt32BE(0) / 2 ** 32) * 100;
}

function parseShare(share: string | undefined): number {
  return share === undefined ? 100 : Number(share.slice(0, -1));
}

/** The rollout of a manifest set: its one Rollout document (the loader refuses a second), or undefined. */
export function rolloutConfig(documents: readonly AnyDocument[]): RolloutConfig | undefined {
  const document = documents.find((d): d is RolloutDocument => d.kind === 'Rollout');
  if (!document) return undefined;
  const spec = document.spec;
  const projects = new Map(documents.filter((d): d is ProjectDocument => d.kind === 'Project').map((d) => [d.metadata.name, d]));
  const waves = (spec.waves ?? []).map((wave) => wave.name);
  const waveOf = new Map<string, number>();
  if (waves.length > 0) {
    const declared = spec.waves ?? [];
    for (const [name, project] of projects) {
      // A suspended project is never in a pass: no wave waits for it.
      if (project.spec.policy?.suspend === true) continue;
      const index = declared.findIndex((wave) => matchesSelector(wave.selector, project) && sharePoint(wave.name, name) < parseShare(wave.share));
      waveOf.set(name, index === -1 ? declared.length : index);
    }
    if ([...waveOf.values()].some((index) => index === declared.length)) waves.push(IMPLICIT_WAVE);
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
      ...(rule.kinds ? { kinds: rule.kinds } : {}),
      ...(rule.selector ? { selector: rule.selector } : {}),
    })),
    projects,
  };
}
