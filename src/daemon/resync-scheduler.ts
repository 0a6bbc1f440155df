import type { RecheckSource } from './drift-sweep.js';
import type { Clock } from '../util/clock.js';

/** What the daemon needs of a drift re-check schedule, cron (DriftSweep) or continuous. */
export interface ResyncSchedule {
  start(): void;
  /** A re-check of the whole fleet, now (cron: queues every project). */
  tick(): void;
  /** Asks for a re-check of these projects (after a revision's write pass). */
  enqueue(projects: Iterable<string>): void;
  /** Projects waiting for a queued re-check. */
  due(): string[];
  stop(): Promise<void>;
  /** Resolves when no queued work is waiting or running (tests). */
  idle(): Promise<void>;
}

interface FreshnessPlanInput {
  /** Projects in the fleet. */
  fleet: number;
  /** Projects whose last observation found drift: each is re-checked twice per cycle. */
  drifted: number;
  /** Estimated requests one project's re-check costs. */
  readsPerProject: number;
  /** Spare requests per ms: the budget less what writes need. */
  spareRate: number;
  /** Smallest time between two re-check passes, ms (each pass starts with a project list). */
  minSpacingMs: number;
  /**
   * How long a re-check pass takes, from its start until its observations are recorded (at its
   * end), ms: measured on the passes so far; 0 when none was (a pass that takes no time).
   */
  sliceMs?: number;
}

export interface FreshnessPlan {
  /** Projects per re-check pass. */
  sliceSize: number;
  /** Reads of one full cycle: its slices' projects (every project once, drifted ones twice) plus each pass's project list. */
  sweepReads: number;
  /** The floor of the largest observation age: sweepReads ÷ spare rate, ms. */
  boundMs: number;
}

/**
 * The smallest slice whose pass is at least `minSpacingMs` of spare budget apart, so a large
 * budget does not turn into a stream of one-project passes that each pay for a project list.
 */
export function planFreshness(input: FreshnessPlanInput): FreshnessPlan {
  const { fleet, drifted, readsPerProject, spareRate, minSpacingMs } = input;
  const checks = fleet + Math.min(drifted, fleet);
  if (checks <= 0 || !(spareRate > 0)) return { sliceSize: 1, sweepReads: 0, boundMs: checks <= 0 ? 0 : Number.POSITIVE_INFINITY };
  const smallest = Math.min(checks, Math.max(1, Math.ceil((minSpacingMs * spareRate - 1) / readsPerProject)));
  // Slices of one size, oldest first: a project waits for as many slices as the cycle has, so
  // the checks are spread evenly over the fewest slices of at least the smallest size (slices
  // of 9 over 30 projects would leave some projects four slices apart, not three and a third).
  const slices = Math.max(1, Math.floor(checks / smallest));
  const sliceSize = Math.ceil(checks / slices);
  const sweepReads = slices * (sliceSize * readsPerProject + 1);
  // A pass's observations count from its end: the oldest project's age reaches a whole cycle
  // plus the pass that re-observes it; and a pass that takes longer than its share of the
  // budget stretches the cycle by the difference.
  const sliceMs = Math.max(0, input.sliceMs ?? 0);
  const paceMs = (sliceSize * readsPerProject + 1) / spareRate;
  const lagMs = sliceMs > 0 ? sliceMs + slices * Math.max(0, sliceMs - paceMs) : 0;
  return { sliceSize, sweepReads, boundMs: sweepReads / spareRate + lagMs };
}

/** Re-check passes whose duration the plan remembers (their upper median counts). */
const SLICE_DURATIONS = 8;

interface ContinuousResyncOptions extends RecheckSource {
  /** Called with each new plan (the stated bound). */
  onPlan?(plan: FreshnessPlan): void;
}

/**
 * Continuous drift checking: spends the drift share of the budget on re-observing projects,
 * oldest observation first, one slice per its share of spare requests. Every project is then
 * re-observed once per cycle of `sweepReads ÷ spare rate`, which with the time a slice's pass
 * takes (its observations count from its end) is the floor of the largest observation age; a project whose last observation found drift counts as half a cycle older,
 * so it is checked again sooner (and the cycle counts it twice).
 */
export class ContinuousResync implements ResyncSchedule {
  readonly #options: ContinuousResyncOptions;
  readonly #controller = new AbortController();
  readonly #observedAt = new Map<string, number>();
  readonly #drifted = new Set<string>();
  #running: Promise<void> | undefined;
  #slice: Promise<void> | undefined;
  #plan: FreshnessPlan | undefined;
  /** Durations of the last re-check passes, ms. */
  readonly #sliceDurations: number[] = [];

  constructor(options: ContinuousResyncOptions) {
    const share = options.driftShare ?? 0.8;
    if (!(share > 0 && share <= 1)) {
      throw new TypeError(`Expected \`driftShare\` to be a number in (0, 1], got \`${share}\` (${typeof share})`);
    }
    this.#options = { ...options, driftShare: share, minSpacingMs: options.minSpacingMs ?? 5_000 };
  }

  start(): void {
    if (this.#running || this.#controller.signal.aborted) return;
    this.#running = this.#work();
  }

  /** The loop already covers every project: an extra full sweep would only delay the oldest. */
  tick(): void {}

  /** Same: the projects a revision did not touch come up at their turn. */
  enqueue(): void {}

  due(): string[] {
    return [];
  }

  /** Records that projects were observed at `at` (by any pass) and whether each was found drifted. */
  observed(projects: Iterable<string>, at: number, drifted: ReadonlySet<string> = new Set()): void {
    for (const project of projects) {
      this.#observedAt.set(project, Math.max(at, this.#observedAt.get(project) ?? Number.NEGATIVE_INFINITY));
      if (drifted.has(project)) this.#drifted.add(project);
      else this.#drifted.delete(project);
    }
  }

  /** The current plan (its boundMs is the stated floor), after the first slice. */
  plan(): FreshnessPlan | undefined {
    return this.#plan;
  }

  /**
   * Re-check requests per ms: the drift share of the budget. Writes are not taken off it: they
   * go ahead of re-check reads in the client's queue, whose window keeps the sum within the
   * budget, and the delay they cause is added to the stated bound by the daemon.
   */
  spareRate(_now: number): number {
    const { limit, windowMs } = this.#options.budget();
    return (limit * this.#options.driftShare!) / windowMs;
  }

  async stop(): Promise<void> {
    this.#controller.abort(new Error('drift re-checks stopped'));
    await this.#running;
  }

  async idle(): Promise<void> {
    await this.#slice;
  }

  async #work(): Promise<void> {
    const { clock } = this.#options;
    const signal = this.#controller.signal;
    let nextAt = clock.now();
    while (!signal.aborted) {
      const wait = nextAt - clock.now();
      if (wait > 0) {
        try {
          await clock.sleep(wait, signal);
        } catch {
          break;
        }
      }
      const now = clock.now();
      const fleet = this.#options.projects();
      const known = new Set(fleet);
      for (const project of [...this.#observedAt.keys()]) if (!known.has(project)) this.#observedAt.delete(project);
      for (const project of [...this.#drifted]) if (!known.has(project)) this.#drifted.delete(project);
      const spareRate = this.spareRate(now);
      const readsPerProject = this.#options.readsPerProject();
      // The upper median of the last passes: one pass held back behind writes does not stretch
      // the plan for the next eight (the catch-up below covers the ages it delayed).
      const durations = [...this.#sliceDurations].sort((a, b) => a - b);
      const sliceMs = durations.length > 0 ? durations[Math.floor(durations.length / 2)]! : 0;
      const planned = planFreshness({ fleet: fleet.length, drifted: this.#drifted.size, readsPerProject, spareRate, minSpacingMs: this.#options.minSpacingMs!, sliceMs });
      // A shorter cycle shortens the ages only as they catch up with it: each project is
      // re-observed at its turn in the oldest-first order, and may be older by then than the
      // new cycle says (projects observed under a longer plan, or delayed by writes).
      const catchUp = this.#catchUpMs(fleet, planned, now, readsPerProject, spareRate, sliceMs);
      const plan = catchUp > planned.boundMs ? { ...planned, boundMs: catchUp } : planned;
      this.#plan = plan;
      this.#options.onPlan?.(plan);
      const slice = this.#pick(fleet, plan);
      if (slice.length === 0 || !Number.isFinite(plan.boundMs)) {
        nextAt = now + this.#options.minSpacingMs!;
        continue;
      }
      // Paced by the slice's own cost, so a cycle over the fleet takes exactly boundMs.
      nextAt = now + (slice.length * readsPerProject + 1) / spareRate;
      this.#slice = this.#options.runSlice(slice, signal);
      await this.#slice;
      this.#slice = undefined;
      this.#sliceDurations.push(clock.now() - now);
      if (this.#sliceDurations.length > SLICE_DURATIONS) this.#sliceDurations.shift();
    }
  }

  /** The largest age any observed project reaches by its turn in the order slices take them, ms. */
  #catchUpMs(fleet: string[], plan: FreshnessPlan, now: number, readsPerProject: number, spareRate: number, sliceMs: number): number {
    const paceMs = (plan.sliceSize * readsPerProject + 1) / spareRate;
    let worst = 0;
    this.#ordered(fleet, plan).forEach((project, rank) => {
      const at = this.#observedAt.get(project);
      if (at === undefined) return;
      worst = Math.max(worst, now - at + Math.floor(rank / plan.sliceSize) * paceMs + sliceMs);
    });
    return worst;
  }

  #ordered(fleet: string[], plan: FreshnessPlan): string[] {
    const urgency = (project: string) =>
      (this.#observedAt.get(project) ?? Number.NEGATIVE_INFINITY) - (this.#drifted.has(project) ? plan.boundMs / 2 : 0);
    return [...fleet].sort((a, b) => urgency(a) - urgency(b) || (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Oldest observation first (never observed: first of all); drift found last time counts half a cycle older. */
  #pick(fleet: string[], plan: FreshnessPlan): string[] {
    return this.#ordered(fleet, plan)
      .filter((project) => !this.#options.isBusy?.(project))
      .slice(0, plan.sliceSize);
  }
}
