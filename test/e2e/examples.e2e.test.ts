// The README's examples/ through the built command against an emulator started here: applied
// from empty, a no-change pass at its lower bound of requests, drift made out of band seen and
// repaired, a removed manifest deleting nothing, and canary secret values never leaking.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import type { AnyDocument, ProjectDocument } from '../../src/manifests/types.js';
import { assertBuilt, copyFixture, expectExit, filesBelow, runCli, transcript } from './helpers/cli.js';

/** The GET each managed part of a project costs on a no-change pass (read replicas share the pooler list; the version comes from the project list). */
const SECTION_ROUTES: Record<string, string | undefined> = {
  auth: '/v1/projects/{ref}/config/auth',
  postgres: '/v1/projects/{ref}/config/database/postgres',
  pooler: '/v1/projects/{ref}/config/database/pooler',
  read_replicas: '/v1/projects/{ref}/config/database/pooler',
  restapi: '/v1/projects/{ref}/restapi',
  storage: '/v1/projects/{ref}/config/storage',
  network_restrictions: '/v1/projects/{ref}/network-restrictions',
  ssl_enforcement: '/v1/projects/{ref}/ssl-enforcement',
  custom_hostname: '/v1/projects/{ref}/custom-hostname',
  vanity_subdomain: '/v1/projects/{ref}/vanity-subdomain',
  cryptoext: '/v1/projects/{ref}/cryptoext',
  postgres_version: undefined,
};
const KIND_ROUTES: Record<string, string> = {
  Secrets: '/v1/projects/{ref}/secrets',
  Function: '/v1/projects/{ref}/functions',
  SsoProvider: '/v1/projects/{ref}/config/auth/sso/providers',
  Branch: '/v1/projects/{ref}/branches',
};

/** The lower bound: one project list, plus one GET per managed section and per managed list, per project. */
function expectedReads(documents: AnyDocument[]): string[] {
  const routes = ['/v1/projects'];
  for (const project of documents.filter((d): d is ProjectDocument => d.kind === 'Project')) {
    const mine = new Set<string>();
    for (const key of Object.keys(project.spec)) {
      const route = SECTION_ROUTES[key];
      if (route) mine.add(route);
    }
    for (const doc of documents) {
      if ((doc.spec as { project?: string }).project === project.metadata.name && KIND_ROUTES[doc.kind]) mine.add(KIND_ROUTES[doc.kind]!);
    }
    routes.push(...mine);
  }
  return routes.sort();
}

/** One read-only query of the history table per project a Migrations document names (the examples name one each). */
function migrationHistoryReads(documents: AnyDocument[]): string[] {
  return documents.filter((d) => d.kind === 'Migrations').map(() => 'POST /v1/projects/{ref}/database/query');
}

let emulator: RunningEmulator;
let api: ApiClient;
let dir: string;
let stateDir: string;
let env: NodeJS.ProcessEnv;
const canaries: string[] = [];

beforeAll(async () => {
  assertBuilt();
  emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  api = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  dir = await copyFixture('examples');
  stateDir = await mkdtemp(join(tmpdir(), 'reconcile-examples-state-'));
  env = { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, RECONCILE_STATE_DIR: stateDir, RECONCILE_RATE_LIMIT: '1000/1s' };
  // Plant a canary in every variable the examples reference.
  const names = new Set<string>();
  for (const file of await filesBelow(dir)) {
    if (!/\.ya?ml$/.test(file.path)) continue;
    for (const match of file.text.matchAll(/^\s*env:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/gm)) names.add(match[1]!);
  }
  expect(names.size).toBeGreaterThan(0);
  for (const name of names) {
    // Derived from the name, not drawn: the same canaries on every run, one per variable.
    const canary = `canary-${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
    canaries.push(canary);
    env[name] = canary;
  }
});

afterAll(async () => {
  await api?.close();
  await emulator?.close();
  await rm(dirname(dir), { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
});

const apiRequests = (since: number) => emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));

describe('examples/ through the built command', () => {
  it('applies from empty (exit 0)', async () => {
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(run.stdout).toMatch(/Apply: \d+ succeeded, 0 failed, 0 skipped\./);
    // The getting-started page shows this run's summary: the plan, the apply (writes only,
    // so it adds up to the plan), the readiness and read-back lines, exactly as printed.
    const readme = await readFile(new URL('../../docs/getting-started.md', import.meta.url), 'utf8');
    const quickstart = readme.slice(readme.indexOf('<!-- section:quickstart -->'), readme.indexOf('<!-- /section:quickstart -->'));
    for (const prefix of ['Plan: ', 'Apply: ', 'Waited for ', 'Read back ']) {
      const documented = quickstart.split('\n').map((line) => line.trim()).find((line) => line.startsWith(prefix));
      expect(documented, prefix).toBeDefined();
      expect(run.stdout.split('\n'), prefix).toContain(documented);
    }
    expect((await api.api.listAllProjects()).map((p) => p.name).sort()).toEqual(['analytics-lab', 'lab-initech', 'lab-umbrella', 'shop-production', 'shop-staging']);
  });

  it('then plans no change (exit 0 with --detailed-exitcode), reading GET only (and each migrations history), one list and one GET per managed section', async () => {
    const since = emulator.requests().length;
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode'], env);
    expectExit(run, 0);
    expect(run.stdout).toContain('No changes.');
    const sent = apiRequests(since);
    // Besides GETs, only the read-only query of each migrations history.
    const manifests = await loadManifests(dir);
    expect(sent.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.route}`)).toEqual(migrationHistoryReads(manifests.documents));
    expect(sent.filter((r) => r.method === 'GET').map((r) => r.route).sort()).toEqual(expectedReads(manifests.documents));
  });

  it('shows an out-of-band change as exactly that drift (exit 2), and repairs it on apply', async () => {
    const production = (await api.api.listAllProjects()).find((p) => p.name === 'shop-production')!;
    await api.api.updateAuthServiceConfig(production.ref, { site_url: 'https://defaced.example', password_min_length: 6 });
    const run = await runCli([dir, '--dry-run', '--detailed-exitcode', '--output', 'json'], env);
    expectExit(run, 2);
    const changed = JSON.parse(run.stdout).entries.filter((e: { action: string }) => e.action !== 'noop');
    expect(changed).toHaveLength(1);
    expect(changed[0].id).toBe('ProjectAuth/shop-production/auth');
    expect(changed[0].changes.map((c: { path: string }) => c.path)).toEqual(['auth.password_min_length', 'auth.site_url']);

    expectExit(await runCli([dir], env), 0);
    expect((await api.api.getAuthServiceConfig(production.ref)).site_url).toBe('https://shop.acme-commerce.example');
    expectExit(await runCli([dir, '--dry-run', '--detailed-exitcode'], env), 0);
  });

  it('deletes nothing when a project manifest is removed under the default policy', async () => {
    await rm(join(dir, 'projects', 'analytics-lab.yaml'));
    const since = emulator.requests().length;
    const run = await runCli([dir], env);
    expectExit(run, 0);
    expect(apiRequests(since).filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await api.api.listAllProjects()).map((p) => p.name)).toContain('analytics-lab');
    const inventory = JSON.parse(await readFile(join(stateDir, 'inventory.json'), 'utf8'));
    expect(Object.keys(inventory.projects).sort()).toEqual(['lab-initech', 'lab-umbrella', 'shop-production', 'shop-staging']);
  });

  it('never shows a canary secret value in any output, the state directory or the manifests', async () => {
    const files = [...(await filesBelow(stateDir)), ...(await filesBelow(dir))];
    for (const canary of canaries) {
      for (const text of transcript) expect(text.includes(canary)).toBe(false);
      for (const file of files) expect(file.text.includes(canary), file.path).toBe(false);
    }
  });
});
