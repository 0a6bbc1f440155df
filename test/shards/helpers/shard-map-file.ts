// A shard map read from a file of its own, as the command reads one; the file is removed after.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readShardMap, type ShardMap } from '../../../src/shards/shard-map.js';

export async function readShardMapText(text: string): Promise<ShardMap> {
  const dir = await mkdtemp(join(tmpdir(), 'shard-map-'));
  try {
    const path = join(dir, 'shards.yaml');
    await writeFile(path, text);
    return await readShardMap(path, 'shards.yaml');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
