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

/** Throws InvalidScheduleError unless `expression` is a valid cron expression that node-cron can schedule. */
export function validateSchedule(expression: string): void {
  const cron = cronModule();
  const detail = cron.validateDetailed(expression);
  if (!detail.valid) {
    throw new InvalidScheduleError(expression, detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'invalid');
  }
  cron.createTask(expression, () => undefined);
}
