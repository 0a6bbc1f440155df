// Maintenance windows: a cron start (croner, read in the window's time zone), open for a
// duration after each start. Computed on the injected clock's time, so a scaled clock moves
// windows as it moves everything else. croner computes the previous and the next start from
// the schedule's fields (no minute-by-minute scan, no horizon), and handles daylight saving
// time as cron does: a start in the hour that a spring change skips opens right after it, a
// start in the hour that an autumn change repeats opens once.
import { Cron } from 'croner';
import type { WindowRule } from './config.js';

export interface WindowState {
  open: boolean;
  /** When the current opening closes (open), ms. */
  closesAt?: number;
  /** The next opening (closed), ms; undefined when the schedule never starts again. */
  opensAt?: number;
}

const schedules = new Map<string, Cron>();

function scheduleOf(window: WindowRule): Cron {
  const key = `${window.schedule}\u0000${window.timeZone}`;
  let found = schedules.get(key);
  if (!found) {
    // No function: the schedule is only computed with, never run.
    found = new Cron(window.schedule, { timezone: window.timeZone, mode: '5-part' });
    schedules.set(key, found);
  }
  return found;
}

export function windowState(window: WindowRule, now: number): WindowState {
  const schedule = scheduleOf(window);
  // The latest start at or before now (a start within the same second as the reference may be
  // later than now: the second one is then the latest).
  const last = schedule.previousRuns(2, new Date(now + 1)).map((date) => date.getTime()).find((at) => at <= now);
  if (last !== undefined && now < last + window.durationMs) return { open: true, closesAt: last + window.durationMs };
  const next = schedule.nextRun(new Date(now));
  return next ? { open: false, opensAt: next.getTime() } : { open: false };
}

