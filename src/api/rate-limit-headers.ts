/** What the service says about the user's limit on one answer (`X-RateLimit-*`). */
export interface RateLimitHeaders {
  limit?: number;
  remaining?: number;
  /** Milliseconds until the current window resets (the header counts seconds). */
  resetMs?: number;
}

function numberHeader(headers: Record<string, string>, name: string): number | undefined {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const value = Number(raw.trim());
  // A header we cannot read is treated as absent: the budget then falls back to its own window.
  return raw.trim() !== '' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Reads the rate-limit headers; header names must already be lower-case. */
export function parseRateLimitHeaders(headers: Record<string, string>): RateLimitHeaders {
  const result: RateLimitHeaders = {};
  const limit = numberHeader(headers, 'x-ratelimit-limit');
  const remaining = numberHeader(headers, 'x-ratelimit-remaining');
  // Whole seconds are too coarse for a scaled window; a millisecond variant wins when present.
  const resetMs = numberHeader(headers, 'x-ratelimit-reset-ms');
  const reset = numberHeader(headers, 'x-ratelimit-reset');
  if (limit !== undefined) result.limit = Math.floor(limit);
  if (remaining !== undefined) result.remaining = Math.floor(remaining);
  if (resetMs !== undefined) result.resetMs = Math.ceil(resetMs);
  else if (reset !== undefined) result.resetMs = Math.ceil(reset * 1000);
  return result;
}
