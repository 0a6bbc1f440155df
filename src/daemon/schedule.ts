// Cron expressions of `--resync`: checked where the settings are parsed. node-cron is loaded on
// first use only, so a command whose schedule is the default (or that runs no daemon) never
// loads it; the daemon's trigger (cron-trigger.ts) uses the same copy.
import { createRequire } from 'node:module';

type NodeCron = typeof import('node-cron');
let loaded: NodeCron | undefined;

/** node-cron, loaded once, on first use. */
export function cronModule(): NodeCron {
  loaded ??= createRequire(import.meta.url)('node-cron') as NodeCron;
  return loaded;
}

export class InvalidScheduleError extends Error {
  constructor(readonly expression: string, detail: string) {
    super(`Expected --resync to be a cron expression such as \`*/10 * * * *\`, got \`${expression}\`: ${detail}`);
    this.name = 'InvalidScheduleError';
  }
}

/**
 * A range whose bound is past 59, the largest value of any cron field: refused before node-cron
 * reads it, since node-cron expands a range as written (`0-99999999 * * * *` keeps it busy for
 * most of a minute before it throws).
 */
function rangePastEveryField(expression: string): string | undefined {
  for (const [range, from, to] of expression.matchAll(/(\d+)-(\d+)/g)) {
    if (Number(from) > 59 || Number(to) > 59) return `the range \`${range.length > 24 ? `${range.slice(0, 24)}...` : range}\` goes past 59, the largest value of any field`;
  }
  return undefined;
}

/** Throws InvalidScheduleError unless `expression` is a valid cron expression that node-cron can schedule. */
export function validateSchedule(expression: string): void {
  const tooLarge = rangePastEveryField(expression);
  if (tooLarge !== undefined) throw new InvalidScheduleError(expression, tooLarge);
  const cron = cronModule();
  const detail = cron.validateDetailed(expression);
  if (!detail.valid) {
    throw new InvalidScheduleError(expression, detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'invalid');
  }
  cron.createTask(expression, () => undefined);
}
