import type { Clock } from '../util/clock.js';
import type { CronTrigger } from './cron-trigger.js';

interface SweepPacingInput {
  /** Projects in the fleet: the slice size and the even spacing derive from it. */
  fleet: number;
  /** Length of the resync interval, ms. */
  intervalMs: number;
  /** Estimated requests one project's re-check costs. */
  readsPerProject: number;
  /** The effective request budget. */
  budget: { limit: number; windowMs: number };
  /** Share of the budget drift re-checks may use (the rest stays free for writes). */
  driftShare: number;
  /** Smallest spacing between two slices, ms: bounds how many passes (each with its project list call) a sweep makes. */
  minSpacingMs: number;
}

interface SweepPacing {
  /** Projects per slice (one pass each). */
  sliceSize: number;
  /** Time from the start of one slice to the start of the next, ms. */
  spacingMs: number;
  /** True when the budget cannot cover every due project within one interval (observation ages will grow). */
  overBudget: boolean;
}

/**
 * Spreads the due projects over the interval: evenly when the budget's drift share covers them,
 * else at the pace the budget allows (the sweep then takes longer than one interval, and the
 * observation ages say so).
 */
export function planSweepPacing(input: SweepPacingInput): SweepPacing {
  const { fleet, intervalMs, readsPerProject, budget, driftShare, minSpacingMs } = input;
  if (fleet <= 0) return { sliceSize: 0, spacingMs: intervalMs, overBudget: false };
  const maxSlices = Math.max(1, Math.floor(intervalMs / Math.max(1, minSpacingMs)));
  const sliceSize = Math.max(1, Math.ceil(fleet / maxSlices));
  const slices = Math.ceil(fleet / sliceSize);
  // One extra read per slice: each pass starts with a project list.
  const sliceReads = sliceSize * readsPerProject + 1;
  const readsPerMs = (budget.limit * driftShare) / budget.windowMs;
  const budgetSpacing = sliceReads / readsPerMs;
  const evenSpacing = intervalMs / slices;
  return {
    sliceSize,
    spacingMs: Math.max(evenSpacing, budgetSpacing),
    overBudget: budgetSpacing * slices > intervalMs,
  };
}

/** What both re-check schedulers (a cron sweep, continuous) work with. */
export interface RecheckSource {
  clock: Clock;
  /** All projects of the current desired state. */
  projects(): string[];
  /** Re-checks these projects (one pass); resolves when done, never rejects. */
  runSlice(projects: string[], signal: AbortSignal): Promise<void>;
  budget(): { limit: number; windowMs: number };
  readsPerProject(): number;
  /** A project already in a pass is being observed right now: it is not re-checked in this slice. */
  isBusy?(project: string): boolean;
  /** Share of the budget re-checks may use while writes use less than the rest (default 0.8). */
  driftShare?: number;
  /** Smallest time between two re-check passes (default 5 s). */
  minSpacingMs?: number;
}

interface DriftSweepOptions extends RecheckSource {
  trigger: CronTrigger;
  onPacing?(pacing: SweepPacing & { due: number }): void;
}

/**
 * The drift re-check schedule: each cron tick queues every project; a paced worker re-checks
 * them slice by slice, so the reads of a sweep are spread over the interval instead of arriving
 * in one burst that would crowd out writes.
 */
export class DriftSweep {
  readonly #options: DriftSweepOptions;
  readonly #due: string[] = [];
  readonly #controller = new AbortController();
  #running: Promise<void> | undefined;
  #started = false;
  /** Earliest start of the next slice: the pace holds across ticks, not only within one sweep. */
  #nextSliceAt = Number.NEGATIVE_INFINITY;

  constructor(options: DriftSweepOptions) {
    const share = options.driftShare ?? 0.8;
    if (!(share > 0 && share <= 1)) {
      throw new TypeError(`Expected \`driftShare\` to be a number in (0, 1], got \`${share}\` (${typeof share})`);
    }
    this.#options = { ...options, driftShare: share, minSpacingMs: options.minSpacingMs ?? 5_000 };
  }

  start(): void {
    if (this.#started || this.#controller.signal.aborted) return;
    this.#started = true;
    this.#options.trigger.start(() => this.tick());
  }

  /** A scheduled re-check of the whole fleet: queues every project not already waiting. */
  tick(): void {
    this.enqueue(this.#options.projects());
  }

  /** Queues projects for a re-check (after a revision's write pass: the projects it did not touch). */
  enqueue(projects: Iterable<string>): void {
    if (this.#controller.signal.aborted) return;
    for (const project of projects) if (!this.#due.includes(project)) this.#due.push(project);
    if (this.#due.length > 0 && !this.#running) {
      this.#running = this.#work().finally(() => {
        this.#running = undefined;
      });
    }
  }

  /** Projects waiting for their re-check. */
  due(): string[] {
    return [...this.#due];
  }

  /** Stops the schedule and the worker; resolves when the slice in flight has returned. */
  async stop(): Promise<void> {
    this.#options.trigger.stop();
    this.#controller.abort(new Error('drift sweep stopped'));
    this.#due.length = 0;
    await this.#running;
  }

  /** Resolves when no work is waiting or running (tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #work(): Promise<void> {
    const { clock } = this.#options;
    const signal = this.#controller.signal;
    while (this.#due.length > 0 && !signal.aborted) {
      const wait = this.#nextSliceAt - clock.now();
      if (wait > 0) {
        try {
          await clock.sleep(wait, signal);
        } catch {
          break;
        }
      }
      if (this.#options.isBusy) {
        const free = this.#due.filter((project) => !this.#options.isBusy!(project));
        this.#due.splice(0, this.#due.length, ...free);
      }
      if (this.#due.length === 0 || signal.aborted) break;
      // Planned before each slice: the budget, the estimate and the fleet all move.
      const pacing = planSweepPacing({
        fleet: Math.max(this.#due.length, this.#options.projects().length),
        intervalMs: this.#options.trigger.intervalMs(),
        readsPerProject: this.#options.readsPerProject(),
        budget: this.#options.budget(),
        driftShare: this.#options.driftShare!,
        minSpacingMs: this.#options.minSpacingMs!,
      });
      this.#options.onPacing?.({ ...pacing, due: this.#due.length });
      const slice = this.#due.splice(0, pacing.sliceSize);
      this.#nextSliceAt = clock.now() + pacing.spacingMs;
      await this.#options.runSlice(slice, signal);
    }
  }
}
