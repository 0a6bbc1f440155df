// Bench scenario for the request budget: against the emulator with a scaled rate window, a
// workload larger than the budget (a whole number of windows' worth, mixed priorities and
// projects, all waiting from the start) goes through the real client over loopback HTTP.
import { startEmulator } from '../emulator/index.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { httpTransport, DEFAULT_TIMEOUTS, type Transport } from '../api/transport.js';
import type { Priority } from '../api/request.js';
import { maxInAnyWindow } from './window.js';

interface BenchBudgetOptions {
  /** Time scale: the minute of the service becomes 60 s / scale (default 20: three-second windows). */
  scale?: number;
  /** Windows' worth of work to send (default 6). */
  windows?: number;
}

const PRIORITIES: readonly Priority[] = ['write', 'verify', 'drift'];

/**
 * Returns:
 * - `requestsSent`: sends, retries included;
 * - `maxWindowOverBudget`: the largest count in any window (client send times) / the budget, must be <= 1.00;
 * - `maxWindowOverBudgetAtService`: the same by the emulator's arrival times (loopback jitter included);
 * - `budgetUsedWhileWaiting`: how fully the budget was used while work waited (target >= 0.95).
 *   Work waits from the start to the last send, so each send past the first window's worth could
 *   have gone as soon as the send `budget` places before it left the window: the figure is the
 *   mean of windowMs / (s[i] - s[i - budget]) over those sends (1.00: no place left unused);
 * - `rateLimited`: 429 answers received (target 0).
 */
export async function benchBudget(options: BenchBudgetOptions = {}): Promise<Record<string, number>> {
  const scale = options.scale ?? 20;
  const windows = options.windows ?? 6;
  if (!Number.isFinite(scale) || scale <= 0) throw new TypeError(`Expected \`scale\` to be a finite number > 0, got \`${scale}\` (${typeof scale})`);
  if (!Number.isInteger(windows) || windows < 2) throw new TypeError(`Expected \`windows\` to be a whole number >= 2, got \`${windows}\``);
  const windowMs = 60_000 / scale;
  // The service's 60 per minute, and the client's default budget of 50 per minute, both scaled.
  const budget = { limit: 50, windowMs };
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 60, windowMs } });
  const sendTimes: number[] = [];
  const inner = httpTransport({ origin: new URL(emulator.url).origin, timeouts: DEFAULT_TIMEOUTS, connections: 8 });
  const transport: Transport = {
    send(request) {
      sendTimes.push(Date.now());
      return inner.send(request);
    },
    close: () => inner.close(),
  };
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: budget, concurrency: 6, transport });
  try {
    const total = budget.limit * windows;
    const calls = Array.from({ length: total }, (_, i) =>
      client.api.listAllOrganizations({ priority: PRIORITIES[i % PRIORITIES.length]!, project: `project-${i % 10}` }),
    );
    const settled = await Promise.allSettled(calls);
    const failed = settled.filter((s) => s.status === 'rejected').length;
    const stats = client.stats();
    const sorted = [...sendTimes].sort((a, b) => a - b);
    let used = 0;
    for (let i = budget.limit; i < sorted.length; i++) used += windowMs / Math.max(windowMs, sorted[i]! - sorted[i - budget.limit]!);
    const arrivals = emulator.requests().filter((e) => e.path.startsWith('/v1/')).map((e) => e.time);
    return {
      requestsSent: stats.sent,
      failedCalls: failed,
      maxWindowOverBudget: round(maxInAnyWindow(sendTimes, windowMs) / budget.limit),
      maxWindowOverBudgetAtService: round(maxInAnyWindow(arrivals, windowMs) / budget.limit),
      budgetUsedWhileWaiting: round(used / Math.max(1, sorted.length - budget.limit)),
      rateLimited: stats.rateLimited,
      windowMs,
      budget: budget.limit,
    };
  } finally {
    await client.close();
    await emulator.close();
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
