// A shard's token file named by an environment variable (`credentials.tokenFileEnv`): the way
// each pod of the Helm chart reads its own mounted token. The shard reads the file whose path
// the variable holds, nothing process-wide; an unset variable or a bad name is a located error.
import { describe, expect, it } from 'vitest';
import { shardAuthInputs } from '../../src/shards/credentials.js';
import { ShardMapError } from '../../src/shards/shard-map.js';
import { readShardMapText } from './helpers/shard-map-file.js';

const map = readShardMapText;

describe('credentials.tokenFileEnv', () => {
  it('gives the shard the token file whose path the variable holds, and no process-wide credential', async () => {
    const parsed = await map('shards:\n  - name: team-a\n    selector: { labels: { team: a } }\n    credentials:\n      tokenFileEnv: MANAGEMENT_API_TOKEN_FILE\n');
    const shard = parsed.shards[0]!;
    expect(shard.credentials).toEqual({ tokenFileEnv: 'MANAGEMENT_API_TOKEN_FILE' });
    const inputs = shardAuthInputs(shard, { MANAGEMENT_API_TOKEN_FILE: '/var/run/secrets/reconciler/api/token', MANAGEMENT_API_TOKEN: 'pat_process_wide_token' }, 'https://api.example.com');
    expect(inputs.values).toEqual({ 'api-url': 'https://api.example.com', 'token-file': '/var/run/secrets/reconciler/api/token' });
    expect(inputs.env).toEqual({ MANAGEMENT_API_URL: 'https://api.example.com' });
    expect(() => shardAuthInputs(shard, {}, undefined)).toThrow('shard team-a: the environment variable MANAGEMENT_API_TOKEN_FILE (credentials.tokenFileEnv in the shard map) is not set');
  });

  it('refuses a value that is not a variable name, at its line', async () => {
    const error = await map('shards:\n  - name: team-a\n    selector: { labels: { team: a } }\n    credentials:\n      tokenFileEnv: /var/run/token\n').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ShardMapError);
    expect((error as ShardMapError).errors).toEqual([expect.objectContaining({ file: 'shards.yaml', path: '/shards/0/credentials/tokenFileEnv', message: 'expected the name of an environment variable that holds the path of the token file' })]);
  });
});
