// The state directory: small JSON documents, each written atomically (temp file + rename),
// so a crash leaves either the old or the new version of a file, never a torn one. Every write
// and removal is fenced by the state lock (util/state-fence.ts), and each object record carries
// the generation of the lock it was written under.
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '../util/atomic-file.js';
import { checkRecordGeneration, removeStateFile } from '../util/state-fence.js';
import type { StateStore } from './types.js';

/** Keys are relative file names without `.json`: segments of letters, digits, `.`, `_` and `-`, joined by `/`. */
const KEY = /^[A-Za-z0-9_][A-Za-z0-9._-]*(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/;

export class InvalidStateKeyError extends Error {
  constructor(readonly key: string) {
    super(`Expected a state key of letters, digits, '.', '_' and '-' segments joined by '/', got \`${key}\``);
    this.name = 'InvalidStateKeyError';
  }
}

/** A state store that also removes keys (intents are removed once resolved). */
export interface FileStateStore extends StateStore {
  readonly dir: string;
  delete(key: string): Promise<void>;
}

export function openStateStore(stateDir: string): FileStateStore {
  if (typeof stateDir !== 'string' || stateDir === '') {
    throw new TypeError(`Expected \`stateDir\` to be a non-empty string, got \`${String(stateDir)}\` (${typeof stateDir})`);
  }
  const pathOf = (key: string) => {
    if (!KEY.test(key) || key.split('/').some((segment) => segment === '..' || segment === '.')) throw new InvalidStateKeyError(key);
    return join(stateDir, `${key}.json`);
  };
  // Writes to one key are serialised so that two concurrent writers cannot interleave renames
  // out of order (the last call always wins). A write still waiting for its turn takes the
  // value of any later call to the same key, and both calls resolve once it is on disk: a burst
  // of writes to one record (a pass creating many projects) costs two writes, not one per call.
  const chains = new Map<string, Promise<void>>();
  const waiting = new Map<string, { value: unknown; written: Promise<void> }>();
  return {
    dir: stateDir,
    async get<T>(key: string): Promise<T | undefined> {
      const path = pathOf(key);
      await chains.get(key);
      const value = await readJsonFile<T>(path);
      // A record a newer holder of the lock wrote means this process lost it.
      checkRecordGeneration(path, value);
      return value;
    },
    set(key: string, value: unknown): Promise<void> {
      const path = pathOf(key);
      const queued = waiting.get(key);
      if (queued) {
        queued.value = value;
        return queued.written;
      }
      const write: { value: unknown; written: Promise<void> } = { value, written: Promise.resolve() };
      write.written = (chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => {
        if (waiting.get(key) === write) waiting.delete(key);
        return writeJsonAtomic(path, write.value);
      });
      waiting.set(key, write);
      chains.set(key, write.written);
      return write.written;
    },
    async delete(key: string): Promise<void> {
      const path = pathOf(key);
      // A later set starts a write of its own, after this removal.
      waiting.delete(key);
      const removal = (chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => removeStateFile(path));
      chains.set(key, removal);
      await removal;
    },
  };
}
