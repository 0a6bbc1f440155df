// The status record in the state directory (`status.json`), written through the state
// directory's atomic write helper by the run's one writer (src/run/status-recorder.ts: the
// daemon's passes and a one-shot apply fold into it), and read by `reconcile status` with no
// API call and no secret.
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '../util/atomic-file.js';
import { isStatusRecord, type StatusRecord } from './status-record.js';

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
