// The log formats and the pacing of progress lines, on the injected clock.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colorWanted, createLogger, formatPrettyLine } from '../../src/util/logger.js';
import { WaitProgress, formatElapsed, progressGate } from '../../src/util/progress.js';
import { ManualClock } from '../../src/util/clock.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('log formats', () => {
  it('writes JSON lines with level names', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream });
    log.warn({ project: 'shop' }, 'something');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', msg: 'something', project: 'shop' });
  });

  it('writes one concise line per event in the pretty format, an error as its message, secrets redacted', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream, format: 'pretty' });
    log.error({ err: new Error('connect ECONNREFUSED 127.0.0.1:9') , token: 'tok-secret-1' }, 'pass failed');
    log.info({ wait: 'project', project: 'shop', elapsedS: 12 }, 'waiting for project shop to become ACTIVE_HEALTHY: COMING_UP (12s so far)');
    const lines = out.text().split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d ERROR pass failed err="connect ECONNREFUSED 127.0.0.1:9" token=\[redacted\]$/);
    // A progress line says everything in its message.
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d INFO  waiting for project shop to become ACTIVE_HEALTHY: COMING_UP \(12s so far\)$/);
    expect(out.text()).not.toContain('tok-secret-1');
    expect(out.text()).not.toContain('\u001b[');
  });

  it('colours only when asked to', () => {
    const line = JSON.stringify({ level: 'warn', time: '2026-01-01T00:00:00.000Z', msg: 'careful' });
    expect(formatPrettyLine(line, true)).toContain('\u001b[33mWARN');
    expect(formatPrettyLine(line, false)).not.toContain('\u001b[');
  });

  it('honours NO_COLOR and FORCE_COLOR', () => {
    expect(colorWanted({}, true)).toBe(true);
    expect(colorWanted({}, false)).toBe(false);
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ NO_COLOR: '' }, true)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '0' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '1', NO_COLOR: '1' }, false)).toBe(true);
  });
});

describe('progress pacing', () => {
  it('lets one line through per interval of clock time', async () => {
    const clock = new ManualClock();
    const due = progressGate(clock, 5_000);
    expect(due()).toBe(true);
    expect(due()).toBe(false);
    await clock.advance(4_999);
    expect(due()).toBe(false);
    await clock.advance(1);
    expect(due()).toBe(true);
  });

  it('reports a stall at once, then every interval while it lasts, and never for short waits', async () => {
    const clock = new ManualClock();
    let waitingUntil = clock.now() + 12_000;
    const reports: number[] = [];
    const progress = new WaitProgress(clock, () => {
      if (clock.now() >= waitingUntil) return false;
      reports.push(clock.now());
      return true;
    }, 5_000);
    const start = clock.now();
    progress.stalled(300);
    await clock.advance(0);
    expect(reports).toEqual([]);
    progress.stalled(12_000);
    progress.stalled(12_000);
    await clock.advance(20_000);
    expect(reports.map((t) => t - start)).toEqual([0, 5_000, 10_000]);
    // A new stall soon after the last line waits out the rest of the interval.
    waitingUntil = clock.now() + 60_000;
    const resumed = clock.now();
    progress.stalled(60_000);
    await clock.advance(1_000);
    expect(reports.filter((t) => t >= resumed)).toHaveLength(1);
    progress.stop();
    await clock.advance(60_000);
    expect(reports.filter((t) => t >= resumed)).toHaveLength(1);
  });

  it('says how long a wait has lasted', () => {
    expect(formatElapsed(45)).toBe('45s');
    expect(formatElapsed(140)).toBe('2m 20s');
    expect(formatElapsed(3_780)).toBe('1h 3m');
  });
});
