// What must hold after any sequence of faults and kills. Pure: the suite gathers the facts
// from the emulator, these functions judge them, and each names the invariant it checks.
import { createHash } from 'node:crypto';

export interface LiveFacts {
  /** Every live project: name and ref. */
  projects: Array<{ name: string; ref: string }>;
  /** Secrets by project ref: name -> SHA-256 hex digest as the API lists them. */
  secrets: Record<string, Record<string, string>>;
  /** Function slugs by project ref. */
  functions: Record<string, string[]>;
  /** Successful DELETE requests the emulator served: route template and path. */
  deletes: Array<{ route: string; path: string }>;
  /** Exit code of the final `--dry-run --detailed-exitcode` (0: converged). */
  finalPlanExit: number;
  /** The state directory's inventory after the run: project ref by manifest name. */
  inventory: Record<string, string>;
  /**
   * The paused-holder takeover: a run stopped (SIGSTOP) past the lock timeout, a second run
   * that took the lock over and finished, then the first resumed. What the first sent and
   * wrote after the takeover (API writes, state files changed); undefined when no run was paused.
   */
  pausedHolder?: { tookOver: boolean; apiWritesAfter: string[]; stateFilesChanged: string[] };
  /** With shards: each shard's inventory after the run (project ref by manifest name), by shard. */
  shardInventories?: Record<string, Record<string, string>>;
  /**
   * The sharded rollout: the shards that refused a Rollout whose waves span them, the writes
   * its projects got meanwhile, whether the canary's shard halted under one Rollout per shard,
   * and whether the removed project under an approval rule is still live (never deleted).
   */
  rolloutGates?: { refusedShards: string[]; writesWhileRefused: string[]; canaryHalted: boolean; doomedLive: boolean };
}

export interface Expectations {
  /** Managed project names (each must exist exactly once). */
  managedProjects: string[];
  /** Projects that exist before and are not managed (must survive). */
  bystanders: string[];
  /** Secret values the manifests declare, by project name. */
  secrets: Record<string, Record<string, string>>;
  /** Secrets created out of band before the run (must survive: no prune). */
  outOfBandSecrets: Record<string, string[]>;
  /** Function slugs the manifests declare, by project name. */
  functions: Record<string, string[]>;
  /** Project documents renamed during the run: the project's name, its last manifest name and the ones before. */
  renamed: Array<{ project: string; manifestName: string; formerNames: string[] }>;
  /** Projects moved from one shard to another by their labels during the run (manifest name and API name are the same). */
  moved?: Array<{ project: string; from: string; to: string }>;
}

interface InvariantResult {
  name: string;
  ok: boolean;
  detail: string;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function checkInvariants(facts: LiveFacts, expected: Expectations): InvariantResult[] {
  const results: InvariantResult[] = [];
  const counts = new Map<string, number>();
  for (const p of facts.projects) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  const refOf = (name: string) => facts.projects.find((p) => p.name === name)?.ref;

  const converged = facts.finalPlanExit === 0;
  results.push({ name: 'the fleet converged', ok: converged, detail: converged ? 'a final dry run shows no changes' : `the final dry run exited ${facts.finalPlanExit}` });

  const duplicated = [...counts].filter(([, n]) => n > 1).map(([name, n]) => `${name} x${n}`);
  const missing = expected.managedProjects.filter((name) => !counts.has(name));
  results.push({
    name: 'no project was created twice',
    ok: duplicated.length === 0 && missing.length === 0,
    detail: duplicated.length || missing.length ? `duplicated: ${duplicated.join(', ') || 'none'}; missing: ${missing.join(', ') || 'none'}` : `${expected.managedProjects.length} managed projects, one each`,
  });

  const lost: string[] = [];
  for (const [project, values] of Object.entries(expected.secrets)) {
    const live = facts.secrets[refOf(project) ?? ''] ?? {};
    for (const [name, value] of Object.entries(values)) if (live[name] !== sha256(value)) lost.push(`${project}/${name}`);
  }
  for (const [project, names] of Object.entries(expected.outOfBandSecrets)) {
    const live = facts.secrets[refOf(project) ?? ''] ?? {};
    for (const name of names) if (!(name in live)) lost.push(`${project}/${name} (out of band)`);
  }
  results.push({ name: 'no secret was lost', ok: lost.length === 0, detail: lost.length ? `missing or wrong: ${lost.join(', ')}` : 'every declared and out-of-band secret is there with its value' });

  const missingFunctions: string[] = [];
  for (const [project, slugs] of Object.entries(expected.functions)) {
    const live = new Set(facts.functions[refOf(project) ?? ''] ?? []);
    for (const slug of slugs) if (!live.has(slug)) missingFunctions.push(`${project}/${slug}`);
  }
  results.push({ name: 'every function is deployed', ok: missingFunctions.length === 0, detail: missingFunctions.length ? `missing: ${missingFunctions.join(', ')}` : 'all declared functions are live' });

  const goneBystanders = expected.bystanders.filter((name) => !counts.has(name));
  const unwanted = facts.deletes;
  results.push({
    name: 'nothing was deleted that the manifests did not ask to delete',
    ok: unwanted.length === 0 && goneBystanders.length === 0,
    detail:
      unwanted.length || goneBystanders.length
        ? `deletes: ${unwanted.map((d) => d.path).join(', ') || 'none'}; bystanders gone: ${goneBystanders.join(', ') || 'none'}`
        : 'no DELETE was served; the unmanaged project and out-of-band secrets remain',
  });

  // A rename moves the record: the project stays managed under its new manifest name, and no
  // former name keeps a record that a later pass could treat as a removed document.
  const misplaced: string[] = [];
  for (const rename of expected.renamed) {
    const recorded = facts.inventory[rename.manifestName];
    if (!facts.projects.some((p) => p.name === rename.project && p.ref === recorded)) misplaced.push(`${rename.project} is not recorded as \`${rename.manifestName}\``);
    for (const former of rename.formerNames) if (former in facts.inventory) misplaced.push(`\`${former}\` still has a record`);
  }
  results.push({
    name: 'a renamed project is managed under its new name',
    ok: misplaced.length === 0,
    detail: misplaced.length
      ? misplaced.join('; ')
      : expected.renamed.map((r) => `${r.project} is recorded as \`${r.manifestName}\` (was ${r.formerNames.map((n) => `\`${n}\``).join(', ')})`).join('; ') || 'no document was renamed',
  });
  // A holder stopped past the lock timeout lost its lock: once resumed it writes nothing.
  const paused = facts.pausedHolder;
  const pausedOk = paused !== undefined && paused.tookOver && paused.apiWritesAfter.length === 0 && paused.stateFilesChanged.length === 0;
  results.push({
    name: 'a paused holder writes nothing after the takeover',
    ok: pausedOk,
    detail: !paused
      ? 'no run was paused past the lock timeout'
      : !paused.tookOver
        ? 'the second run did not take the lock over'
        : pausedOk
          ? 'the resumed run sent no API write and changed no file of the state directory'
          : `API writes: ${paused.apiWritesAfter.join(', ') || 'none'}; state files changed: ${paused.stateFilesChanged.join(', ') || 'none'}`,
  });
  // A rollout never spans shards it cannot see, and a removed project waits for its approval.
  const gates = facts.rolloutGates;
  const gatesOk = gates !== undefined && gates.refusedShards.length === 2 && gates.writesWhileRefused.length === 0 && gates.canaryHalted && gates.doomedLive;
  results.push({
    name: 'no tenant outruns the canary of another shard, and a removed project waits for its approval',
    ok: gatesOk,
    detail: !gates
      ? 'no sharded rollout was run'
      : gatesOk
        ? 'both shards refused the Rollout across them before anything was applied; with one Rollout per shard the canary halted; the removed enterprise project was not deleted'
        : `shards that refused the Rollout across them: ${gates.refusedShards.join(', ') || 'none'}; writes meanwhile: ${gates.writesWhileRefused.join(', ') || 'none'}; canary halted: ${gates.canaryHalted}; removed project still live: ${gates.doomedLive}`,
  });
  // A move hands the record over: the new shard manages the project, the old one forgets it.
  if (expected.moved?.length) {
    const wrong: string[] = [];
    for (const move of expected.moved) {
      const ref = refOf(move.project);
      const inventories = facts.shardInventories ?? {};
      if (ref === undefined || inventories[move.to]?.[move.project] !== ref) wrong.push(`${move.project} is not recorded by shard ${move.to}`);
      if (move.project in (inventories[move.from] ?? {})) wrong.push(`shard ${move.from} still has a record of ${move.project}`);
    }
    results.push({
      name: 'a project moved between shards is managed by its new shard',
      ok: wrong.length === 0,
      detail: wrong.length ? wrong.join('; ') : expected.moved.map((m) => `${m.project} (${refOf(m.project)}) moved from shard ${m.from} to ${m.to}`).join('; '),
    });
  }
  return results;
}
