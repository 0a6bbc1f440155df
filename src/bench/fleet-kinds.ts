// Bench scenario for secrets and functions: a fleet of 3 projects, each with 20 functions
// and 30 secrets, reconciled by full passes (the engine, the real client, the emulator over
// loopback HTTP). Reports what a no-change pass costs against its lower bound (one project
// list, plus one functions list and one secrets list per project: these manifests manage no
// configuration section) and how many deploys one changed function causes.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator } from '../emulator/index.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass } from '../reconcile/engine.js';
import { silentLogger } from '../util/logger.js';

interface FleetKindsOptions {
  projects?: number;
  functions?: number;
  secrets?: number;
}

const FUNCTION_ROUTES = new Set(['/v1/projects/{ref}/functions/{function_slug}', '/v1/projects/{ref}/functions/{function_slug}/body']);

export async function benchFleetKinds(options: FleetKindsOptions = {}): Promise<Record<string, number>> {
  const projects = options.projects ?? 3;
  const functions = options.functions ?? 20;
  const secrets = options.secrets ?? 30;
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 6000, windowMs: 1000 } });
  const root = await mkdtemp(join(tmpdir(), 'bench-fleet-kinds-'));
  const stateDir = join(root, '.state');
  const manifestsDir = join(root, 'manifests');
  const client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 5000, windowMs: 1000 }, stateDir });
  try {
    const api = client.api;
    const org = (await api.listAllOrganizations())[0]?.id ?? (await api.createAnOrganization({ name: 'bench' })).id;
    const env: NodeJS.ProcessEnv = {};
    const docs: string[] = [`apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: bench\nspec:\n  slug: ${org}\n`];
    for (let p = 0; p < projects; p++) {
      const name = `fleet-${p}`;
      const created = await api.createAProject({ name, organization_id: org, region: 'eu-west-1', db_pass: `bench-db-pass-${p}-longer` } as Parameters<typeof api.createAProject>[0]);
      const ref = (created as { ref?: string }).ref ?? created.id;
      // The emulator's lifecycle clock is moved past the creation instead of waiting for it.
      emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
      docs.push(`apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\nspec:\n  organization: bench\n  ref: ${ref}\n  region: eu-west-1\n  prune:\n    functions: true\n`);
      const values = Array.from({ length: secrets }, (_, s) => {
        env[`BENCH_${p}_${s}`] = `bench-secret-${p}-${s}`;
        return `    SECRET_${s}:\n      valueFrom:\n        env: BENCH_${p}_${s}\n`;
      }).join('');
      docs.push(`apiVersion: reconciler/v1\nkind: Secrets\nmetadata:\n  name: ${name}-secrets\nspec:\n  project: ${name}\n  prune: true\n  values:\n${values}`);
      for (let f = 0; f < functions; f++) {
        const slug = `fn-${String(f).padStart(2, '0')}`;
        const dir = join(manifestsDir, name, slug);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, 'index.ts'), `Deno.serve(() => new Response(${JSON.stringify(`${name} ${slug}`)}));\n`);
        docs.push(`apiVersion: reconciler/v1\nkind: Function\nmetadata:\n  name: ${slug}\nspec:\n  project: ${name}\n  slug: ${slug}\n  source: ${name}/${slug}\n  entrypoint: index.ts\n  verify_jwt: false\n`);
      }
    }
    await writeFile(join(manifestsDir, 'fleet.yaml'), docs.join('---\n'));

    const pass = async (dryRun: boolean) => {
      const manifests = await loadManifests(manifestsDir);
      if (manifests.errors.length) throw new Error(`bench manifests invalid: ${manifests.errors.map((e) => `${e.file}:${e.line} ${e.path} ${e.message}`).join('; ')}`);
      const since = emulator.requests().length;
      const result = await runPass({ manifests, client, stateDir, dryRun, env, log: silentLogger });
      if (result.result !== 'success') throw new Error(`bench pass failed: ${JSON.stringify(result.outcomes.filter((o) => o.result === 'failed'))}`);
      return emulator.requests().slice(since);
    };

    await pass(false); // converge from nothing
    const noChange = await pass(true);
    const count = (method: string, route: string) => noChange.filter((r) => r.method === method && r.route === route).length;
    const lowerBound = 1 + 2 * projects;
    const functionLists = count('GET', '/v1/projects/{ref}/functions');
    const secretLists = count('GET', '/v1/projects/{ref}/secrets');

    await writeFile(join(manifestsDir, 'fleet-1', 'fn-07', 'index.ts'), 'Deno.serve(() => new Response("changed"));\n');
    const afterChange = await pass(false);
    const writes = afterChange.filter((r) => r.method !== 'GET');
    return {
      fleet_projects: projects,
      fleet_functions_per_project: functions,
      fleet_secrets_per_project: secrets,
      no_change_requests: noChange.length,
      no_change_lower_bound: lowerBound,
      no_change_ratio: Number((noChange.length / lowerBound).toFixed(2)),
      no_change_requests_per_project: Number(((noChange.length - 1) / projects).toFixed(2)),
      no_change_function_lists_per_project: functionLists / projects,
      no_change_secret_lists_per_project: secretLists / projects,
      no_change_per_function_reads: noChange.filter((r) => FUNCTION_ROUTES.has(r.route)).length,
      deploys_after_one_change: afterChange.filter((r) => r.method === 'POST' && r.route === '/v1/projects/{ref}/functions/deploy').length,
      writes_after_one_change: writes.length,
    };
  } finally {
    await client.close();
    await emulator.close();
    await rm(root, { recursive: true, force: true });
  }
}
