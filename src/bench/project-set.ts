// Scenario 11: a ProjectSet of 200 tenants (a values directory) against the same 200 projects
// written by hand. The hand-written fleet converges on the emulator; the set, which makes the
// very same documents, then runs a no-change pass over it (requests / lower bound); and the
// planner loads and plans each tree over one recording of the API's answers, in a process of
// its own (plan-child.ts), three times each: load and plan time, peak memory.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass } from '../reconcile/engine.js';
import { silentLogger } from '../util/logger.js';
import { converge, openFleetHarness } from './harness.js';
import { clientOver, recordingCaller, type Recording } from './replay.js';

const FAST = { limit: 1_000_000, windowMs: 1000 };
const RUNS = 3;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface TreeFigures {
  /** Median of the runs, ms. */
  loadMs: number;
  planMs: number;
  /** Smallest and largest peak RSS of the runs, MB. */
  peakRssMb: number;
  peakRssMaxMb: number;
}

export interface ProjectSetFigures {
  projects: number;
  requests: number;
  lowerBound: number;
  ratio: number;
  set: TreeFigures;
  handWritten: TreeFigures;
}

/** The set that makes exactly the documents fleet.ts writes by hand (sections auth, postgres, restapi; two secrets; no function). */
async function writeSet(dir: string, projects: number, organization: string): Promise<void> {
  await mkdir(join(dir, 'tenants'), { recursive: true });
  await writeFile(join(dir, 'organization.yaml'), `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${organization}\nspec: {}\n`);
  await writeFile(
    join(dir, 'tenants.yaml'),
    `apiVersion: reconciler/v1
kind: ProjectSet
metadata:
  name: tenants
spec:
  maxProjects: ${projects}
  generators:
    - values:
        path: tenants
        keyField: id
  template:
    metadata:
      name: "svc-\${id}"
    spec:
      organization: ${organization}
      region: eu-central-1
      db_pass: { valueFrom: { env: FLEET_DB_PASS } }
      auth:
        site_url: "https://app-\${index}.example.com"
        jwt_exp: 3600
        disable_signup: false
        smtp_pass: { valueFrom: { env: FLEET_SMTP_PASS } }
      postgres:
        max_connections: "\${connections}"
        statement_timeout: 30s
      restapi:
        max_rows: 1000
        db_schema: public,storage
    secrets:
      metadata:
        name: "svc-\${id}-secrets"
      spec:
        values:
          SECRET_0: { valueFrom: { env: FLEET_SECRET_0 } }
          SECRET_1: { valueFrom: { env: FLEET_SECRET_1 } }
`,
  );
  for (let i = 0; i < projects; i++) {
    const id = String(i).padStart(4, '0');
    await writeFile(join(dir, 'tenants', `${id}.yaml`), `id: "${id}"\nindex: ${i}\nconnections: ${100 + (i % 50)}\n`);
  }
}

function planInChild(dir: string, recordingFile: string, stateDir: string, env: Record<string, string>): Promise<{ loadMs: number; planMs: number; peakRssMb: number }> {
  const child = fileURLToPath(new URL('./plan-child.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, dir, recordingFile, stateDir], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`plan child exited ${code}`))));
  });
}

/** Both trees, RUNS times each, in turn (so that neither runs on a machine the other alone warmed). */
async function measureTrees(dirs: [string, string], recordingFile: string, stateDir: string, env: Record<string, string>): Promise<[TreeFigures, TreeFigures]> {
  const runs: Array<Array<{ loadMs: number; planMs: number; peakRssMb: number }>> = [[], []];
  for (let i = 0; i < RUNS; i++) for (const t of [0, 1]) runs[t]!.push(await planInChild(dirs[t]!, recordingFile, stateDir, env));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const figures = (tree: Array<{ loadMs: number; planMs: number; peakRssMb: number }>): TreeFigures => {
    const peaks = tree.map((run) => run.peakRssMb);
    return { loadMs: median(tree.map((r) => r.loadMs)), planMs: median(tree.map((r) => r.planMs)), peakRssMb: Math.min(...peaks), peakRssMaxMb: Math.max(...peaks) };
  };
  return [figures(runs[0]!), figures(runs[1]!)];
}

export async function benchProjectSet(projects = 200): Promise<ProjectSetFigures> {
  const harness = await openFleetHarness({ shape: { projects, secrets: 2, functions: 0, sections: ['auth', 'postgres', 'restapi'] }, emulatorRate: FAST, clientRate: FAST, concurrency: 8 });
  let setRoot: string | undefined;
  try {
    await converge(harness);
    setRoot = await mkdtemp(join(tmpdir(), 'reconcile-bench-set-'));
    const setDir = join(setRoot, 'manifests');
    await writeSet(setDir, projects, harness.fleet.shape.organization);
    const set = await loadManifests(setDir);
    if (set.errors.length > 0) throw new Error(`the set does not load: ${set.errors.slice(0, 3).map((e) => `${e.file}:${e.line} ${e.message}`).join('; ')}`);
    const before = harness.emulator.requests().length;
    const pass = await runPass({ manifests: set, client: harness.client, stateDir: harness.stateDir, dryRun: true, env: harness.fleet.env, log: silentLogger });
    const requests = harness.emulator.requests().slice(before).filter((e) => e.path.startsWith('/v1/')).length;
    if (pass.result !== 'success' || pass.plan.hasChanges) {
      throw new Error(`the set's pass over the converged fleet is not a no-change pass: ${JSON.stringify(pass.plan.entries.filter((e) => e.action !== 'noop').slice(0, 3))}`);
    }
    const recording: Recording = {};
    const recorded = await runPass({ manifests: set, client: clientOver(recordingCaller(harness.emulator.url, harness.emulator.token, recording)), stateDir: harness.stateDir, dryRun: true, env: harness.fleet.env, log: silentLogger });
    if (recorded.result !== 'success') throw new Error(`the recording pass failed (${recorded.result})`);
    const recordingFile = join(setDir, '..', 'recording.json');
    await writeFile(recordingFile, JSON.stringify(recording));
    const [handWritten, setFigures] = await measureTrees([harness.fleet.dir, setDir], recordingFile, harness.stateDir, harness.fleet.env);
    return { projects, requests, lowerBound: harness.fleet.lowerBound, ratio: round(requests / harness.fleet.lowerBound), set: setFigures, handWritten };
  } finally {
    await harness.close();
    if (setRoot) await rm(setRoot, { recursive: true, force: true });
  }
}
