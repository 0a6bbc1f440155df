import { readFileSync } from 'node:fs';
import { writeStateFile, writeStateJson } from './state-fence.js';

/**
 * Writes a file so that a reader (or a crash) sees either the old content or the new,
 * never a torn one: write a sibling temp file, fsync it, rename it over the target. Fenced
 * when the file lies in a state directory whose lock this process holds (state-fence.ts).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  return writeStateFile(path, data, mode);
}

/**
 * Reads and parses a JSON file; undefined when it does not exist. Read synchronously: records
 * of the state directory are small, and the four thread-pool round trips of an asynchronous
 * read cost several times the read itself (a pass reads one record per deployed function).
 */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text) as T;
}

/** A JSON record, written like `writeFileAtomic`; in a held state directory it carries its generation. */
export function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  return writeStateJson(path, value);
}
