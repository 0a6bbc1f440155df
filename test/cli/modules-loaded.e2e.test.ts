// What a pass loads before it can send its first request is paid by every process at its start
// (each shard, each CI run): the built command loads a library only for the work that needs it.
// A plain pass over plain YAML loads neither Node's HTTP modules (requests go over node:net),
// the YAML library (the checkout's reader takes plain block YAML itself), node-cron (a Rollout
// window's schedule), the schema compiler, the daemon's libraries, the emulator's Postgres,
// nor Node's own modules for starting git and for asking a person. A checkout that needs them
// loads them: an anchor takes the full YAML parser, a window takes node-cron.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assertBuilt, BIN, NODE, REPO } from '../e2e/helpers/cli.js';

/** Records the URL of every module loaded, through Node's synchronous module hooks. */
const HOOK = `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const log = process.env.MODULES_LOG;
registerHooks({ load(url, context, next) { appendFileSync(log, url + '\\n'); return next(url, context); } });
`;

const ORGANIZATION = 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: modules-org\nspec: {}\n';
const project = (extra = '') => `apiVersion: reconciler/v1
kind: Project
metadata:
  name: modules-shop
spec:
  organization: modules-org
  region: eu-central-1
  postgres:
    statement_timeout: 30s${extra}
`;
const ROLLOUT = `apiVersion: reconciler/v1
kind: Rollout
metadata:
  name: modules-rollout
spec:
  windows:
    - name: saturday-nights
      schedule: '0 2 * * 6'
      duration: 4h
      selector: { labels: { environment: production } }
`;

let emulator: RunningEmulator;
let root: string;
let hook: string;

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 1000, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  root = await mkdtemp(join(tmpdir(), 'reconcile-modules-'));
  hook = join(root, 'hook.mjs');
  await writeFile(hook, HOOK);
});

afterAll(async () => {
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A dry-run pass of the built command over `files`; the URL of every module it loaded. */
async function loadedBy(name: string, files: Record<string, string>): Promise<string[]> {
  const dir = join(root, name, 'manifests');
  await mkdir(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  const log = join(root, name, 'modules.log');
  await writeFile(log, '');
  const child = spawn(NODE, ['--import', pathToFileURL(hook).href, BIN, dir, '--dry-run', '--state-dir', join(root, name, 'state')], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, MODULES_LOG: log },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  // A dry run that plans the project's creation and fails nothing.
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
  return (await readFile(log, 'utf8')).split('\n').filter((url) => url !== '');
}

/** The modules of package `name` among `loaded`, as paths from node_modules. */
function fromPackage(loaded: string[], name: string): string[] {
  const prefix = pathToFileURL(join(REPO, 'node_modules')).href + '/';
  return loaded.filter((url) => url.startsWith(`${prefix}${name}/`)).map((url) => url.slice(prefix.length));
}

describe('the libraries a pass loads', () => {
  it('a plain pass over plain YAML loads none of the libraries it has no work for', async () => {
    const loaded = await loadedBy('plain', { 'organization.yaml': ORGANIZATION, 'shop.yaml': project() });
    // The requests go over node:net (node:tls only for an https origin): not node:http, whose
    // parser and agent cost tens of milliseconds of every start.
    expect(loaded).toContain('node:net');
    expect(loaded.filter((url) => url === 'node:http' || url === 'node:https' || url === 'node:tls')).toEqual([]);
    for (const name of ['yaml', 'node-cron', 'chokidar', 'prom-client', '@electric-sql/pglite', 'libpg-query']) expect(fromPackage(loaded, name)).toEqual([]);
    // The schema validators are compiled ahead (schema-checks.ts): Ajv's compiler is not loaded.
    expect(fromPackage(loaded, 'ajv').filter((path) => !path.startsWith('ajv/dist/runtime/'))).toEqual([]);
    // Node's own modules for git (a HEAD its files do not answer) and for asking a person; and
    // node:process, whose module namespace Node builds by reading every property of `process`.
    expect(loaded.filter((url) => url === 'node:child_process' || url === 'node:readline' || url === 'node:process')).toEqual([]);
  });

  it('a file that needs the full YAML parser loads the YAML library, and a Rollout window loads node-cron', async () => {
    const withAnchor = project().replace('region: eu-central-1', 'region: &region eu-central-1');
    const loaded = await loadedBy('needs-them', { 'organization.yaml': ORGANIZATION, 'shop.yaml': withAnchor, 'rollout.yaml': ROLLOUT });
    expect(fromPackage(loaded, 'yaml').length).toBeGreaterThan(0);
    expect(fromPackage(loaded, 'node-cron').length).toBeGreaterThan(0);
  });
});
