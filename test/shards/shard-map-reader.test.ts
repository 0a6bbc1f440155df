// A shard map written in the plain YAML the manifests are written in is read without the YAML
// library (every process of a sharded deployment reads the whole map before its first request);
// a map with a problem, or written in YAML the fast reader leaves alone, is read by the full
// parser, which locates each problem. Either way the shards, their lines and the problems are
// the same.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ShardMapError } from '../../src/shards/shard-map.js';
import { readShardMapText } from './helpers/shard-map-file.js';

const map = readShardMapText;

async function problems(text: string): Promise<ShardMapError['errors']> {
  const error = await map(text).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ShardMapError);
  return (error as ShardMapError).errors;
}

/** Whether this process has loaded the YAML library (it is loaded through require). */
const yamlLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\/]node_modules[\\/]yaml[\\/]/.test(path));

const PLAIN = `# the shards of the fleet
shards:
  - name: team-a
    selector: { labels: { team: a } }
    credentials:
      tokenEnv: TOKEN_A
    rateLimit: 20/1s
  - { name: team-b, selector: { organization: acme }, credentials: { tokenFileEnv: TOKEN_FILE_B } }

  - name: "team-c"
    selector:
      labels:
        team: c
        tier: 'gold'
    credentials:
      oauth:
        clientIdEnv: CLIENT_ID
        clientSecretEnv: CLIENT_SECRET
organizations:
  acme: team-b
`;

const EXPECTED_SHARDS = [
  { name: 'team-a', selector: { labels: { team: 'a' } }, credentials: { tokenEnv: 'TOKEN_A' }, rate: { limit: 20, windowMs: 1000 }, line: 3 },
  { name: 'team-b', selector: { organization: 'acme' }, credentials: { tokenFileEnv: 'TOKEN_FILE_B' }, line: 8 },
  { name: 'team-c', selector: { labels: { team: 'c', tier: 'gold' } }, credentials: { oauth: { clientIdEnv: 'CLIENT_ID', clientSecretEnv: 'CLIENT_SECRET' } }, line: 10 },
];

describe('reading a shard map', () => {
  it('reads a plain map whole, with the line of each shard, without loading the YAML library', async () => {
    expect(yamlLoaded()).toBe(false);
    const read = await map(PLAIN);
    expect(read.shards).toEqual(EXPECTED_SHARDS);
    expect(read.organizations).toEqual({ acme: 'team-b' });
    expect(yamlLoaded()).toBe(false);
  });

  it('reads the same map in YAML the fast reader leaves to the full parser (an anchor) to the same shards', async () => {
    const anchored = PLAIN.replace('      tokenEnv: TOKEN_A', '      tokenEnv: &token TOKEN_A');
    expect((await map(anchored)).shards).toEqual(EXPECTED_SHARDS);
    expect(yamlLoaded()).toBe(true);
  });

  it('locates the problems of a map the fast reader reads, as the full parser places them', async () => {
    const text = 'shards:\n  - name: team-a\n    selector: { labels: { team: a } }\n    credentials: { tokenEnv: TOKEN_A }\n  - name: team-a\n    selector: {}\n    credentials: { tokenEnv: TOKEN_B }\n    rateLimit: lots\norganizations:\n  acme: nobody\n';
    expect(await problems(text)).toEqual([
      { file: 'shards.yaml', line: 5, column: 11, path: '/shards/1/name', message: 'shard `team-a` is defined twice (first at line 2)' },
      { file: 'shards.yaml', line: 6, column: 15, path: '/shards/1/selector', message: 'an empty selector would match every project: give labels and/or organization' },
      expect.objectContaining({ file: 'shards.yaml', line: 8, column: 16, path: '/shards/1/rateLimit' }),
      {
        file: 'shards.yaml',
        line: 10,
        column: 9,
        path: '/organizations/acme',
        message: 'expected the name of a shard of this map (team-a): the one shard that creates organization `acme`',
      },
    ]);
  });
});
