export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** How many 429 blocks one call waits out before it fails with RateLimitedError. */
  maxRateLimitRetries: number;
}

const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000, maxRateLimitRetries: 5 };

export function validateRetryPolicy(input: Partial<RetryPolicy> | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== undefined)) } as RetryPolicy;
  const check = (name: keyof RetryPolicy, min: number, whole: boolean) => {
    const value = policy[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (whole && !Number.isInteger(value))) {
      throw new TypeError(`Expected \`retry.${name}\` to be a ${whole ? 'whole ' : 'finite '}number >= ${min}, got \`${String(value)}\` (${typeof value})`);
    }
  };
  check('maxAttempts', 1, true);
  check('baseDelayMs', 0, false);
  check('maxDelayMs', 0, false);
  check('maxRateLimitRetries', 0, true);
  return policy;
}

/**
 * Capped exponential backoff with full jitter: a uniform delay in [0, min(max, base * 2^n)).
 * Full jitter spreads the retries of many callers hit by one outage across the whole interval.
 */
export function backoffDelay(policy: RetryPolicy, retryNumber: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retryNumber - 1));
  return Math.floor(random() * ceiling);
}
