// Credential files never lie inside the manifests tree: the tree is read and deployed (a
// function's files), and the rotated refresh token is written to its file. A refresh token
// path there (directly or through a symbolic link) is refused before anything is read from the
// API, written or deployed, and the error names the shard map and the field.
import { mkdtemp, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';

let emulator: RunningEmulator | undefined;
const roots: string[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function checkout(): Promise<{ root: string; dir: string }> {
  const root = await mkdtemp(join(tmpdir(), 'cred-paths-'));
  roots.push(root);
  const dir = join(root, 'manifests');
  await mkdir(join(dir, 'functions', 'hello'), { recursive: true });
  await writeFile(join(dir, 'functions', 'hello', 'index.ts'), 'Deno.serve(() => new Response("hi"));\n');
  await writeFile(
    join(dir, 'fleet.yaml'),
    [
      'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n',
      'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\n  labels: { team: a }\nspec:\n  organization: acme\n  region: eu-west-1\n',
      'apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: hello\nspec:\n  project: shop\n  source: ./functions/hello\n  entrypoint: index.ts\n',
    ].join('---\n'),
  );
  return { root, dir };
}

async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

function shardMap(refreshTokenFile: string): string {
  return `shards:\n  - name: team-a\n    selector:\n      labels: { team: a }\n    credentials:\n      oauth:\n        clientIdEnv: TEAM_A_CLIENT_ID\n        clientSecretEnv: TEAM_A_CLIENT_SECRET\n        refreshTokenEnv: TEAM_A_REFRESH_TOKEN\n        refreshTokenFile: ${refreshTokenFile}\n`;
}

describe('credential paths inside the manifests tree', () => {
  it('a shard map refresh token file inside a function\'s source (directly, or through a symbolic link) is refused, naming the map and the field; nothing is sent, written or deployed', async () => {
    emulator = await startEmulator({ port: 0, speed: 600 });
    for (const viaLink of [false, true]) {
      const { root, dir } = await checkout();
      let path = './functions/hello/refresh-token';
      if (viaLink) {
        await mkdir(join(root, 'credentials'));
        await symlink(join(dir, 'functions', 'hello'), join(root, 'credentials', 'tokens'));
        path = '../credentials/tokens/refresh-token';
      }
      await writeFile(join(dir, 'shards.yaml'), shardMap(path));
      const before = await tree(dir);
      const stateDir = join(root, 'state');
      const sent = emulator.requests().length;
      const run = await runCli([dir, '--shard', 'team-a'], {
        MANAGEMENT_API_URL: emulator.url,
        RECONCILE_STATE_DIR: stateDir,
        TEAM_A_CLIENT_ID: 'client',
        TEAM_A_CLIENT_SECRET: 'client-secret',
        TEAM_A_REFRESH_TOKEN: 'initial-refresh-token',
      });
      expectExit(run, 1);
      expect(run.stdout + run.stderr).toMatch(/shards\.yaml:\d+:1 \/shards\/0\/credentials\/oauth\/refreshTokenFile: shard `team-a`: credentials\.oauth\.refreshTokenFile resolves inside the manifests tree/);
      expect(emulator.requests().slice(sent)).toEqual([]);
      expect(await tree(dir)).toEqual(before);
      expect(existsSync(stateDir)).toBe(false);
      // validate says the same.
      const validate = await runCli(['validate', dir], {});
      expectExit(validate, 1);
      expect(validate.stdout + validate.stderr).toMatch(/credentials\.oauth\.refreshTokenFile resolves inside the manifests tree/);
    }
  }, 60_000);

  it('MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE and --token-file inside the manifests tree are refused by name', async () => {
    emulator = await startEmulator({ port: 0, speed: 600 });
    const { root, dir } = await checkout();
    const before = await tree(dir);
    const oauth = await runCli([dir], {
      MANAGEMENT_API_URL: emulator.url,
      RECONCILE_STATE_DIR: join(root, 'state'),
      MANAGEMENT_API_OAUTH_CLIENT_ID: 'client',
      MANAGEMENT_API_OAUTH_CLIENT_SECRET: 'secret',
      MANAGEMENT_API_OAUTH_REFRESH_TOKEN: 'initial',
      MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE: join(dir, 'functions', 'hello', 'rt'),
    });
    expectExit(oauth, 1);
    expect(oauth.stderr).toContain('MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE resolves inside the manifests tree');
    await writeFile(join(dir, 'functions', 'hello', 'token'), `${emulator.token}\n`);
    const tokenFile = await runCli([dir, '--token-file', join(dir, 'functions', 'hello', 'token')], { MANAGEMENT_API_URL: emulator.url, RECONCILE_STATE_DIR: join(root, 'state') });
    expectExit(tokenFile, 1);
    expect(tokenFile.stderr).toContain('--token-file resolves inside the manifests tree');
    expect(emulator.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await tree(dir)).toEqual([...before, 'functions/hello/token'].sort());
  }, 60_000);
  it('a daemon whose --status-token-file lies inside the manifests tree is refused by name', async () => {
    emulator = await startEmulator({ port: 0, speed: 600 });
    const { root, dir } = await checkout();
    await writeFile(join(dir, 'status-token'), 'status-token-value-0123456789\n');
    const run = await runCli([dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--status-token-file', join(dir, 'status-token')], {
      MANAGEMENT_API_URL: emulator.url,
      MANAGEMENT_API_TOKEN: emulator.token,
      RECONCILE_STATE_DIR: join(root, 'state'),
    });
    expectExit(run, 1);
    expect(run.stdout + run.stderr).toContain('--status-token-file resolves inside the manifests tree');
    expect(run.stdout + run.stderr).not.toContain('status-token-value');
    expect(emulator.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  }, 60_000);
});
