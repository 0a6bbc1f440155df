// The outcomes of one pass's apply, owned by one object: every entry run or skipped, every step
// (the readiness wait, the read-back), what failed (so that what depends on it is skipped), the
// log line of each, and the verify step's judgement of a write that still differs.
import type { Clock } from '../util/clock.js';
import { applyProgress } from './apply-progress.js';
import { describeError } from './describe-error.js';
import { isChange } from './summary.js';
import type { ApplyOutcome, Logger, PlanEntry } from './types.js';

/** The log messages of an outcome, by what it ran. */
const STEP_WORDS = {
  wait: { success: 'project ready', failed: 'readiness wait failed', skipped: 'readiness wait skipped', interrupted: 'readiness wait interrupted' },
  verify: { success: 'writes verified', failed: 'verification failed', skipped: 'verification skipped', interrupted: 'verification interrupted' },
  change: { success: 'change applied', failed: 'change failed', skipped: 'change skipped', interrupted: 'change interrupted' },
} as const;

class BlockedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'Blocked';
  }
}

class PassAbortedError extends Error {
  constructor() {
    super('the pass was stopped before this change');
    this.name = 'PassAbortedError';
  }
}

/** What an apply wrote and the read-back shows still differing: the pass did not do its work. */
class StillDiffersError extends Error {
  constructor(fields: string[]) {
    super(`still differs after the apply${fields.length ? ` (${fields.join(', ')})` : ''}`);
    this.name = 'StillDiffersError';
  }
}

type Step = Pick<ApplyOutcome, 'entryId' | 'kind' | 'action'>;

export class PassOutcomes {
  readonly list: ApplyOutcome[] = [];
  readonly #failed = new Set<string>();
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #signal: AbortSignal | undefined;
  readonly #progress: (result: ApplyOutcome['result']) => void;

  /** `changes`: how many changes the apply is to run, for its progress lines. */
  constructor(options: { clock: Clock; log: Logger; changes: number; signal?: AbortSignal }) {
    this.#clock = options.clock;
    this.#log = options.log;
    this.#signal = options.signal;
    this.#progress = applyProgress(options.clock, options.changes, options.log);
  }

  /** The entry or step did not succeed (failed or skipped): what depends on it is skipped. */
  failed(id: string): boolean {
    return this.#failed.has(id);
  }

  /**
   * Runs one plan entry through `apply`, or records why it is not run (blocked, waiting on an
   * entry that did not succeed, the pass stopped, nothing to apply it). A `noop`, an entry
   * under observe and one the rollout holds are no outcome at all. True when a write was applied.
   */
  async run(entry: PlanEntry, apply: (() => Promise<void>) | undefined): Promise<boolean> {
    if (entry.observeOnly || entry.action === 'noop' || entry.held) return false;
    const started = this.#clock.now();
    const step = { entryId: entry.id, kind: entry.kind, action: entry.action };
    if (entry.action === 'blocked') return this.#record(step, 'skipped', started, new BlockedError(entry.reason ?? 'blocked'));
    const waitingOn = (entry.dependsOn ?? []).filter((id) => this.#failed.has(id));
    if (waitingOn.length > 0) return this.#record(step, 'skipped', started, new Error(`depends on ${waitingOn.join(', ')}, which did not succeed`));
    if (this.#signal?.aborted) return this.#record(step, 'skipped', started, new PassAbortedError());
    if (!apply) return this.#record(step, 'skipped', started, new Error('nothing can apply this change'));
    try {
      await apply();
      return this.#record(step, 'success', started) && isChange(entry);
    } catch (error) {
      // Stopped by the process's own stop (a signal, a lost lock): not a failure of the change.
      return this.#record(step, this.#signal?.aborted ? 'interrupted' : 'failed', started, error);
    }
  }

  /** Records the entries as skipped because `id` did not succeed. */
  async skipAll(entries: readonly PlanEntry[], id: string): Promise<void> {
    for (const entry of entries) await this.run({ ...entry, dependsOn: [...new Set([...(entry.dependsOn ?? []), id])] }, undefined);
  }

  /**
   * Runs a step of the apply that writes nothing: the wait until a project is ready (`wait`) or
   * the read-back after its writes (`verify`). An outcome of its own, never a change. True when it succeeded.
   */
  async step(id: string, action: 'wait' | 'verify', run: () => Promise<void>): Promise<boolean> {
    const started = this.#clock.now();
    const step = { entryId: id, kind: 'Project' as const, action };
    if (this.#signal?.aborted) return this.#record(step, 'skipped', started, new PassAbortedError());
    try {
      await run();
      return this.#record(step, 'success', started);
    } catch (error) {
      return this.#record(step, this.#signal?.aborted ? 'interrupted' : 'failed', started, error);
    }
  }

  /**
   * The verify step's judgement: a write this pass applied that the read-back (`verified`) still
   * shows as a difference did not do its work. Its outcome and the read-back's (`verifyId`) fail.
   */
  stillDiffering(verified: readonly PlanEntry[], verifyId: string): void {
    const differing: string[] = [];
    for (const after of verified) {
      if (!isChange(after) || after.pending) continue;
      const outcome = this.list.find((o) => o.entryId === after.id && o.result === 'success');
      if (!outcome) continue;
      outcome.result = 'failed';
      outcome.error = describeError(new StillDiffersError(after.changes.map((c) => c.path)));
      this.#failed.add(after.id);
      differing.push(after.id);
      this.#log.error({ entry: after.id, fields: after.changes.map((c) => c.path) }, 'change failed: it still differs after the apply');
    }
    const verify = differing.length > 0 ? this.list.find((o) => o.entryId === verifyId && o.result === 'success') : undefined;
    if (verify) {
      verify.result = 'failed';
      verify.error = describeError(new StillDiffersError(differing));
    }
  }

  /** Records one outcome and logs it; true when it succeeded. */
  #record(step: Step, result: ApplyOutcome['result'], started: number, error?: unknown): boolean {
    const outcome: ApplyOutcome = { ...step, result, durationMs: this.#clock.now() - started };
    if (error !== undefined) outcome.error = describeError(error);
    if (result !== 'success') this.#failed.add(step.entryId);
    this.list.push(outcome);
    const fields = { entry: step.entryId, action: step.action, result, ...(outcome.error ? { error: outcome.error.message } : {}) };
    // A wait or a read-back is a step, not a change: its lines say so.
    const words = STEP_WORDS[step.action as keyof typeof STEP_WORDS] ?? STEP_WORDS.change;
    if (result === 'failed') this.#log.error(fields, words.failed);
    else if (result === 'interrupted') this.#log.info(fields, words.interrupted);
    // Changes the stopping process never started: planned again by the next pass, as the interrupted one.
    else if (result === 'skipped' && error instanceof PassAbortedError) this.#log.info(fields, words.skipped);
    else if (result === 'skipped') this.#log.warn(fields, words.skipped);
    else this.#log.info(fields, words.success);
    if (step.action !== 'wait' && step.action !== 'verify') this.#progress(result);
    return result === 'success';
  }
}
