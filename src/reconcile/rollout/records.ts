// What the rollout keeps in the state directory, each a key of the state store (written through
// its fenced atomic write, like every other state-directory write):
//   rollouts/<name>    the rollout of the current revision: each wave's state, a halt, waiting changes
//   approvals          approvals, each for one revision (and optionally some projects), with when and by whom
//   project-revisions  each project's applied revision
//   rollout-rules      the windows and approval rules of the last revision applied whole (the gate
//                      judges a revision under them and under its own: a rule loosened or removed
//                      by a revision still holds that revision's changes)
import type { ProjectRevisions, StateStore, WaitingChange, WaveState } from '../types.js';
import type { ApprovalRule, WindowRule } from './config.js';

export type { ProjectRevisions, WaitingChange, WaveState } from '../types.js';

export const WAVE_STATES: readonly WaveState[] = ['waiting', 'applying', 'soaking', 'done', 'halted'];

export interface WaveRecord {
  name: string;
  state: WaveState;
  startedAt?: number;
  /** A write of the revision succeeded on a project of the wave (a wave with none passes without a soak). */
  wrote?: boolean;
  soakUntil?: number;
  /** Applied, but a project of it not healthy yet (an upgrade restarting, a service coming up): since when. */
  unhealthySince?: number;
  doneAt?: number;
  /** Why the wave halted, or how it passed (`resumed by ...`, `nothing to change`). */
  reason?: string;
}

export interface RolloutRecord {
  name: string;
  revision: string;
  startedAt: number;
  waves: WaveRecord[];
  halted?: { wave: string; reason: string; at: number };
  /** Changes held for a window or an approval, by plan entry id (each notified once). */
  waiting: Record<string, WaitingChange>;
}

export interface Approval {
  revision: string;
  /** Project manifest names; absent: every project. */
  projects?: string[];
  at: number;
  /** The name of the token that approved (the trigger token file's name). */
  by: string;
}

/** The rules of a Rollout as last applied: what a later revision is judged under as well as its own. */
export interface AppliedRules {
  /** The revision whose rules these are. */
  revision: string;
  /** The Rollout's name; absent: that revision had no Rollout (its rules are none). */
  rollout?: string;
  /** The shard the Rollout ordered (`spec.shard`), when it named one. */
  shard?: string;
  windows: WindowRule[];
  /** Kinds expanded to entry kinds, as the gate matches them. */
  approvals: ApprovalRule[];
  at: number;
}

const APPROVALS_KEY = 'approvals';
const RULES_KEY = 'rollout-rules';
const REVISIONS_KEY = 'project-revisions';

export const rolloutKey = (name: string): string => `rollouts/${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;

export async function readRollout(state: StateStore, name: string): Promise<RolloutRecord | undefined> {
  return state.get<RolloutRecord>(rolloutKey(name));
}

export async function writeRollout(state: StateStore, record: RolloutRecord): Promise<void> {
  await state.set(rolloutKey(record.name), record);
}

export async function readApprovals(state: StateStore): Promise<Approval[]> {
  return (await state.get<{ approvals: Approval[] }>(APPROVALS_KEY))?.approvals ?? [];
}

/** Records an approval; approvals of other revisions expire with them and are dropped. */
export async function addApproval(state: StateStore, approval: Approval): Promise<Approval[]> {
  const kept = (await readApprovals(state)).filter((a) => a.revision === approval.revision);
  const approvals = [...kept, approval];
  await state.set(APPROVALS_KEY, { approvals });
  return approvals;
}

export function isApproved(approvals: readonly Approval[], revision: string, project: string | undefined): boolean {
  return approvals.some((a) => a.revision === revision && (!a.projects || (project !== undefined && a.projects.includes(project))));
}

// Kept under `projects`: the record's own fields (the lock's generation among them) never mix with project names.
export async function readProjectRevisions(state: StateStore): Promise<ProjectRevisions> {
  return { ...((await state.get<{ projects?: ProjectRevisions }>(REVISIONS_KEY))?.projects ?? {}) };
}

export async function writeProjectRevisions(state: StateStore, revisions: ProjectRevisions): Promise<void> {
  await state.set(REVISIONS_KEY, { projects: revisions });
}

/** The rules as last applied; undefined in a state directory written before they were recorded. */
export async function readAppliedRules(state: StateStore): Promise<AppliedRules | undefined> {
  const found = await state.get<{ rules?: AppliedRules }>(RULES_KEY);
  const rules = found?.rules;
  if (!rules || typeof rules.revision !== 'string') return undefined;
  return { ...rules, windows: Array.isArray(rules.windows) ? rules.windows : [], approvals: Array.isArray(rules.approvals) ? rules.approvals : [] };
}

export async function writeAppliedRules(state: StateStore, rules: AppliedRules): Promise<void> {
  await state.set(RULES_KEY, { rules });
}

export type ResumeAnswer =
  | { status: 'resumed'; rollout: string; wave: string; next?: string; revision: string }
  | { status: 'not-halted'; rollout: string; revision: string }
  /** `--revision` names another revision than the halted one: nothing resumed. */
  | { status: 'stale-revision'; rollout: string; revision: string; halted: string }
  | { status: 'unknown-rollout'; rollout?: string };

/**
 * Continues a halted rollout: a person decided its halted wave may count as passed, so the
 * next wave starts (with the next pass). Nothing else changes.
 */
export async function resumeRollout(
  state: StateStore, name: string | undefined, known: string | undefined, by: string, now: number,
  /** The revision the person means to resume (`--revision`); another halted revision is not resumed. */
  revision?: { given: string; matches(halted: string): boolean },
): Promise<ResumeAnswer> {
  if (!known || (name !== undefined && name !== known)) return { status: 'unknown-rollout', ...(name !== undefined ? { rollout: name } : {}) };
  const record = await readRollout(state, known);
  if (!record?.halted) return { status: 'not-halted', rollout: known, revision: record?.revision ?? '' };
  if (revision && !revision.matches(record.revision)) return { status: 'stale-revision', rollout: known, revision: revision.given, halted: record.revision };
  const index = record.waves.findIndex((wave) => wave.name === record.halted!.wave);
  const wave = record.waves[index]!;
  wave.state = 'done';
  wave.doneAt = now;
  wave.reason = `resumed by ${by} after: ${record.halted.reason}`;
  const next = record.waves[index + 1];
  if (next) {
    next.state = 'applying';
    next.startedAt = now;
  }
  delete record.halted;
  await writeRollout(state, record);
  return { status: 'resumed', rollout: known, wave: wave.name, ...(next ? { next: next.name } : {}), revision: record.revision };
}
