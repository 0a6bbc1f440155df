// What a reconciling process owns: its shard (if any) and the state directory it locks. Shared
// by the one-shot command and the daemon so both derive the same directory for a shard.
import { join } from 'node:path';
import { UsageError } from './context.js';
import type { Settings } from './settings.js';
import type { Shard, ShardMap } from '../shards/shard-map.js';

/** The state directory of a process: `<state-dir>/shards/<name>` for a shard, else `<state-dir>`. */
export function stateDirOf(settings: Pick<Settings, 'stateDir'>, shard: string | undefined): string {
  return shard === undefined ? settings.stateDir : join(settings.stateDir, 'shards', shard);
}

/**
 * A shard map splits the fleet between processes: writing all of it from one process beside
 * them would give projects two owners, so a writing process must name its shard.
 */
export function requireShard(map: ShardMap | undefined, shard: Shard | undefined): void {
  if (map && !shard) {
    throw new UsageError(`the shard map ${map.file} splits the fleet into shards ${map.shards.map((s) => s.name).join(', ')}: choose this process's shard with --shard NAME (RECONCILE_SHARD)`);
  }
}

