// "finished 12 of 40 changes": how far a long apply is, for the person watching it. Waits for
// new projects and rate limits say what they wait for; this says how much is left overall.
import type { Clock } from '../util/clock.js';
import { progressGate } from '../util/progress.js';
import type { Logger } from './types.js';

/** An apply of this many changes or fewer is over before anyone wonders how far it is. */
export const APPLY_PROGRESS_MIN_CHANGES = 5;

/**
 * Counts finished changes (`finish` once per change, whatever its result) and logs an info line
 * at most once per progress interval of clock time, the first one interval after the apply
 * began. No line for the last change: the pass's own summary follows it. `total` is the count
 * planned when the apply began; a project replanned once it is ready may add changes, so the
 * line never shows fewer in total than finished.
 */
export function applyProgress(clock: Clock, total: number, log: Logger): (result: 'success' | 'failed' | 'skipped' | 'interrupted') => void {
  const due = progressGate(clock);
  // The gate opens at its first call: spending that call now makes the first line wait an interval.
  due();
  let finished = 0;
  let unsuccessful = 0;
  return (result) => {
    finished += 1;
    if (result !== 'success') unsuccessful += 1;
    const of = Math.max(total, finished);
    if (of <= APPLY_PROGRESS_MIN_CHANGES || finished >= of || !due()) return;
    const problems = unsuccessful > 0 ? ` (${unsuccessful} failed or skipped)` : '';
    log.info({ progress: 'apply', finished, total: of, unsuccessful }, `finished ${finished} of ${of} changes${problems}`);
  };
}
