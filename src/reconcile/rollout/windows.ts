// Maintenance windows: a cron start (node-cron's parser and matcher, read in the window's time
// zone), open for a duration after each start. Computed on the injected clock's time, minute by
// minute, so a scaled clock moves windows as it moves everything else.
import cron, { type ScheduledTask } from 'node-cron';
import type { WindowRule } from './config.js';

const MINUTE = 60_000;
/** How far ahead the next opening is looked for; a window further away is re-checked then. */
export const WINDOW_LOOKAHEAD_MS = 8 * 24 * 60 * MINUTE;

export interface WindowState {
  open: boolean;
  /** When the current opening closes (open), ms. */
  closesAt?: number;
  /** The next opening (closed), ms; undefined when none within WINDOW_LOOKAHEAD_MS. */
  opensAt?: number;
}

interface Matcher {
  task: ScheduledTask;
  /**
   * Minutes of the UTC hour a start can fall on: the schedule's minutes shifted by every
   * quarter hour (every time zone's offset is a multiple of 15 minutes), so only those are matched.
   */
  minutes: ReadonlySet<number>;
}

const matchers = new Map<string, Matcher>();

function matcher(window: WindowRule): Matcher {
  const key = `${window.schedule}\u0000${window.timeZone}`;
  let found = matchers.get(key);
  if (!found) {
    const minutes = new Set<number>();
    for (const minute of cron.parse(window.schedule).minute) for (const shift of [0, 15, 30, 45]) minutes.add((minute + shift) % 60);
    // Created, never started: only its matcher is used.
    found = { task: cron.createTask(window.schedule, () => undefined, { timezone: window.timeZone }), minutes };
    matchers.set(key, found);
  }
  return found;
}

function isStart(m: Matcher, at: number): boolean {
  return m.minutes.has(new Date(at).getUTCMinutes()) && m.task.match(new Date(at));
}

export function windowState(window: WindowRule, now: number): WindowState {
  const m = matcher(window);
  const minute = Math.floor(now / MINUTE) * MINUTE;
  // The latest start no longer ago than the duration.
  for (let start = minute; start > now - window.durationMs; start -= MINUTE) {
    if (isStart(m, start)) return { open: true, closesAt: start + window.durationMs };
  }
  for (let start = minute + MINUTE; start <= now + WINDOW_LOOKAHEAD_MS; start += MINUTE) {
    if (isStart(m, start)) return { open: false, opensAt: start };
  }
  return { open: false };
}
