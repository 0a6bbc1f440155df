// How long the requests a pass still has to send take at a budget, said before the wait: the
// reads of a plan once the fleet is observed ("402 reads at 15/60s: about 27 min"), and, in a
// pull request's plan, the apply's requests at the daemon's budget with the rollout's soaks;
// approvals and maintenance windows are named waits with no time put on them (a person or a
// calendar decides those).
import type { RateSpec } from '../util/rate.js';
import { isChange } from './summary.js';
import type { PassResult } from './types.js';

/** `15/60s`: a budget as `--rate-limit` spells it. */
export function rateText(rate: RateSpec): string {
  const seconds = rate.windowMs / 1000;
  return `${rate.limit}/${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
}

/** Time to send `requests` at a budget's sustained rate (its limit per window). */
export function sendingMs(requests: number, rate: RateSpec): number {
  return (Math.max(0, requests) * rate.windowMs) / rate.limit;
}

/** `under a minute`, `about 27 min`, `about 2 h 5 min`: a duration to plan around, not a promise. */
export function aboutDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `about ${minutes} min`;
  return `about ${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `402 reads at 15/60s: about 27 min`. */
export function readsForecast(reads: number, rate: RateSpec): string {
  return `${plural(reads, 'read')} at ${rateText(rate)}: ${aboutDuration(sendingMs(reads, rate))}`;
}

/** What an apply of a planned pass would send and wait for. */
export interface ApplyForecast {
  /** The plan's own reads (an apply observes again) and its writes with one verifying read each. */
  reads: number;
  writes: number;
  /** Soaks the apply waits through: one per wave with changes that a later wave with changes follows. */
  soaks: { wave: string; ms: number }[];
  /** Changes held for an approval or a window, by the rule's or window's name: no time is put on them. */
  waits: { reason: 'approval' | 'window'; name: string; changes: number }[];
  /** The request time plus the soaks. */
  ms: number;
}

/**
 * The apply's forecast from a dry run's result: the reads the dry run made (an apply makes them
 * again), one write and one verifying read per change not held, each soak between waves with
 * changes (a rollout's soak, `soakMs`), at `rate`.
 */
export function applyForecast(result: PassResult, rate: RateSpec): ApplyForecast {
  const changes = result.plan.entries.filter(isChange);
  const writes = changes.filter((entry) => !entry.held || entry.held.reason === 'wave').length;
  const reads = result.requests + writes;
  const soaks: ApplyForecast['soaks'] = [];
  const rollout = result.rollout;
  if (rollout?.soakMs !== undefined) {
    const withChanges = rollout.waves.filter((wave) => changes.some((entry) => entry.wave === wave.name && entry.held?.reason !== 'approval' && entry.held?.reason !== 'window'));
    for (const wave of withChanges.slice(0, -1)) soaks.push({ wave: wave.name, ms: rollout.soakMs });
  }
  const named = new Map<string, ApplyForecast['waits'][number]>();
  for (const entry of changes) {
    if (entry.held?.reason !== 'approval' && entry.held?.reason !== 'window') continue;
    const name = entry.held.name ?? entry.held.reason;
    const key = `${entry.held.reason}\0${name}`;
    const known = named.get(key);
    if (known) known.changes += 1;
    else named.set(key, { reason: entry.held.reason, name, changes: 1 });
  }
  const ms = sendingMs(reads + writes, rate) + soaks.reduce((sum, soak) => sum + soak.ms, 0);
  return { reads, writes, soaks, waits: [...named.values()], ms };
}

/** One line for a plan: the apply's requests, soaks and named waits at `budget` (for example "the daemon's default budget"). */
export function applyForecastLine(forecast: ApplyForecast, rate: RateSpec, budget: string): string {
  const requests = forecast.reads + forecast.writes;
  const parts = [`${plural(requests, 'request')} (${plural(forecast.writes, 'write')}, ${plural(forecast.reads, 'read')}) at ${budget} (${rateText(rate)})`];
  if (forecast.soaks.length > 0) {
    const soak = forecast.soaks.reduce((sum, s) => sum + s.ms, 0);
    parts.push(`soaks ${aboutDuration(soak).replace(/^about /, '')} (${forecast.soaks.map((s) => s.wave).join(', ')})`);
  }
  let line = `Apply forecast: ${parts.join(', plus ')}: ${aboutDuration(forecast.ms)}`;
  if (forecast.waits.length > 0) {
    line += `; then, with no time put on them: ${forecast.waits.map((w) => `${w.reason === 'approval' ? 'approval' : 'window'} ${w.name} (${plural(w.changes, 'change')})`).join(', ')}`;
  }
  return `${line}.`;
}
