// The rollout gate of a pass: which projects receive the new revision's writes now, and what
// the pass established. Before the apply, `hold` moves the rollout on where its gates allow (a
// soak that ended with every project healthy, a wave with nothing to change) and marks every
// write that must wait (`held`): writes to later waves, disruptive changes outside their
// maintenance window, changes waiting for an approval. The engine writes nothing held. After
// the apply, `record` keeps each project's applied revision, starts a wave's soak once all its
// projects are applied and read back, and halts the rollout on a failure in the current wave.
// A dry run runs `hold` (reads only) and never `record`: nothing of it is kept.
import { createHash } from 'node:crypto';
import type { AnyDocument, ProjectDocument, ShardScope } from '../../manifests/types.js';
import type { Inventory } from '../inventory.js';
import type { Clock } from '../../util/clock.js';
import { isChange } from '../summary.js';
import type { ApplyOutcome, Logger, PlanEntry, RolloutEvent, RolloutSummary, StateStore } from '../types.js';
import { changeClasses } from './change-class.js';
import { parseShare, placementOf, rolloutConfig, selects, sharePoint, type ApprovalRule, type Placement, type RolloutConfig, type WindowRule } from './config.js';
import type { RolloutSelector } from '../../manifests/schema-types.js';
import {
  isApproved, readAppliedRules, readApprovals, readProjectRevisions, readRollout, writeAppliedRules, writeProjectRevisions, writeRollout,
  type AppliedRules, type Approval, type ProjectRevisions, type RolloutRecord, type WaitingChange, type WaveState,
} from './records.js';
import { windowState, type WindowState } from './windows.js';

export type { RolloutEvent, RolloutEventType, RolloutSummary } from '../types.js';

interface GateOptions {
  documents: readonly AnyDocument[];
  state: StateStore;
  /** The manifests' commit; without one, a digest of the documents stands for it. */
  revision: string | undefined;
  clock: Clock;
  log: Logger;
  dryRun: boolean;
  /** The problems of a project's health (the services it manages), empty when healthy; reads only. */
  health(project: string): Promise<string[]>;
  /** What the inventory recorded of each project when it was last applied (its labels among it). */
  inventory?: Inventory;
  /** With a shard: the rest of the checkout (the waves are computed over all of it). */
  shard?: ShardScope;
}

/**
 * Where the gate's selectors may place a project: by its declared labels and by the labels the
 * inventory recorded when it was last applied (a rule that matches either applies), or
 * `unknown` when neither is known (a removed project whose record predates labels).
 */
type Placements = Placement[] | 'unknown';

function placementsOf(project: string, config: RolloutConfig, inventory: Inventory | undefined): Placements {
  const places: Placement[] = [];
  const document = config.projects.get(project);
  if (document) places.push(placementOf(document));
  const record = inventory?.projects[project];
  if (record?.labels) places.push({ labels: record.labels, organization: record.organization });
  return places.length > 0 ? places : 'unknown';
}

/**
 * The inventory as the gate reads it: a project renamed in this pass (its record still under
 * the former name until the apply moves it) is placed by the labels of that record too.
 */
export function withRenamedRecords(inventory: Inventory, units: ReadonlyArray<{ name: string; renamedFrom?: string }>): Inventory {
  const projects = { ...inventory.projects };
  for (const unit of units) {
    const former = unit.renamedFrom !== undefined ? inventory.projects[unit.renamedFrom] : undefined;
    if (former && !projects[unit.name]) projects[unit.name] = former;
  }
  return { ...inventory, projects };
}

function selectsAny(selector: RolloutSelector | undefined, places: Placements): boolean {
  return places === 'unknown' || places.some((place) => selects(selector, place));
}

/**
 * A revision for a checkout that is not a git repository: the digest of what the documents
 * declare and of every file they read (`inputs`: path and content digest, as the checkout's
 * walker recorded them; src/reconcile/document-files.ts).
 */
export function contentRevision(documents: readonly AnyDocument[], inputs: ReadonlyMap<string, string> = new Map()): string {
  const hash = createHash('sha256');
  for (const d of documents) hash.update(JSON.stringify([d.kind, d.metadata, d.spec])).update('\n');
  for (const [path, digest] of [...inputs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${path}\0${digest}\n`);
  return `content-${hash.digest('hex').slice(0, 12)}`;
}

/** A revision as people read and type it: a commit's first 12 characters, a content revision whole. */
export function shortRevision(revision: string): string {
  return revision.startsWith('content-') ? revision : revision.slice(0, 12);
}

/** The project an entry belongs to (a Project entry names its project). */
export function projectOfEntry(entry: PlanEntry): string | undefined {
  return entry.project ?? (entry.kind === 'Project' ? entry.name : undefined);
}

function entryLine(entry: PlanEntry): string {
  const paths = entry.changes.map((change) => change.path);
  return `${entry.id} ${entry.action}${paths.length ? ` (${paths.join(', ')})` : ''}`;
}

/** Two windows or two approval rules that hold the same changes at the same times. */
function sameRule(a: WindowRule | ApprovalRule, b: WindowRule | ApprovalRule): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The rules the Rollout had as last applied, to judge this revision under as well as its own:
 * a revision that loosens or removes a rule (or the whole Rollout) is still held by it. Only
 * the rules that differ from this revision's are kept (an unchanged rule judges the same).
 */
interface PreviousRules {
  /** The Rollout of the recorded rules, and whether this revision removed it. */
  rollout: string;
  removed: boolean;
  windows: WindowRule[];
  approvals: ApprovalRule[];
  /** This revision's rules by name (to tell a removed rule from a loosened one). */
  windowNames: ReadonlySet<string>;
  approvalNames: ReadonlySet<string>;
}

function previousRules(applied: AppliedRules | undefined, config: RolloutConfig | undefined): PreviousRules | undefined {
  if (!applied || applied.rollout === undefined) return undefined;
  const windows = applied.windows.filter((window) => !config?.windows.some((mine) => sameRule(mine, window)));
  const approvals = applied.approvals.filter((rule) => !config?.approvals.some((mine) => sameRule(mine, rule)));
  if (windows.length === 0 && approvals.length === 0) return undefined;
  return {
    rollout: applied.rollout,
    removed: config === undefined || config.name !== applied.rollout,
    windows,
    approvals,
    windowNames: new Set(config?.windows.map((window) => window.name) ?? []),
    approvalNames: new Set(config?.approvals.map((rule) => rule.name) ?? []),
  };
}

/** A Rollout this revision removed: no waves, its recorded rules only (it orders nothing any more). */
function removedConfig(name: string, documents: readonly AnyDocument[]): RolloutConfig {
  const projects = new Map(documents.filter((d): d is ProjectDocument => d.kind === 'Project').map((d) => [d.metadata.name, d]));
  return { name, waves: [], waveOf: new Map(), soakMs: 0, windows: [], approvals: [], projects, elsewhere: new Map(), declared: [] };
}

export async function openRolloutGate(options: GateOptions): Promise<RolloutGate | undefined> {
  const found = rolloutConfig(options.documents, options.shard?.elsewhere);
  // A Rollout for one shard orders that shard's process only (a plan of the whole fleet has none).
  const config = found && (found.shard === undefined || found.shard === options.shard?.name) ? found : undefined;
  const recorded = await readAppliedRules(options.state);
  const applied = recorded && recorded.shard === options.shard?.name ? recorded : undefined;
  const previous = previousRules(applied, config);
  if (!config && !previous) return undefined;
  const revision = options.revision ?? contentRevision(options.documents);
  const effective = config ?? removedConfig(previous!.rollout, options.documents);
  const [stored, approvals, revisions] = await Promise.all([readRollout(options.state, effective.name), readApprovals(options.state), readProjectRevisions(options.state)]);
  return new RolloutGate(effective, revision, stored, approvals, revisions, options, { previous, applied: applied?.revision, ordering: config !== undefined });
}

/** The wave a plan names for a removed project no declared wave takes: it goes after every wave. */
export const AFTER_EVERY_WAVE = 'after-every-wave';

export class RolloutGate {
  readonly #config: RolloutConfig;
  readonly #revision: string;
  readonly #record: RolloutRecord;
  readonly #approvals: readonly Approval[];
  readonly #revisions: ProjectRevisions;
  readonly #options: GateOptions;
  readonly #events: RolloutEvent[] = [];
  readonly #windows = new Map<WindowRule, WindowState>();
  /** The rules as last applied that differ from this revision's: they hold its changes too. */
  readonly #previous: PreviousRules | undefined;
  /** The revision of the rules as last applied; undefined in an older state directory without the record. */
  readonly #recorded: string | undefined;
  /** This revision has a Rollout for this process (else only a removed one's recorded rules judge it). */
  readonly #ordering: boolean;
  /** The projects of the pass (`hold`); undefined: every project. */
  #passProjects: ReadonlySet<string> | undefined;
  #advanceNow = false;
  /** When to look at the health of an applied wave again (not healthy yet right after its apply). */
  #recheckAt: number | undefined;

  constructor(
    config: RolloutConfig, revision: string, stored: RolloutRecord | undefined, approvals: readonly Approval[], revisions: ProjectRevisions, options: GateOptions,
    rules: { previous?: PreviousRules | undefined; applied?: string | undefined; ordering: boolean } = { ordering: true },
  ) {
    this.#config = config;
    this.#previous = rules.previous;
    this.#recorded = rules.applied;
    this.#ordering = rules.ordering;
    this.#revision = revision;
    this.#approvals = approvals;
    this.#revisions = { ...revisions };
    this.#options = options;
    const now = options.clock.now();
    if (stored && stored.revision === revision) {
      // The waves as the document declares them now, with the states kept.
      const byName = new Map(stored.waves.map((wave) => [wave.name, wave]));
      this.#record = { ...stored, waves: config.waves.map((name) => byName.get(name) ?? { name, state: 'waiting' }), waiting: stored.waiting ?? {} };
    } else {
      // A new revision starts a new rollout from the first wave.
      this.#record = { name: config.name, revision, startedAt: now, waves: config.waves.map((name) => ({ name, state: 'waiting' })), waiting: {} };
      if (config.waves.length > 0) options.log.info({ rollout: config.name, revision, previous: stored?.revision, waves: config.waves }, 'rollout started: the new revision goes to the first wave');
    }
  }

  get revision(): string {
    return this.#revision;
  }

  #current(): number {
    const index = this.#record.waves.findIndex((wave) => wave.state !== 'done');
    return index === -1 ? this.#record.waves.length : index;
  }

  #waveIndex(project: string | undefined): number {
    if (project !== undefined && this.#config.waveOf.has(project)) return this.#config.waveOf.get(project)!;
    // A removed project goes with the wave its recorded labels fall in (as it was placed when
    // declared); when none takes it or its labels are unknown, after every wave (index
    // `waves.length`): it waits until the last wave is done, never with an earlier one.
    const record = project !== undefined ? this.#options.inventory?.projects[project] : undefined;
    if (project !== undefined && record?.labels) {
      const place = { labels: record.labels, organization: record.organization };
      const index = this.#config.declared.findIndex((wave) => selects(wave.selector, place) && sharePoint(wave.name, project) < parseShare(wave.share));
      if (index !== -1 && index < this.#record.waves.length) return index;
    }
    return this.#record.waves.length;
  }

  #members(index: number): string[] {
    return [...this.#config.waveOf].filter(([, wave]) => wave === index).map(([name]) => name);
  }

  #heldByWave(index: number): string | undefined {
    const waves = this.#record.waves;
    if (waves.length === 0) return undefined;
    if (this.#record.halted) {
      const halted = waves.findIndex((wave) => wave.name === this.#record.halted!.wave);
      return index > halted ? `the rollout is halted at wave ${this.#record.halted.wave}: ${this.#record.halted.reason}` : undefined;
    }
    const current = this.#current();
    if (index <= current) return undefined;
    const gate = waves[current]!;
    const outside = this.#config.elsewhere.get(current);
    const state = outside
      ? `${gate.state}; it has projects of other shards (${outside.join(', ')}) whose progress this shard cannot see, so it never counts as done here: one Rollout per shard`
      : gate.state === 'soaking' && gate.soakUntil !== undefined ? `soaking until ${new Date(gate.soakUntil).toISOString()}` : gate.state;
    return `${index < waves.length ? `wave ${waves[index]!.name}` : 'a removed project no wave takes (it goes after every wave)'} waits for wave ${gate.name} (${state})`;
  }

  /** The project's wave may not be written yet (a later wave, or the rollout halted before it). */
  holdsProject(project: string): boolean {
    return this.#record.waves.length > 0 && this.#heldByWave(this.#waveIndex(project)) !== undefined;
  }

  #emit(event: Omit<RolloutEvent, 'rollout' | 'revision'>): void {
    if (!this.#options.dryRun) this.#events.push({ rollout: this.#config.name, revision: this.#revision, ...event });
  }

  #start(index: number, now: number): void {
    const wave = this.#record.waves[index];
    if (!wave || wave.state !== 'waiting') return;
    wave.state = 'applying';
    wave.startedAt = now;
    this.#options.log.info({ rollout: this.#config.name, wave: wave.name, revision: this.#revision }, `rollout: wave ${wave.name} starts`);
    this.#emit({ type: 'rollout_wave_started', wave: wave.name, projects: this.#members(index) });
  }

  #pass(index: number, now: number, reason?: string): void {
    const wave = this.#record.waves[index]!;
    wave.state = 'done';
    wave.doneAt = now;
    if (reason) wave.reason = reason;
    this.#options.log.info({ rollout: this.#config.name, wave: wave.name, revision: this.#revision, ...(reason ? { reason } : {}) }, `rollout: wave ${wave.name} passed its gate`);
    if (index + 1 < this.#record.waves.length) this.#start(index + 1, now);
    else {
      this.#options.log.info({ rollout: this.#config.name, revision: this.#revision }, 'rollout: every wave is done');
      this.#emit({ type: 'rollout_done' });
    }
  }

  #halt(index: number, reason: string, now: number): void {
    const wave = this.#record.waves[index]!;
    wave.state = 'halted';
    wave.reason = reason;
    this.#record.halted = { wave: wave.name, reason, at: now };
    this.#options.log.error({ rollout: this.#config.name, wave: wave.name, revision: this.#revision, reason }, `rollout halted at wave ${wave.name}: later waves keep their state until \`reconcile resume\` or a newer revision`);
    this.#emit({ type: 'rollout_halted', wave: wave.name, reason });
  }

  async #unhealthy(index: number): Promise<string[]> {
    const problems = await Promise.all(
      this.#members(index).map(async (project) => {
        const found = await this.#options.health(project);
        return found.length > 0 ? `${project}: ${found.join(', ')}` : undefined;
      }),
    );
    return problems.filter((problem): problem is string => problem !== undefined);
  }

  /** Moves the rollout on where its gates allow, before anything is written. */
  async #advance(entries: readonly PlanEntry[], everyProject: boolean): Promise<void> {
    const now = this.#options.clock.now();
    const waves = this.#record.waves;
    for (;;) {
      const index = this.#current();
      if (index >= waves.length || this.#record.halted) return;
      const wave = waves[index]!;
      if (wave.state === 'waiting') this.#start(index, now);
      // A wave with projects of other shards never passes here: their progress is out of sight.
      if (this.#config.elsewhere.has(index)) return;
      if (wave.state === 'soaking') {
        if (wave.soakUntil !== undefined && now < wave.soakUntil) return;
        const problems = await this.#unhealthy(index);
        if (problems.length > 0) return this.#halt(index, `unhealthy at the end of the soak: ${problems.join('; ')}`, now);
        this.#pass(index, now);
        continue;
      }
      if (wave.state === 'applying' && !wave.wrote) {
        const members = new Set(this.#members(index));
        const untouched = [...members].every((project) => !entries.some((e) => projectOfEntry(e) === project && (isChange(e) || e.action === 'blocked' || e.reason?.startsWith('could not observe'))));
        if (members.size === 0 || (everyProject && untouched)) {
          this.#pass(index, now, members.size === 0 ? 'no projects' : 'nothing to change');
          continue;
        }
      }
      return;
    }
  }

  #window(window: WindowRule, now: number): WindowState {
    let state = this.#windows.get(window);
    if (!state) {
      state = windowState(window, now);
      this.#windows.set(window, state);
    }
    return state;
  }

  /** Why a rule as last applied still holds this revision's change (the plan says so). */
  #stillHolds(kind: 'approval rule' | 'window', name: string): string {
    const previous = this.#previous!;
    if (previous.removed) return `the Rollout ${previous.rollout} was removed in this revision; its ${kind} ${name} still holds changes of this revision`;
    const names = kind === 'window' ? previous.windowNames : previous.approvalNames;
    return names.has(name)
      ? `the ${kind} ${name} was loosened in this revision; as last applied it still holds changes of this revision`
      : `the ${kind} ${name} was removed in this revision; it still holds changes of this revision`;
  }

  /** Marks the entries the pass must not write (`held`) and each entry's wave; moves the rollout on first. */
  async hold(entries: readonly PlanEntry[], passProjects: ReadonlySet<string> | undefined): Promise<void> {
    const now = this.#options.clock.now();
    this.#passProjects = passProjects;
    const config = this.#config;
    if (this.#record.waves.length > 0) await this.#advance(entries, passProjects === undefined);
    const waiting: Record<string, WaitingChange> = Object.fromEntries(
      Object.entries(this.#record.waiting).filter(([, change]) => passProjects !== undefined && change.project !== undefined && !passProjects.has(change.project)),
    );
    const fresh: PlanEntry[] = [];
    // A project this pass creates is configured at once: nothing of it can be disrupted yet.
    const creating = new Set(entries.filter((e) => e.kind === 'Project' && e.action === 'create').map((e) => e.name));
    for (const entry of entries) {
      const project = projectOfEntry(entry);
      if (project === undefined) continue;
      const index = this.#waveIndex(project);
      if (this.#record.waves.length > 0) entry.wave = this.#record.waves[index]?.name ?? AFTER_EVERY_WAVE;
      if (!isChange(entry)) continue;
      const byWave = this.#heldByWave(index);
      if (byWave) {
        entry.held = { reason: 'wave', message: byWave };
        continue;
      }
      const document = config.projects.get(project);
      const classes = changeClasses(entry, document);
      const places = placementsOf(project, config, this.#options.inventory);
      // This revision's rules, and those of the Rollout as last applied that it loosened or
      // removed: the stricter wins (a change is held if either set holds it).
      const windowsOf = (list: readonly WindowRule[]) => list.filter((window) => selectsAny(window.selector, places) && window.classes.some((c) => classes.includes(c)));
      const rulesOf = (list: readonly ApprovalRule[]) =>
        list.filter((r) => (!r.classes || r.classes.some((c) => classes.includes(c))) && (!r.kinds || r.kinds.includes(entry.kind)) && selectsAny(r.selector, places));
      const windowSets = [windowsOf(config.windows), windowsOf(this.#previous?.windows ?? [])];
      const windows = windowSets.flat();
      // An approval is asked for first (so a change that also needs a window is approved before it opens).
      const current = rulesOf(config.approvals);
      const former = rulesOf(this.#previous?.approvals ?? []).filter((r) => !current.some((mine) => mine.name === r.name));
      const rules = [...current, ...former];
      // A project the selectors cannot place is held under every rule that could apply (fail
      // closed), and a window alone does not let it through: a person approves it.
      const unplaced = places === 'unknown' && (rules.length > 0 || windows.length > 0);
      if ((rules.length > 0 || unplaced) && !isApproved(this.#approvals, this.#revision, project)) {
        const names = [...new Set([...rules.map((r) => r.name), ...windows.map((window) => window.name)])];
        const notes = former.map((r) => `; ${this.#stillHolds('approval rule', r.name)}`).join('');
        const why = unplaced ? `labels unknown (removed, and its inventory record predates labels): held under ${names.join(', ')}` : `${rules[0]!.name}${notes}`;
        entry.held = { reason: 'approval', name: rules[0]?.name ?? names[0]!, message: `needs approval (${why}): reconcile approve --revision ${shortRevision(this.#revision)}${unplaced ? ` --project ${project}` : ''}` };
      } else if (!creating.has(project)) {
        // Each set holds the change while every window of it that applies is closed.
        const holding = windowSets.filter((set) => set.length > 0 && !set.some((window) => this.#window(window, now).open));
        if (holding.length > 0) {
          // The change may go once every holding set opens: the latest of their next openings.
          const openings = holding.map((set) => set.map((window) => ({ window, at: this.#window(window, now).opensAt })).filter((w) => w.at !== undefined).sort((a, b) => a.at! - b.at!)[0]);
          const opening = openings.every((w) => w !== undefined) ? openings.sort((a, b) => b!.at! - a!.at!)[0] : undefined;
          const named = opening ? `${opening.window.name} (opens ${new Date(opening.at!).toISOString()})` : holding.flat().map((window) => window.name).join(', ');
          const notes = holding.includes(windowSets[1]!) ? windowSets[1]!.map((window) => `; ${this.#stillHolds('window', window.name)}`).join('') : '';
          entry.held = { reason: 'window', name: opening?.window.name ?? holding.flat().map((window) => window.name).join(', '), message: `${classes.join(', ')}: waits for maintenance window ${named}${notes}`, ...(opening ? { until: opening.at! } : {}) };
        }
      }
      if (entry.held) {
        const reason = entry.held.reason as 'window' | 'approval';
        const before = this.#record.waiting[entry.id];
        if (!before || before.reason !== reason) fresh.push(entry);
        waiting[entry.id] = { reason, project, since: before?.reason === reason ? before.since : now, message: entry.held.message, ...(entry.held.until !== undefined ? { until: entry.held.until } : {}) };
      }
    }
    this.#record.waiting = waiting;
    const approvals = fresh.filter((e) => e.held?.reason === 'approval');
    if (approvals.length > 0) {
      this.#options.log.warn({ rollout: config.name, revision: this.#revision, entries: approvals.map((e) => e.id) }, 'approval needed: changes are held until `reconcile approve`');
      this.#emit({ type: 'approval_needed', entries: approvals.map(entryLine), projects: [...new Set(approvals.map((e) => projectOfEntry(e)!))] });
    }
    const windowed = fresh.filter((e) => e.held?.reason === 'window');
    if (windowed.length > 0) {
      this.#options.log.warn({ rollout: config.name, entries: windowed.map((e) => e.id) }, 'disruptive changes wait for their maintenance window');
      this.#emit({ type: 'change_waiting', reason: 'window', entries: windowed.map((e) => `${entryLine(e)}: ${e.held!.message}`), projects: [...new Set(windowed.map((e) => projectOfEntry(e)!))] });
    }
  }

  /** After the apply (never in a dry run): applied revisions, soaks, halts; then both records are written. */
  async record(entries: readonly PlanEntry[], outcomes: readonly ApplyOutcome[]): Promise<void> {
    const now = this.#options.clock.now();
    const byId = new Map(entries.map((e) => [e.id, e]));
    const failed = new Map<string, string>();
    /** Projects with an outcome that is not a success (failed, skipped, interrupted): not at the revision. */
    const unfinished = new Set<string>();
    const wrote = new Set<string>();
    const projectOfOutcome = (outcome: ApplyOutcome) => {
      const entry = byId.get(outcome.entryId);
      if (entry) return projectOfEntry(entry);
      // Steps of a project's apply: `Project/<name>#ready`, `Project/<name>#verify`.
      return /^Project\/([^#]+)#/.exec(outcome.entryId)?.[1];
    };
    for (const outcome of outcomes) {
      const project = projectOfOutcome(outcome);
      if (project === undefined) continue;
      if (outcome.result !== 'success') unfinished.add(project);
      if (outcome.result === 'failed' && !failed.has(project)) failed.set(project, `${outcome.entryId} failed${outcome.error ? `: ${outcome.error.type}: ${outcome.error.message}` : ''}`);
      if (outcome.result === 'success' && (outcome.action === 'create' || outcome.action === 'update' || outcome.action === 'delete')) wrote.add(project);
    }
    for (const entry of entries) {
      const project = projectOfEntry(entry);
      if (project !== undefined && entry.action === 'blocked' && !entry.observeOnly && !failed.has(project)) failed.set(project, `${entry.id} is blocked: ${entry.reason ?? 'blocked'}`);
    }
    const inPass = new Set(entries.map(projectOfEntry).filter((p): p is string => p !== undefined && this.#config.projects.has(p)));
    const waves = this.#record.waves;
    for (const project of inPass) {
      const index = this.#waveIndex(project);
      if (this.#heldByWave(index) && waves.length > 0) continue;
      const mine = entries.filter((e) => projectOfEntry(e) === project);
      const unobserved = mine.some((e) => e.reason?.startsWith('could not observe'));
      if (!failed.has(project) && !unfinished.has(project) && !unobserved && !mine.some((e) => e.held)) {
        if (this.#revisions[project]?.revision !== this.#revision) this.#revisions[project] = { revision: this.#revision, appliedAt: now };
      }
      if (wrote.has(project) && waves[index]) waves[index]!.wrote = true;
    }
    for (const name of Object.keys(this.#revisions)) if (!this.#config.projects.has(name)) delete this.#revisions[name];

    const index = this.#current();
    const wave = waves[index];
    if (wave && !this.#record.halted) {
      const members = this.#members(index);
      const failure = members.find((project) => failed.has(project));
      if (failure !== undefined && (wave.state === 'applying' || wave.state === 'soaking')) {
        this.#halt(index, `${failure}: ${failed.get(failure)}`, now);
      } else if (wave.state === 'applying' && !this.#config.elsewhere.has(index) && members.every((project) => this.#revisions[project]?.revision === this.#revision)) {
        if (wave.wrote) {
          const problems = await this.#unhealthy(index);
          if (problems.length > 0) {
            // A project may take a while to report healthy after a write (a restart, an
            // upgrade): the soak starts once it does; unhealthy for as long as a soak halts.
            wave.unhealthySince ??= now;
            if (now - wave.unhealthySince >= this.#config.soakMs) this.#halt(index, `unhealthy since the apply: ${problems.join('; ')}`, now);
            else {
              this.#recheckAt = now + Math.min(60_000, Math.max(1_000, this.#config.soakMs / 10));
              this.#options.log.warn({ rollout: this.#config.name, wave: wave.name, problems }, `rollout: wave ${wave.name} is applied but not healthy yet; its soak starts once it is`);
            }
          } else {
            delete wave.unhealthySince;
            wave.state = 'soaking';
            wave.soakUntil = now + this.#config.soakMs;
            this.#options.log.info({ rollout: this.#config.name, wave: wave.name, soakUntil: new Date(wave.soakUntil).toISOString() }, `rollout: wave ${wave.name} is applied and healthy; soaking`);
          }
        } else {
          this.#pass(index, now, 'nothing to change');
          this.#advanceNow = true;
        }
      }
    }
    await writeRollout(this.#options.state, this.#record);
    await writeProjectRevisions(this.#options.state, this.#revisions);
    await this.#recordRules(entries, failed.size === 0 && unfinished.size === 0);
  }

  /**
   * This revision's rules become the rules as last applied once the revision is applied whole:
   * a pass that held nothing, and where nothing failed, was left undone or could not be
   * observed, with no change of the revision still waiting; a pass over some projects (an
   * approval's, a window's) only when every other project is at the revision too. Until then
   * the former rules keep holding its changes. A state directory without the record gets this
   * revision's rules at once (nothing to hold by).
   */
  async #recordRules(entries: readonly PlanEntry[], succeeded: boolean): Promise<void> {
    if (this.#recorded === this.#revision) return;
    const everyProject = this.#passProjects === undefined
      || [...this.#config.projects.values()].every((project) => project.spec.policy?.suspend === true || this.#revisions[project.metadata.name]?.revision === this.#revision);
    const whole = everyProject && succeeded && Object.keys(this.#record.waiting).length === 0 && !entries.some((e) => e.held || e.reason?.startsWith('could not observe'));
    if (this.#recorded !== undefined && !whole) return;
    const config = this.#config;
    const shard = this.#options.shard?.name;
    await writeAppliedRules(this.#options.state, {
      revision: this.#revision,
      ...(this.#ordering ? { rollout: config.name, windows: config.windows, approvals: config.approvals } : { windows: [], approvals: [] }),
      ...(shard !== undefined ? { shard } : {}),
      at: this.#options.clock.now(),
    });
    if (this.#previous) this.#options.log.info({ rollout: this.#previous.rollout, revision: this.#revision }, 'rollout: the revision is applied; the rules it loosened or removed hold no more changes');
  }

  summary(): RolloutSummary {
    const waves = this.#record.waves.map((wave, index) => ({
      name: wave.name,
      state: wave.state,
      projects: this.#members(index).length,
      members: this.#members(index).sort(),
      ...(wave.state === 'soaking' && wave.soakUntil !== undefined ? { soakUntil: wave.soakUntil } : {}),
      ...(wave.reason ? { reason: wave.reason } : {}),
    }));
    const waiting = Object.entries(this.#record.waiting).map(([id, change]) => ({ id, ...change }));
    const candidates: Array<NonNullable<RolloutSummary['next']>> = [];
    if (!this.#record.halted) {
      const current = this.#record.waves[this.#current()];
      if (current?.state === 'soaking' && current.soakUntil !== undefined) candidates.push({ at: current.soakUntil, reason: 'soak' });
      if (this.#advanceNow) candidates.push({ at: this.#options.clock.now(), reason: 'wave' });
      if (this.#recheckAt !== undefined) candidates.push({ at: this.#recheckAt, reason: 'wave' });
    }
    const opening = waiting.filter((w) => w.reason === 'window' && w.until !== undefined).sort((a, b) => a.until! - b.until!)[0];
    if (opening) {
      const projects = [...new Set(waiting.filter((w) => w.reason === 'window' && w.until === opening.until && w.project).map((w) => w.project!))];
      candidates.push({ at: opening.until!, reason: 'window', projects });
    }
    const next = candidates.sort((a, b) => a.at - b.at)[0];
    return {
      name: this.#config.name,
      revision: this.#revision,
      waves,
      ...(this.#record.halted ? { halted: this.#record.halted } : {}),
      waiting,
      revisions: Object.fromEntries(Object.entries(this.#revisions).filter(([name]) => this.#config.projects.has(name))),
      ...(next ? { next } : {}),
      soakMs: this.#config.soakMs,
      events: this.#events,
    };
  }
}
