// `--resync` is checked where the settings are parsed: a range past every field's largest value
// is refused before node-cron expands it (which takes it most of a minute for `0-99999999`).
import { describe, expect, it } from 'vitest';
import { InvalidScheduleError, validateSchedule } from '../../src/daemon/schedule.js';

describe('validateSchedule', () => {
  it('refuses a range past 59 at once, naming the range', () => {
    expect(() => validateSchedule('0-99999999999 * * * *')).toThrow(InvalidScheduleError);
    expect(() => validateSchedule('0-99999999999 * * * *')).toThrow(/the range `0-99999999999` goes past 59, the largest value of any field/);
    expect(() => validateSchedule('0 0 1-100 * *')).toThrow(/the range `1-100` goes past 59/);
  });

  it('still takes ranges within the fields, and steps larger than a field as node-cron does', () => {
    for (const expression of ['0-59 * * * *', '*/10 * * * *', '*/100 * * * *', '0 0 * * 1-5', '0 0 1-31 1-12 *']) {
      expect(() => validateSchedule(expression)).not.toThrow();
    }
  });

  it('leaves other mistakes to node-cron, as before', () => {
    expect(() => validateSchedule('60 * * * *')).toThrow(/^Expected --resync to be a cron expression/);
  });
});
