// The "finished n of m changes" lines of a long apply, paced by the injected clock.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { applyProgress } from '../../src/reconcile/apply-progress.js';
import type { Logger } from '../../src/reconcile/types.js';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

function recorder() {
  const lines: Array<{ level: string; fields: object; msg: string }> = [];
  const at = (level: string) => (fields: object, msg: string) => void lines.push({ level, fields, msg });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { log, lines };
}

describe('apply progress', () => {
  it('says how far a long apply is at most once per 5 s of clock time, the first 5 s in, at info level', async () => {
    const clock = new ManualClock();
    const { log, lines } = recorder();
    const finish = applyProgress(clock, 40, log);
    // A change a second: lines at 5 s, 10 s, 15 s ... never two within 5 s.
    for (let i = 1; i <= 40; i++) {
      await clock.advance(1_000);
      finish(i === 7 ? 'failed' : 'success');
    }
    expect(lines.map((l) => l.msg)).toEqual([
      'finished 5 of 40 changes',
      'finished 10 of 40 changes (1 failed or skipped)',
      'finished 15 of 40 changes (1 failed or skipped)',
      'finished 20 of 40 changes (1 failed or skipped)',
      'finished 25 of 40 changes (1 failed or skipped)',
      'finished 30 of 40 changes (1 failed or skipped)',
      'finished 35 of 40 changes (1 failed or skipped)',
    ]);
    expect(lines.every((l) => l.level === 'info')).toBe(true);
    expect(lines[1]!.fields).toEqual({ progress: 'apply', finished: 10, total: 40, unsuccessful: 1 });
  });

  it('stays quiet for a quick apply, for a handful of changes, and at the last change', async () => {
    const clock = new ManualClock();
    const quick = recorder();
    const finishQuick = applyProgress(clock, 40, quick.log);
    for (let i = 0; i < 39; i++) finishQuick('success');
    const few = recorder();
    const finishFew = applyProgress(clock, 5, few.log);
    for (let i = 0; i < 5; i++) {
      await clock.advance(10_000);
      finishFew('success');
    }
    const last = recorder();
    const finishLast = applyProgress(clock, 6, last.log);
    for (let i = 0; i < 5; i++) finishLast('success');
    await clock.advance(60_000);
    finishLast('success');
    expect([quick.lines, few.lines, last.lines]).toEqual([[], [], []]);
  });

  it('never claims more finished than in total, when a project replanned once ready adds changes', async () => {
    const clock = new ManualClock();
    const { log, lines } = recorder();
    const finish = applyProgress(clock, 6, log);
    for (let i = 0; i < 12; i++) {
      await clock.advance(5_000);
      finish('success');
    }
    expect(lines.map((l) => l.msg)).toEqual(['finished 1 of 6 changes', 'finished 2 of 6 changes', 'finished 3 of 6 changes', 'finished 4 of 6 changes', 'finished 5 of 6 changes']);
  });
});

describe('apply progress in a pass', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
  });

  it('reports how far the apply is once the new projects are ready, clock time having passed while they came up', async () => {
    h = await startHarness({ DB_PASS: 'progress-db-pass-41c9' });
    const config = '  auth:\n    site_url: https://example.test\n  restapi:\n    max_rows: 100\n';
    await h.write({ 'org.yaml': ORG, 'a.yaml': project('a', config), 'b.yaml': project('b', config), 'c.yaml': project('c', config) });
    const { log, lines } = recorder();
    const result = await h.pass({ log });
    expect(result.result).toBe('success');
    const changes = result.outcomes.filter((o) => o.action !== 'wait' && o.action !== 'verify').length;
    expect(changes).toBeGreaterThan(5);
    // Organization and projects are created at once; the configuration is written once each is
    // ready, seconds of clock time later: a line then, counting up, never at the last change.
    const progress = lines.filter((l) => (l.fields as { progress?: string }).progress === 'apply');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((l) => l.level === 'info' && new RegExp(`^finished \\d+ of ${changes} changes$`).test(l.msg))).toBe(true);
    const counts = progress.map((l) => (l.fields as { finished: number }).finished);
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    expect(Math.max(...counts)).toBeLessThan(changes);
  });
});
