// `npm run bench`: runs every scenario against the emulator, prints a table and writes
// bench-results/latest.json. `--quick` runs smaller fleets (a smoke run, not for figures).
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { cpus, totalmem } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { benchBudget } from './budget.js';
import { benchFleetKinds } from './fleet-kinds.js';
import { continuousFreshness, freshnessThroughWrites } from './freshness.js';
import { statusAgainstDaemon } from './status-read.js';
import { convergeAndLatency, longRun, passByModel, passCost, type PassCostFigures } from './scenarios.js';
import { shardScaling } from './shards.js';
import { benchMigrations } from './migrations.js';
import { benchProjectSet } from './project-set.js';
import { fullFleetPass, type FullFleetFigures } from './full-fleet.js';
import { daemonFreshnessThroughWrites, type DaemonFreshnessFigures } from './freshness-daemon.js';
import { benchMigrationCorpus } from './migrations-corpus.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string' }, corpus: { type: 'string' }, out: { type: 'string', default: 'bench-results/latest.json' } } });
const quick = Boolean(values.quick);
const sizes = quick ? [5, 20] : [10, 100, 1000];

interface Row {
  scenario: string;
  metric: string;
  ours: string | number;
  naive: string | number;
  target: string;
  ok: boolean | undefined;
}
const rows: Row[] = [];
const row = (scenario: string, metric: string, ours: string | number, naive: string | number, target: string, ok?: boolean) =>
  rows.push({ scenario, metric, ours, naive, target, ok });

const started = performance.now();
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}`;

/** Prints the table of the rows so far and the line that dates it. */
function printRows(): number {
  const seconds = Math.round((performance.now() - started) / 1000);
  const widths = ['scenario', 'metric', 'ours', 'naive', 'target'].map((key) => Math.max(key.length, ...rows.map((r) => String(r[key as keyof Row]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  process.stdout.write(`${line(['scenario', 'metric', 'ours', 'naive', 'target'])} | met\n`);
  process.stdout.write(`${widths.map((w) => '-'.repeat(w)).join('-|-')}-|----\n`);
  for (const r of rows) process.stdout.write(`${line([r.scenario, r.metric, String(r.ours), String(r.naive), r.target])} | ${r.ok === undefined ? '' : r.ok ? 'yes' : 'NO'}\n`);
  process.stdout.write(`\n${new Date().toISOString().slice(0, 10)}, ${machine}, ${seconds} s${quick ? ' (quick)' : ''}\n`);
  return seconds;
}

/** Scenario 10: migrations on the emulator's Postgres, one database per project. */
async function migrationScenario(): Promise<Record<string, number>> {
  const projects = quick ? 10 : 100;
  log(`migrations: 3 files through a selector to ${projects} projects, each with a database of its own`);
  const m = await benchMigrations({ projects });
  row('10 migrations', `${m.projects} projects x 3 files: writing queries / migrations (${m.apply_writing_queries} / ${m.apply_migrations})`, m.writing_queries_per_migration, '-', '1.00', m.writing_queries_per_migration === 1);
  row('10 migrations', `no-change pass: requests / lower bound (${m.no_change_requests} / ${m.no_change_lower_bound}: the project list and one history read per project)`, m.no_change_ratio, '-', '1.00', m.no_change_ratio <= 1);
  row('10 migrations', `process memory (RSS, MB) with ${m.projects} project databases, at most ${m.databases_open_at_most} open: before / after / peak`, `${m.rss_before_mb} / ${m.rss_with_databases_mb} / ${m.peak_rss_mb}`, '-', '', undefined);
  row('10 migrations', `saved (evicted) databases on disk: ${m.databases_saved} files, MB`, m.saved_mb, '-', '', undefined);
  row('10 migrations', 'first query of a project (ms; its database starts from the template) / next query (ms) / the template once per machine: initdb and the bootstrap (ms)', `${m.first_query_ms} / ${m.next_query_ms} / ${m.initdb_ms}`, '-', '', undefined);
  row('10 migrations', `apply (s, in batches of ${m.databases_open_at_most} projects) / no-change pass (s)`, `${m.apply_seconds} / ${m.no_change_seconds}`, '-', '', undefined);
  return m;
}

/** Scenario 12: a ProjectSet of 200 tenants against the same projects written by hand. */
async function projectSetScenario(): Promise<Record<string, unknown>> {
  const projects = quick ? 20 : 200;
  log(`project set: ${projects} tenants from a values directory, against the same ${projects} projects written by hand`);
  const f = await benchProjectSet(projects);
  row('12 project set', `${f.projects} tenants: no-change pass, requests / lower bound (${f.requests} / ${f.lowerBound})`, f.ratio, '-', '1.00', f.ratio <= 1);
  const total = (t: { loadMs: number; planMs: number }) => t.loadMs + t.planMs;
  row('12 project set', 'load + plan (ms, median of 3): the set / the same projects by hand', `${f.set.loadMs} + ${f.set.planMs} = ${total(f.set)} / ${f.handWritten.loadMs} + ${f.handWritten.planMs} = ${total(f.handWritten)}`, '-', 'set <= by hand', total(f.set) <= total(f.handWritten));
  row('12 project set', 'peak memory (MB, smallest of 3; largest): the set / by hand', `${f.set.peakRssMb} (${f.set.peakRssMaxMb}) / ${f.handWritten.peakRssMb} (${f.handWritten.peakRssMaxMb})`, '-', 'set <= by hand', f.set.peakRssMb <= f.handWritten.peakRssMb);
  return f as unknown as Record<string, unknown>;
}

/** Scenario 11: the built command over 1,000 full projects (100 with --quick), CPU and peak memory of its own process. */
async function fullFleetScenario(): Promise<FullFleetFigures> {
  const projects = quick ? 100 : 1000;
  log(`full fleet: ${projects} projects with every section, secrets, a function and an SSO provider each`);
  const f = await fullFleetPass({ projects, log });
  const g = f.goals;
  row('11 full fleet', `${f.projects} projects (${f.files} files, ${f.yamlMb} MB of YAML): no-change pass, CPU s of the command, median of ${f.noChange.runs.length} runs (${f.noChange.runs.map((r) => r.cpuSeconds).join(', ')})`, f.noChange.cpuSeconds, '-', `< ${g.noChangeCpuSeconds}`, f.noChange.cpuSeconds < g.noChangeCpuSeconds);
  row('11 full fleet', `no-change pass: peak RSS MB, median (${f.noChange.runs.map((r) => r.peakRssMb).join(', ')})`, f.noChange.peakRssMb, '-', `< ${g.noChangePeakRssMb}`, f.noChange.peakRssMb < g.noChangePeakRssMb);
  row('11 full fleet', `apply from empty: peak RSS MB (CPU ${f.apply.cpuSeconds} s, ${f.apply.uptimeSeconds} s)`, f.apply.peakRssMb, '-', `< ${g.applyPeakRssMb}`, f.apply.peakRssMb < g.applyPeakRssMb);
  return f;
}

/** Scenario 7: three shards against one identity. */
async function shardScenario(): Promise<Awaited<ReturnType<typeof shardScaling>>> {
  const shardProjects = quick ? 15 : 45;
  log(`converge ${shardProjects} projects from empty: one shard, then three shards with a user and budget each`);
  const shards = await shardScaling(shardProjects, 20, 1000, quick ? 1 : 3);
  row(
    '7 shards',
    `${shards.projects} projects from empty, ${shards.budget} each: 3 shards' time / (1 shard's time / 3), median of ${shards.ratios.length} pairs run in turn (${shards.ratios.join(', ')}; the median: ${shards.sharded.seconds}s / ${shards.single.seconds}s / 3)`,
    shards.ratio,
    '-',
    '<= 1.15',
    shards.ratio <= 1.15,
  );
  row('7 shards', 'requests: 1 shard / 3 shards; 429 answers', `${shards.single.requests} / ${shards.sharded.requests}; ${shards.single.rateLimited + shards.sharded.rateLimited}`, '-', '', undefined);
  row('7 shards', 'per shard: s from its process start to its first request / its first write', shards.sharded.firstRequest.map((f) => `${f.requestSeconds} / ${f.writeSeconds}`).join('; '), '-', '', undefined);
  return shards;
}

/** Scenario 8b: the built daemon through a write pass, on a real budget in wall-clock time (a scaled-down 60 per minute). */
async function daemonFreshnessScenario(): Promise<DaemonFreshnessFigures> {
  const shape = quick ? { projects: 15, changed: 5 } : { projects: 30, changed: 10 };
  const rateLimit = '60/20s';
  log(`the built daemon, ${shape.projects} projects, --resync continuous --rate-limit ${rateLimit}: a revision changes ${shape.changed} of them (wall-clock time, a few minutes)`);
  const f = await daemonFreshnessThroughWrites({ ...shape, rateLimit, log });
  row(
    '8b freshness, built daemon',
    `${f.projects} projects at ${f.rateLimit}, a write pass of ${f.writeRequests} requests (${f.writeSeconds}s): largest age / bound stated in the same scrape (age up to ${f.largestAgeSeconds}s; bound ${f.boundBeforeSeconds}s before, up to ${f.boundLargestSeconds}s; ${f.ratioBefore} before the revision)`,
    f.ratioThrough,
    '-',
    '<= 1.10',
    f.ratioThrough <= 1.1,
  );
  return f;
}

/**
 * Scenario 10b: a corpus of migration directories, one project each: validate, apply, a
 * no-change plan, and adoption of the history the platform CLI would have written.
 */
async function corpusScenario(dir: string): Promise<Awaited<ReturnType<typeof benchMigrationCorpus>>> {
  log(`migrations corpus: every folder of ${dir}, one project each`);
  const c = await benchMigrationCorpus(dir);
  for (const f of c.folders) {
    const what = f.invalid.length ? `invalid: ${f.invalid[0]}` : f.failure ? `failed: ${f.failure}` : 'applied';
    row('10 corpus', `${f.folder}: files applied / files (${what.slice(0, 160)})`, `${f.applied} / ${f.files}`, '-', '', undefined);
    row('10 corpus', `${f.folder}: no change after the apply; CLI history adopted (no change / rows)`, `${f.converged ? 'yes' : 'no'}; ${f.adopted} / ${f.adoptable}`, '-', '', undefined);
  }
  row('10 corpus', `files applied / files (${c.folders.length} folders)`, `${c.applied} / ${c.files}`, '-', '', undefined);
  row('10 corpus', 'folders that converge with no change', `${c.converged} / ${c.folders.length}`, '-', '', undefined);
  row('10 corpus', 'CLI-written history rows that plan no change', `${c.adopted} / ${c.adoptable}`, '-', 'all', c.adopted === c.adoptable);
  const loading = await loadingPeak(EXAMPLES);
  row('10 corpus', `loading the examples (their migrations hold CHECK constraints; ${loading.documents} documents, ${loading.errors} errors): peak RSS of the loading process, MB`, loading.peakRssMb, '-', '< 512 (the chart\'s limit)', loading.peakRssMb < 512 && loading.errors === 0);
  const perMigration = c.writingQueriesPerMigration;
  row('10 corpus', 'writing requests per applied migration (folders without a failure)', perMigration ?? '-', '-', '1.00', perMigration === undefined ? undefined : perMigration <= 1);
  return c;
}

const CORPUS = new URL('../../test/fixtures/migrations-corpus', import.meta.url).pathname;
const EXAMPLES = new URL('../../examples', import.meta.url).pathname;

/** Peak memory of a process that loads `dir` (load-child.ts), background compilation included. */
async function loadingPeak(dir: string): Promise<{ peakRssMb: number; errors: number; documents: number }> {
  const child = fileURLToPath(new URL('./load-child.js', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [child, dir]);
  return JSON.parse(stdout) as { peakRssMb: number; errors: number; documents: number };
}

// `--only NAME` runs one scenario alone (while working on it); `--only migrations --corpus DIR`
// runs the corpus scenario over DIR's folders alone (a directory of real migrations, never committed).
const ALONE: Record<string, () => Promise<unknown>> = {
  migrations: () => (values.corpus === undefined ? migrationScenario() : corpusScenario(values.corpus)),
  'full-fleet': fullFleetScenario,
  shards: shardScenario,
  'freshness-daemon': daemonFreshnessScenario,
  'project-set': projectSetScenario,
};
if (values.only !== undefined) {
  const scenario = ALONE[values.only];
  if (!scenario) throw new Error(`--only: the scenarios that run alone are ${Object.keys(ALONE).map((k) => `\`${k}\``).join(', ')}; got \`${values.only}\``);
  if (values.corpus !== undefined && values.only !== 'migrations') throw new Error('--corpus DIR goes with --only migrations');
  const figures = await scenario();
  const seconds = printRows();
  await mkdir(dirname(resolve(values.out!)), { recursive: true });
  await writeFile(values.out!, `${JSON.stringify({ date: new Date().toISOString(), machine, seconds, quick, rows, [values.corpus === undefined ? values.only : 'corpus']: figures }, null, 2)}\n`);
  process.exit(0);
}
if (values.corpus !== undefined) throw new Error('--corpus DIR goes with --only migrations');

const passCosts: PassCostFigures[] = [];
for (const size of sizes) {
  log(`no-change pass over ${size} projects`);
  const figures = await passCost(size, { measurePlan: size === sizes[sizes.length - 1] });
  passCosts.push(figures);
  row('1 no-change pass', `${size} projects: requests / lower bound (${figures.requests} / ${figures.lowerBound})`, figures.ratio, `${figures.naiveRatio} (${figures.naiveRequests})`, '1.00', figures.ratio <= 1.0);
}
const plan = passCosts[passCosts.length - 1]!.plan!;
row('5 plan', `${sizes[sizes.length - 1]} projects: plan time (ms), median of 3 runs, load ${plan.loadMs} ms`, plan.planMs, 'same planner', '< 1000', plan.planMs < 1000);
row('5 plan', `${sizes[sizes.length - 1]} projects: peak memory (MB), smallest of 3 runs (largest ${plan.peakRssMaxMb})`, plan.peakRssMb, 'same planner', '< 200', plan.peakRssMb < 200);

log('long run with drift re-checks');
const long = await longRun(quick ? 5 : 15);
row('2 long run', `largest window / budget, at send (${long.windows} windows)`, long.ours.maxWindowOverBudget, '-', '<= 1.00', long.ours.maxWindowOverBudget <= 1);
row('2 long run', 'largest window / budget, at arrival', long.ours.maxWindowOverBudgetAtService, `${long.naive.maxWindowOverLimit} (of 60)`, '', undefined);
row('2 long run', '429 answers received', long.ours.rateLimited, long.naive.rateLimited, '0', long.ours.rateLimited === 0);

log('long run while a colleague spends 10 requests per window of the same limit');
const shared = await longRun(quick ? 5 : 15, 1000, true);
row('2 shared limit', 'largest window / budget, at send', shared.ours.maxWindowOverBudget, '-', '<= 1.00', shared.ours.maxWindowOverBudget <= 1);
row('2 shared limit', '429 answers received', shared.ours.rateLimited, shared.naive.rateLimited, '', undefined);
row('2 shared limit', '429 answers the colleague received', shared.colleagueRefused.withOurs, shared.colleagueRefused.withNaive, '', undefined);

log('convergence from empty and write latency behind a drift sweep');
const conv = await convergeAndLatency(quick ? 4 : 10);
row('3 converge', `${conv.projects} projects: time / minimum (${conv.seconds}s / ${conv.minimumSeconds}s, ${conv.requests} requests)`, conv.ratio, `${conv.naiveModelledRatio} (modelled)`, '<= 1.10', conv.ratio <= 1.1);
row('4 latency', 'request slots from a new write to its send, behind a 200-read sweep', conv.writeLatencySlots, conv.naiveWriteLatencySlots, '<= 3', conv.writeLatencySlots <= 3);

log('request budget under a workload larger than it');
const budget = await benchBudget({ scale: 60, windows: quick ? 3 : 6 });
row('budget', `largest window / budget (${budget.requestsSent} requests)`, budget.maxWindowOverBudget, '-', '<= 1.00', budget.maxWindowOverBudget <= 1);
row('budget', 'budget used while work waits', budget.budgetUsedWhileWaiting, '-', '>= 0.95', budget.budgetUsedWhileWaiting >= 0.95);
row('budget', '429 answers', budget.rateLimited, '-', '0', budget.rateLimited === 0);

const modelProjects = quick ? 20 : 100;
log(`no-change pass over ${modelProjects} projects in each rate model`);
const byUser = await passByModel('user', modelProjects);
const byScope = await passByModel('scoped', modelProjects);
for (const figures of [byUser, byScope]) {
  row(
    '6 rate model',
    `${figures.model}: ${figures.projects} projects, ${figures.requests} requests (${figures.userScoped} against the user): seconds (least the user's budget allows)`,
    `${figures.seconds} (${figures.minimumSeconds})`,
    '-',
    '',
    undefined,
  );
  row('6 rate model', `${figures.model}: 429 answers`, figures.rateLimited, '-', '0', figures.rateLimited === 0);
}

const shards = await shardScenario();

log('secrets and functions: 3 projects x 20 functions x 30 secrets');
const kinds = await benchFleetKinds();
for (const [metric, value] of Object.entries(kinds)) row('fn+secrets', metric, value, '-', '', undefined);

const freshnessProjects = quick ? 30 : 100;
log(`continuous drift checking over ${freshnessProjects} projects at 60 requests a minute (scaled clock)`);
const freshness = await continuousFreshness({ projects: freshnessProjects, cycles: quick ? 2 : 3, budget: { limit: 60, windowMs: 60_000 } });
row('8 freshness', `largest observation age / stated floor (${freshness.largestAgeSeconds}s / ${freshness.boundSeconds}s)`, freshness.ratio, '-', '<= 1.10', freshness.ratio <= 1.1);
row('8 freshness', `out-of-band change found after (s), floor ${freshness.boundAtChangeSeconds}s`, freshness.detectionSeconds, '-', '<= 1.10 x floor', freshness.detectionSeconds <= 1.1 * freshness.boundAtChangeSeconds);
const writeShape = quick ? { projects: 32, changed: 16 } : { projects: 100, changed: 30 };
log(`the same through a revision's write pass: ${writeShape.changed} of ${writeShape.projects} projects changed (scaled clock, the budget's timing modelled)`);
const throughWrites = await freshnessThroughWrites({ ...writeShape, budget: { limit: 60, windowMs: 60_000 }, cycles: 1 });
row(
  '8 freshness',
  `through a write pass of ${throughWrites.writeRequests} requests (${throughWrites.writeSeconds}s): largest age / stated bound (age up to ${throughWrites.largestAgeSeconds}s; bound ${throughWrites.boundBeforeSeconds}s before, up to ${throughWrites.boundLargestSeconds}s)`,
  throughWrites.ratioThrough,
  '-',
  '<= 1.10',
  throughWrites.ratioThrough <= 1.1,
);

log('reconcile status against a running daemon of 30 projects, then from its state directory');
const statusRead = await statusAgainstDaemon({ projects: 30 });
row('9 status', `reconcile status --daemon-url, 30 projects: wall time (ms), process start included`, statusRead.fromDaemon.wallMs, '-', '< 1000', statusRead.fromDaemon.wallMs < 1000);
row('9 status', 'same: API requests in the emulator\'s log', statusRead.fromDaemon.apiRequests, '-', '0', statusRead.fromDaemon.apiRequests === 0);
row('9 status', 'reconcile status from the state directory: wall time (ms); API requests', `${statusRead.fromStateDir.wallMs}; ${statusRead.fromStateDir.apiRequests}`, '-', '< 1000; 0', statusRead.fromStateDir.wallMs < 1000 && statusRead.fromStateDir.apiRequests === 0);

const migrations = await migrationScenario();
const fullFleet = await fullFleetScenario();
const freshnessDaemon = await daemonFreshnessScenario();
const projectSet = await projectSetScenario();
const corpus = await corpusScenario(CORPUS);

const seconds = printRows();

await mkdir(dirname(resolve(values.out!)), { recursive: true });
await writeFile(values.out!, `${JSON.stringify({ date: new Date().toISOString(), machine, seconds, quick, rows, passCosts, long, shared, converge: conv, budget, kinds, rateModels: [byUser, byScope], shards, freshness, throughWrites, migrations, corpus, fullFleet, freshnessDaemon, projectSet, status: { projects: statusRead.projects, fromDaemon: { wallMs: statusRead.fromDaemon.wallMs, apiRequests: statusRead.fromDaemon.apiRequests }, fromStateDir: { wallMs: statusRead.fromStateDir.wallMs, apiRequests: statusRead.fromStateDir.apiRequests } } }, null, 2)}\n`);
