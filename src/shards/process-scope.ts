// What a reconciling process owns: its shard (if any) and the state directory it locks. Shared
// by the one-shot command and the daemon so both derive the same directory for a shard.
import { join, resolve } from 'node:path';
import { UsageError, stringOption, type CommandContext } from '../cli/context.js';
import { parseDuration } from '../util/rate.js';
import type { Shard, ShardMap } from './shard-map.js';

/** The state directory of a process: `<state-dir>/shards/<name>` for a shard, else `<state-dir>`. */
export function stateDirOf(context: CommandContext, shard: string | undefined): string {
  const base = resolve(context.cwd, stringOption(context, 'state-dir') ?? '.reconcile');
  return shard === undefined ? base : join(base, 'shards', shard);
}

/** `--lock-timeout` in milliseconds. */
export function lockTimeoutMs(context: CommandContext): number {
  try {
    return parseDuration(stringOption(context, 'lock-timeout') ?? '60s');
  } catch (error) {
    throw new UsageError(`--lock-timeout: ${(error as Error).message}`);
  }
}

/** `--organization-wait` in milliseconds. */
export function organizationWaitMs(context: CommandContext): number {
  const value = stringOption(context, 'organization-wait') ?? '60s';
  // `0s`: no wait at all (a duration is otherwise > 0).
  if (/^0+(ms|s|m|h)?$/.test(value.trim())) return 0;
  try {
    return parseDuration(value);
  } catch (error) {
    throw new UsageError(`--organization-wait: ${(error as Error).message}`);
  }
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

