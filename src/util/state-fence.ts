// Fencing of the state directory. The state lock (state-lock.ts) names one holder and a
// generation that every acquisition increases. A holder can lose its lock without knowing it
// (stopped, a frozen VM, a long pause past the lock timeout): another process takes it over,
// and when the first one resumes, whatever it was about to write is stale. So every write to
// the state directory goes through `writeStateFile`/`removeStateFile` here, which check,
// immediately before the file is replaced (synchronously, with nothing else of this process
// run in between), that the lock file still names this holder and generation and that the
// holder's lock has not been marked lost. Every API write checks the same (`checkFence`).
//
// A directory no lock of this process holds (a test that runs a pass on its own, a tool that
// takes no lock) is written without a check. A directory whose lock was lost or released is
// never written again by this process.
import { readFileSync, renameSync, unlinkSync } from 'node:fs';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { assertOutsideManifests, realPathOf } from './manifests-tree.js';

/** The lock file's name in the state directory. */
export const LOCK_FILE = 'state.lock';

/** A write refused because this process no longer holds the state directory's lock. */
export class StateLockLostError extends Error {
  constructor(readonly dir: string, reason: string) {
    super(`the state lock of ${dir} is no longer held by this process (${reason}): nothing more is written`);
    this.name = 'StateLockLostError';
  }
}

/** What the registry knows of one held lock. */
export interface FenceToken {
  /** The state directory, resolved. */
  readonly dir: string;
  /** The holding's random id, as in the lock file. */
  readonly id: string;
  /** The holding's generation, as in the lock file. */
  readonly generation: number;
  /** Aborted once the holder knows it lost the lock (a heartbeat, or a refused write). */
  readonly signal: AbortSignal;
  /** Marks the lock lost (called when a check finds another holder). */
  lost(reason: string): void;
  /** True once the lock was released: nothing more is written. */
  released(): boolean;
}

const fences = new Map<string, FenceToken>();

/**
 * Registers a held lock: from now on, writes below `token.dir` are checked against it (under
 * the directory as given and as its real path, so a symbolic link to it is fenced too).
 */
export function registerFence(token: FenceToken): void {
  fences.set(resolve(token.dir), token);
  fences.set(realPathOf(token.dir), token);
}

/** The fence of the state directory that contains `path`, if this process holds (or held) its lock. */
export function fenceFor(path: string): FenceToken | undefined {
  if (fences.size === 0) return undefined;
  for (const target of new Set([resolve(path), realPathOf(path)])) {
    for (const [dir, token] of fences) {
      if (target === dir || target.startsWith(`${dir}${sep}`)) return token;
    }
  }
  return undefined;
}

function lockFields(text: string): { id?: unknown; generation?: unknown } | undefined {
  try {
    return JSON.parse(text) as { id?: unknown; generation?: unknown };
  } catch {
    return undefined;
  }
}

/**
 * Throws StateLockLostError unless this process still holds the lock of the state directory
 * that contains `path` (nothing to check when it holds none). Synchronous on purpose: the
 * caller acts right after it, with no other work of this process in between.
 */
export function checkFence(path: string): void {
  const token = fenceFor(path);
  if (!token) return;
  checkToken(token);
}

function checkToken(token: FenceToken): void {
  if (token.released()) throw new StateLockLostError(token.dir, 'it was released');
  if (token.signal.aborted) throw new StateLockLostError(token.dir, 'it was taken over');
  let text: string;
  try {
    text = readFileSync(join(token.dir, LOCK_FILE), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the lock file is gone' : `the lock file cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
    token.lost(reason);
    throw new StateLockLostError(token.dir, reason);
  }
  const current = lockFields(text);
  if (current?.id !== token.id || current.generation !== token.generation) {
    const reason = typeof current?.generation === 'number' ? `generation ${current.generation} holds it, this process has ${token.generation}` : 'another process holds it';
    token.lost(reason);
    throw new StateLockLostError(token.dir, reason);
  }
}

/**
 * The one way to write a file of the state directory. The content goes to a sibling temp file
 * first (written and fsynced), then the fence is checked and the temp file renamed over the
 * target at once; a reader or a crash sees the old content or the new, never a torn one.
 */
export async function writeStateFile(path: string, data: string | Uint8Array, mode = 0o600, options: { userOutput?: boolean } = {}): Promise<void> {
  // A file the user named as output (a saved plan) may go anywhere they choose; nothing else
  // is ever written into the manifests tree.
  if (!options.userOutput) assertOutsideManifests(path);
  const token = fenceFor(path);
  if (token) checkToken(token);
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  // A holder that lost the lock leaves its temporary file as it is (nothing reads it): even
  // removing it would be a write after the takeover.
  if (token) checkToken(token);
  try {
    renameSync(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * A JSON record of the state directory. An object carries the generation of the lock it was
 * written under (`generation`), so a reader can tell it from a record of another holding.
 * A record written under a newer generation than this process holds is never overwritten:
 * its writer took the lock over from this process.
 */
export async function writeStateJson(path: string, value: unknown): Promise<void> {
  const token = fenceFor(path);
  let record = value;
  if (token) {
    const existing = await readGeneration(path);
    if (existing !== undefined && existing > token.generation) {
      const reason = `${basename(path)} was written under generation ${existing}, this process has ${token.generation}`;
      token.lost(reason);
      throw new StateLockLostError(token.dir, reason);
    }
    if (isPlainObject(value)) record = { ...value, generation: token.generation };
  }
  await writeStateFile(path, `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes a file of the state directory (fenced like a write); a missing file is fine. */
export async function removeStateFile(path: string): Promise<void> {
  assertOutsideManifests(path);
  const token = fenceFor(path);
  if (token) checkToken(token);
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** The generation a record of the state directory was written under, if it says. */
export async function readGeneration(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as { generation?: unknown } | null;
    return isPlainObject(parsed) && typeof parsed.generation === 'number' ? parsed.generation : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a record just read from the state directory: one written under a newer generation
 * than this process holds means another process took the lock over; this one stops.
 */
export function checkRecordGeneration(path: string, record: unknown): void {
  const token = fenceFor(path);
  if (!token || !isPlainObject(record) || typeof record.generation !== 'number') return;
  if (record.generation > token.generation) {
    const reason = `${basename(path)} was written under generation ${record.generation}, this process has ${token.generation}`;
    token.lost(reason);
    throw new StateLockLostError(token.dir, reason);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
