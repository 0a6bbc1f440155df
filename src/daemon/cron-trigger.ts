import cron, { type ScheduledTask } from 'node-cron';

/** A recurring schedule (injected so tests drive ticks without waiting for the wall clock). */
export interface CronTrigger {
  start(onTick: () => void): void;
  stop(): void;
  /** Length of the coming interval in ms (time between the next two runs). */
  intervalMs(): number;
}

export class InvalidScheduleError extends Error {
  constructor(readonly expression: string, detail: string) {
    super(`Expected --resync to be a cron expression such as \`*/10 * * * *\`, got \`${expression}\`: ${detail}`);
    this.name = 'InvalidScheduleError';
  }
}

/** Throws InvalidScheduleError unless `expression` is a valid cron expression. */
export function validateSchedule(expression: string): void {
  const detail = cron.validateDetailed(expression);
  if (!detail.valid) {
    throw new InvalidScheduleError(expression, detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'invalid');
  }
}

/** A node-cron schedule on the wall clock. */
export function nodeCronTrigger(expression: string, options: { timezone?: string } = {}): CronTrigger {
  validateSchedule(expression);
  let task: ScheduledTask | undefined;
  const probe = cron.createTask(expression, () => undefined, { timezone: options.timezone });
  return {
    start(onTick) {
      if (task) return;
      task = cron.schedule(expression, () => onTick(), {
        timezone: options.timezone,
        name: 'reconciler-resync',
        // A tick only queues projects for the paced sweep, so it never runs long.
        noOverlap: false,
        suppressMissedWarning: true,
      });
    },
    stop() {
      void task?.destroy();
      task = undefined;
    },
    intervalMs() {
      const [first, second] = probe.getNextRuns(2);
      if (!first || !second) return 60_000;
      return Math.max(1000, second.getTime() - first.getTime());
    },
  };
}
