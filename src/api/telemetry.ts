import type { Priority } from './request.js';

/**
 * Hooks the API client calls as it works; the daemon implements them with prom-client
 * (metric names in docs/operations.md). A no-op implementation serves one-shot runs and tests.
 */
export interface ApiTelemetry {
  /** A request finished (any outcome). `route` is the template; `code` the status or `error`. */
  requestFinished(event: { method: string; route: string; code: string; durationSeconds: number }): void;
  /** A 429 was received. */
  rateLimited(): void;
  /** The budget changed: requests that may still be sent in the current window, and the effective limit. */
  budget(remaining: number, limit: number): void;
  /** Requests waiting in the queue, per priority. */
  queueDepth(priority: Priority, depth: number): void;
}

export const noopTelemetry: ApiTelemetry = {
  requestFinished: () => undefined,
  rateLimited: () => undefined,
  budget: () => undefined,
  queueDepth: () => undefined,
};
