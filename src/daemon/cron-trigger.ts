import type { ScheduledTask } from 'node-cron';
import { cronModule, validateSchedule } from './schedule.js';

export { InvalidScheduleError, validateSchedule } from './schedule.js';

/** A recurring schedule (injected so tests drive ticks without waiting for the wall clock). */
export interface CronTrigger {
  start(onTick: () => void): void;
  stop(): void;
  /** Length of the coming interval in ms (time between the next two runs). */
  intervalMs(): number;
}

/** A node-cron schedule on the wall clock. */
export function nodeCronTrigger(expression: string, options: { timezone?: string } = {}): CronTrigger {
  validateSchedule(expression);
  const cron = cronModule();
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
