// Bench scenario for the Migrations kind on the emulator's Postgres (PGlite, one database per
// project): a fleet of N projects, three migration files applied through a label selector.
// Reports the emulator's memory once every project has a database, what a project's first
// query costs, the requests of the apply (one per migration and project), and what a no-change
// pass costs against its lower bound (one project list, plus one history read per project:
// these manifests manage no configuration section).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTemplate } from '../emulator/databases.js';
import { DEFAULT_DURATIONS, startEmulator } from '../emulator/index.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass } from '../reconcile/engine.js';
import { silentLogger } from '../util/logger.js';

const QUERY_ROUTE = '/v1/projects/{ref}/database/query';
const MB = 1024 * 1024;

const FILES: Record<string, string> = {
  '20260101000000_items.sql': 'create table items (id bigint generated always as identity primary key, name text not null);\n',
  '20260102000000_orders.sql': 'create table orders (id bigint primary key, item bigint references items (id));\ncreate index orders_item on orders (item);\n',
  '20260103000000_prices.sql': 'alter table items add column price numeric not null default 0;\n',
};

/**
 * A database cluster made from scratch (initdb, then the platform's bootstrap), which the
 * emulator does once per machine: it keeps the data directory as a template in the temporary directory and starts every project's
 * database from it. Measured last, so that its memory is not in the emulator's figures.
 */
async function initdb(): Promise<number> {
  const started = performance.now();
  await createTemplate();
  return performance.now() - started;
}

export async function benchMigrations(options: { projects?: number } = {}): Promise<Record<string, number>> {
  const projects = options.projects ?? 100;
  let started: number;
  const rssBefore = process.memoryUsage().rss;
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 1000 } });
  const root = await mkdtemp(join(tmpdir(), 'bench-migrations-'));
  const stateDir = join(root, '.state');
  const manifestsDir = join(root, 'manifests');
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 50_000, windowMs: 1000 }, stateDir });
  let peakRss = rssBefore;
  const sample = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  try {
    const api = client.api;
    const org = (await api.listAllOrganizations())[0]?.id ?? (await api.createAnOrganization({ name: 'bench' })).id;
    const docs: string[] = [`apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: bench\nspec:\n  slug: ${org}\n`];
    const refs: string[] = [];
    for (let p = 0; p < projects; p++) {
      const name = `tenant-${p}`;
      const created = await api.createAProject({ name, organization_id: org, region: 'eu-west-1', db_pass: `bench-db-pass-${p}-longer` } as Parameters<typeof api.createAProject>[0]);
      refs.push(created.ref ?? created.id);
      emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
      docs.push(`apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\n  labels:\n    tier: tenant\nspec:\n  organization: bench\n  ref: ${refs[p]}\n  region: eu-west-1\n`);
    }
    docs.push('apiVersion: reconciler/v1\nkind: Migrations\nmetadata:\n  name: tenant-schema\nspec:\n  selector:\n    labels:\n      tier: tenant\n  path: migrations\n');
    await mkdir(join(manifestsDir, 'migrations'), { recursive: true });
    await writeFile(join(manifestsDir, 'fleet.yaml'), docs.join('---\n'));
    for (const [name, sql] of Object.entries(FILES)) await writeFile(join(manifestsDir, 'migrations', name), sql);

    // A project's first query starts its database (from the template); the second runs on it.
    started = performance.now();
    await api.runAQuery(refs[0]!, { query: 'select 1', read_only: true });
    const firstQueryMs = performance.now() - started;
    started = performance.now();
    await api.runAQuery(refs[0]!, { query: 'select 1', read_only: true });
    const nextQueryMs = performance.now() - started;

    const manifests = await loadManifests(manifestsDir);
    if (manifests.errors.length) throw new Error(`bench manifests invalid: ${manifests.errors.map((e) => `${e.file}:${e.line} ${e.path} ${e.message}`).join('; ')}`);
    const pass = async (only?: string[]) => {
      const since = emulator.requests().length;
      const begin = performance.now();
      const result = await runPass({ manifests, client, stateDir, dryRun: false, env: {}, log: silentLogger, ...(only ? { projects: only } : {}) });
      if (result.result !== 'success') throw new Error(`bench pass failed: ${JSON.stringify(result.outcomes.filter((o) => o.result === 'failed').slice(0, 3))}`);
      return { requests: emulator.requests().slice(since), seconds: (performance.now() - begin) / 1000 };
    };

    // The apply goes in batches of as many projects as the emulator keeps databases open: the
    // engine applies a pass's projects side by side, and more projects than open databases would
    // make the emulator save and reopen a database between two requests of one project.
    const batch = emulator.databaseStats().maxOpen;
    const names = Array.from({ length: projects }, (_, p) => `tenant-${p}`);
    const apply = { requests: [] as Awaited<ReturnType<typeof pass>>['requests'], seconds: 0 };
    for (let i = 0; i < projects; i += batch) {
      const part = await pass(names.slice(i, i + batch));
      apply.requests.push(...part.requests);
      apply.seconds += part.seconds;
    }
    const writing = apply.requests.filter((r) => r.route === QUERY_ROUTE && r.sql?.readOnly !== true).length;
    const stats = emulator.databaseStats();
    const rssWithDatabases = process.memoryUsage().rss;
    const noChange = await pass();
    const lowerBound = 1 + projects;
    return {
      projects,
      initdb_ms: Math.round(await initdb()),
      first_query_ms: Math.round(firstQueryMs),
      next_query_ms: Math.round(nextQueryMs),
      apply_seconds: Number(apply.seconds.toFixed(1)),
      apply_writing_queries: writing,
      apply_migrations: Object.keys(FILES).length * projects,
      writing_queries_per_migration: Number((writing / (Object.keys(FILES).length * projects)).toFixed(2)),
      databases_opened: stats.opened,
      databases_open_at_most: batch,
      no_change_seconds: Number(noChange.seconds.toFixed(1)),
      databases_saved: stats.saved,
      saved_mb: Number((stats.savedBytes / MB).toFixed(1)),
      rss_before_mb: Math.round(rssBefore / MB),
      rss_with_databases_mb: Math.round(rssWithDatabases / MB),
      peak_rss_mb: Math.round(peakRss / MB),
      no_change_requests: noChange.requests.length,
      no_change_lower_bound: lowerBound,
      no_change_ratio: Number((noChange.requests.length / lowerBound).toFixed(2)),
      no_change_history_reads: noChange.requests.filter((r) => r.route === QUERY_ROUTE).length,
      no_change_writing_queries: noChange.requests.filter((r) => r.route === QUERY_ROUTE && r.sql?.readOnly !== true).length,
    };
  } finally {
    clearInterval(sample);
    await client.close();
    await emulator.close();
    await rm(root, { recursive: true, force: true });
  }
}
