// The state directory belongs to the manifests directory: by default `.reconcile` inside it
// (a dot-directory, which discovery, function sources and the write guard leave out), so that
// every command run on the same checkout, from whatever working directory, finds the same
// inventories, intents, approvals and request window. Before, the default followed the working
// directory; a state found at that old place is never silently replaced by an empty one (an
// empty state would forget inventories, intents and halts): a writing command moves it to the
// new place, a reading one (a dry run, `reconcile status`) uses it where it is and says so.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { systemClock } from '../util/clock.js';
import { describeHolder, holderIsGone, LOCK_FILE, moveStateDirectory, type LockHolder } from '../util/state-lock.js';
import { UsageError } from './context.js';
import type { Settings } from './settings.js';

/** Files only a state directory holds: one of them makes a directory a state directory. */
const STATE_FILES = ['inventory.json', 'status.json', 'request-window.json', 'lock-generation', LOCK_FILE, 'intents.json', 'project-revisions.json', 'approvals.json'];

async function holdsState(dir: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return false;
  }
  return names.some((name) => STATE_FILES.includes(name) || name === 'rollouts' || name === 'shards');
}

async function liveHolder(dir: string, timeoutMs: number): Promise<LockHolder | undefined> {
  let holder: LockHolder;
  try {
    holder = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
  if (typeof holder.heartbeatAt !== 'number' || systemClock.now() - holder.heartbeatAt > timeoutMs || holderIsGone(holder)) return undefined;
  return holder;
}

export interface StateDirPlace {
  /** Where the state directory is for this run (the new default, or the old place a reading command uses). */
  stateDir: string;
  /** What was done about a state at the old place, in words (for one log line), if anything. */
  note?: string;
}

/**
 * Settles where the state directory is: `--state-dir` as given; else `.reconcile` in the
 * manifests directory, after moving a state found at the old default place (the working
 * directory's) there when this command writes, or using it where it is when it only reads.
 * Refuses (UsageError) a default place inside a manifests directory that is a symbolic link (a
 * git-sync checkout is replaced at every sync, and its state with it), and a move it cannot make.
 */
export async function settleStateDir(settings: Pick<Settings, 'stateDir' | 'stateDirGiven' | 'legacyStateDir' | 'lockTimeoutMs'>, writes: boolean): Promise<StateDirPlace> {
  if (settings.stateDirGiven) return { stateDir: settings.stateDir };
  const manifests = dirname(settings.stateDir);
  const link = writes ? await lstat(manifests).catch(() => undefined) : undefined;
  if (link?.isSymbolicLink()) {
    throw new UsageError(
      `the manifests directory ${manifests} is a symbolic link (a checkout such as git-sync's, replaced at every sync): its default state directory ${settings.stateDir} would go with it; name one outside it with --state-dir DIR (RECONCILE_STATE_DIR)`,
    );
  }
  const legacy = settings.legacyStateDir;
  if (legacy === undefined || (await holdsState(settings.stateDir)) || !(await holdsState(legacy))) return { stateDir: settings.stateDir };
  if (!writes) {
    return {
      stateDir: legacy,
      note: `using the state directory at its old default place ${legacy} (the working directory's); it now belongs to the manifests directory, at ${settings.stateDir}: the next apply moves it there, or name it with --state-dir`,
    };
  }
  const holder = await liveHolder(legacy, settings.lockTimeoutMs);
  if (holder) {
    throw new UsageError(
      `the state directory at its old default place ${legacy} is in use by ${describeHolder(holder, systemClock.now())}; its new default place is ${settings.stateDir}: stop that process and run again to move it, or name it with --state-dir ${legacy}`,
    );
  }
  try {
    await moveStateDirectory(legacy, settings.stateDir);
  } catch (error) {
    throw new UsageError(
      `the state directory at its old default place ${legacy} could not be moved to ${settings.stateDir} (${(error as NodeJS.ErrnoException).code ?? 'error'}): move it yourself, or name it with --state-dir ${legacy}`,
    );
  }
  return { stateDir: settings.stateDir, note: `moved the state directory from its old default place ${legacy} (the working directory's) to ${settings.stateDir}, inside the manifests directory` };
}
