// The status record in the state directory (`status.json`), written through the state
// directory's atomic write helper: the daemon writes it after each pass (coalesced, newest
// wins), a one-shot pass folds its result in before it releases the state lock, and
// `reconcile status` reads it with no API call and no secret.
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '../util/atomic-file.js';
import type { PassResult } from '../reconcile/types.js';
import { emptyStatusRecord, foldPass, isStatusRecord, type PassScope, type StatusRecord } from './status-record.js';

export const STATUS_FILE = 'status.json';

/** The recorded status; undefined when no pass has recorded one (or the file is not one this version reads). */
export async function readStatusRecord(stateDir: string): Promise<StatusRecord | undefined> {
  let parsed: unknown;
  try {
    parsed = await readJsonFile<unknown>(join(stateDir, STATUS_FILE));
  } catch {
    return undefined;
  }
  return isStatusRecord(parsed) ? parsed : undefined;
}

export async function writeStatusRecord(stateDir: string, record: StatusRecord): Promise<void> {
  await writeJsonAtomic(join(stateDir, STATUS_FILE), record);
}

/** A one-shot pass: folds its result into the recorded status (the caller holds the state lock). */
export async function recordPassInStateDir(stateDir: string, result: PassResult, scope: PassScope, at: number): Promise<void> {
  const record = (await readStatusRecord(stateDir)) ?? emptyStatusRecord();
  await writeStatusRecord(stateDir, foldPass(record, result, scope, at));
}

/**
 * The daemon's writer: `write` returns at once; writes never overlap and the newest record
 * wins (one given while another is written is written next). `onError` hears of a failed write.
 */
export function statusRecordWriter(stateDir: string, onError: (error: unknown) => void) {
  let pending: StatusRecord | undefined;
  let writing: Promise<void> | undefined;
  const drain = async () => {
    while (pending) {
      const next = pending;
      pending = undefined;
      try {
        await writeStatusRecord(stateDir, next);
      } catch (error) {
        onError(error);
      }
    }
  };
  return {
    write(record: StatusRecord): void {
      pending = record;
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
