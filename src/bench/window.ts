/**
 * The largest number of events in any window of `windowMs` starting at any instant.
 * A window [t, t + windowMs) holds the events at or after t and before t + windowMs; the
 * maximum is reached with t at an event, so two pointers over the sorted times suffice.
 */
export function maxInAnyWindow(times: readonly number[], windowMs: number): number {
  if (!(windowMs > 0)) throw new TypeError(`Expected \`windowMs\` to be a number > 0, got \`${windowMs}\``);
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
