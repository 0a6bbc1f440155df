/** What the service says about a limit on one answer (`X-RateLimit-*`, `Retry-After`). */
export interface RateLimitHeaders {
  limit?: number;
  remaining?: number;
  /**
   * Milliseconds to wait before the limit has room again: the window's reset, or a 429's
   * `Retry-After` when that is longer. Never above the cap the caller gave.
   */
  resetMs?: number;
}

// Counts above this are not a limit any service announces: a header we cannot believe.
const MAX_COUNT = 1_000_000;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;

function numberHeader(headers: Record<string, string>, name: string, max: number): number | undefined {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const text = raw.trim();
  // Non-negative decimal numbers only: `Number` would also take `0x10`, `-5` and `Infinity`.
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  // A header we cannot read is treated as absent: the budget then falls back to its own window.
  return Number.isFinite(value) && value <= max ? value : undefined;
}

/**
 * `Retry-After`: delta-seconds or an HTTP date. A date in the past means now; one we cannot
 * read is absent.
 */
function retryAfterMs(headers: Record<string, string>, now: number): number | undefined {
  const raw = headers['retry-after']?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (DECIMAL.test(raw)) {
    const seconds = Number(raw);
    return Number.isFinite(seconds) ? seconds * 1000 : undefined;
  }
  // Only the HTTP date format itself: `Date.parse` alone takes `-5` or `12abc` for dates.
  if (!HTTP_DATE.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** The cap when the caller names none: two of the service's one-minute windows. */
const DEFAULT_MAX_WAIT_MS = 120_000;

interface ParseOptions {
  /**
   * The longest wait any header may impose. A larger value (a misbehaving proxy, `1e300`) is
   * cut to this, so no answer can stall the client for good.
   */
  maxWaitMs?: number;
  /** For a `Retry-After` HTTP date (default: the system clock). */
  now?: number;
}

/** Reads the rate-limit headers; header names must already be lower-case. */
export function parseRateLimitHeaders(headers: Record<string, string>, options: ParseOptions = {}): RateLimitHeaders {
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  if (!(maxWaitMs >= 0) || !Number.isFinite(maxWaitMs)) {
    throw new TypeError(`Expected \`maxWaitMs\` to be a finite number >= 0, got \`${maxWaitMs}\``);
  }
  const result: RateLimitHeaders = {};
  const limit = numberHeader(headers, 'x-ratelimit-limit', MAX_COUNT);
  const remaining = numberHeader(headers, 'x-ratelimit-remaining', MAX_COUNT);
  // Whole seconds are too coarse for a scaled window; a millisecond variant wins when present.
  // Values past the cap are read as the cap (they still say "wait"), never as absent.
  const resetMs = numberHeader(headers, 'x-ratelimit-reset-ms', Number.MAX_VALUE);
  const reset = numberHeader(headers, 'x-ratelimit-reset', Number.MAX_VALUE);
  if (limit !== undefined && limit >= 1) result.limit = Math.floor(limit);
  if (remaining !== undefined) result.remaining = Math.floor(remaining);
  let wait = resetMs ?? (reset === undefined ? undefined : reset * 1000);
  const retry = retryAfterMs(headers, options.now ?? Date.now());
  if (retry !== undefined) wait = Math.max(wait ?? 0, retry);
  if (wait !== undefined) result.resetMs = Math.min(maxWaitMs, Math.ceil(wait));
  return result;
}
