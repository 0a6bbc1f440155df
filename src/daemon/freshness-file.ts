// The daemon's statement of freshness, kept in its state directory so that `reconcile status`
// (a separate process, sharing the state directory) can show the largest observation age and
// the bound without asking the daemon.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeJsonAtomic } from '../util/atomic-file.js';
import type { Logger } from '../reconcile/types.js';
import type { Freshness } from './controller.js';
import type { DaemonFreshness } from '../reconcile/kinds/status-report.js';

export const FRESHNESS_FILE = 'freshness.json';

interface FreshnessRecord {
  version: 1;
  /** When the daemon wrote it (ms since the epoch). */
  writtenAt: number;
  /** `continuous` or the cron expression. */
  resync: string;
  /** The floor of the largest observation age, seconds. */
  boundSeconds?: number;
  /** `--max-observation-age`, seconds. */
  maxObservationAgeSeconds?: number;
  /** Last observation of each project (ms since the epoch), by Project manifest name. */
  observedAt: Record<string, number>;
}

/**
 * Writes the record after each pass; writes never overlap and the newest record wins (a pass
 * that ends while one is written is written next). Failures are logged, never thrown.
 */
export function freshnessWriter(stateDir: string, fixed: { resync: string; maxObservationAgeSeconds?: number }, clock: { now(): number }, log: Logger) {
  const path = join(stateDir, FRESHNESS_FILE);
  let pending: Freshness | undefined;
  let writing: Promise<void> | undefined;
  const drain = async () => {
    while (pending) {
      const next = pending;
      pending = undefined;
      const record: FreshnessRecord = {
        version: 1,
        writtenAt: clock.now(),
        resync: fixed.resync,
        ...(next.boundMs !== undefined ? { boundSeconds: next.boundMs / 1000 } : {}),
        ...(fixed.maxObservationAgeSeconds !== undefined ? { maxObservationAgeSeconds: fixed.maxObservationAgeSeconds } : {}),
        observedAt: next.observedAt,
      };
      try {
        await writeJsonAtomic(path, record);
      } catch (error) {
        log.warn({ err: error, path }, 'writing the freshness file failed; reconcile status will not show the observation ages');
      }
    }
  };
  return {
    write(freshness: Freshness): void {
      pending = freshness;
      writing ??= drain().finally(() => {
        writing = undefined;
      });
    },
    /** Resolves when the newest record is on disk. */
    async flush(): Promise<void> {
      while (writing) await writing;
    },
  };
}

/** Reads the daemon's freshness record; undefined when there is none (no daemon has run on this state directory). */
export async function readFreshness(stateDir: string, now: number): Promise<DaemonFreshness | undefined> {
  let record: FreshnessRecord;
  try {
    record = JSON.parse(await readFile(join(stateDir, FRESHNESS_FILE), 'utf8')) as FreshnessRecord;
  } catch {
    return undefined;
  }
  if (record?.version !== 1 || typeof record.observedAt !== 'object' || record.observedAt === null) return undefined;
  let oldest: [string, number] | undefined;
  for (const [project, at] of Object.entries(record.observedAt)) {
    if (typeof at === 'number' && (!oldest || at < oldest[1])) oldest = [project, at];
  }
  return {
    resync: String(record.resync),
    writtenAt: record.writtenAt,
    ...(oldest ? { largestAgeSeconds: Math.max(0, (now - oldest[1]) / 1000), oldestProject: oldest[0] } : {}),
    ...(typeof record.boundSeconds === 'number' ? { boundSeconds: record.boundSeconds } : {}),
    ...(typeof record.maxObservationAgeSeconds === 'number' ? { maxObservationAgeSeconds: record.maxObservationAgeSeconds } : {}),
  };
}
