import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FRESHNESS_FILE, freshnessWriter, readFreshness } from '../../src/daemon/freshness-file.js';
import { freshnessLine } from '../../src/reconcile/kinds/status-report.js';
import { silentLogger } from '../../src/util/logger.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('freshness file (what reconcile status shows of a daemon)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'freshness-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the newest record wins; status reads the largest age, the bound and the limit', async () => {
    const writer = freshnessWriter(dir, { resync: 'continuous', maxObservationAgeSeconds: 600 }, { now: () => T0 }, silentLogger);
    writer.write({ observedAt: { shop: T0 - 10_000 }, boundMs: 100_000 });
    writer.write({ observedAt: { shop: T0 - 5_000, blog: T0 - 400_000 }, boundMs: 300_000 });
    await writer.flush();
    const read = await readFreshness(dir, T0 + 300_000);
    expect(read).toEqual({ resync: 'continuous', writtenAt: T0, largestAgeSeconds: 700, oldestProject: 'blog', boundSeconds: 300, maxObservationAgeSeconds: 600 });
    expect(freshnessLine(read!)).toBe(
      'Daemon freshness (--resync continuous, written 2026-01-01T12:00:00.000Z): largest observation age 700 s (blog), bound 300 s, --max-observation-age 600 s EXCEEDED',
    );
  });

  it('no file, or one that is not a record: nothing to show', async () => {
    expect(await readFreshness(dir, T0)).toBeUndefined();
    await writeFile(join(dir, FRESHNESS_FILE), '{"version": 7}');
    expect(await readFreshness(dir, T0)).toBeUndefined();
  });
});
