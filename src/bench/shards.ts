// Scenario 7: does splitting a fleet between shards scale? The same fleet is converged from
// empty once by a single shard (one identity, one budget) and once by three shards at the
// same time, each as its own process would run it: its own user and token, its own client
// and budget (the shard map's rateLimit), its own state directory. Each run has an emulator
// of its own that counts every user separately, as the service does.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../emulator/index.js';
import { generateFleet, type GeneratedFleet } from './fleet.js';

const TEAMS = ['a', 'b', 'c'] as const;
const ORGANIZATION_SLUG = 'benchshardsorg';
const tokenOf = (team: string) => `bench-shard-token-of-${team}-0123456789`;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface ShardRunFigures {
  /** From the common start to the last shard's converged apply. */
  seconds: number;
  /** Each shard's own time, in the order of the map. */
  perShardSeconds: number[];
  requests: number;
  rateLimited: number;
  /** Per process, seconds from its start to its first request and to its first write (at the emulator). */
  firstRequest: Array<{ requestSeconds: number; writeSeconds: number }>;
}

interface ShardScalingFigures {
  projects: number;
  shards: number;
  /** Each shard's budget, as the shard map writes it. */
  budget: string;
  /** The pair whose ratio is the median: its single run and its three shards. */
  single: ShardRunFigures;
  sharded: ShardRunFigures;
  /** The three shards' time over a third of the single shard's time (1.00: perfect scaling): the median of the pairs. */
  ratio: number;
  /** Each pair's ratio, in the order they ran. */
  ratios: number[];
}

interface ShardSpec {
  name: string;
  /** Whose token the shard's credentials hold. */
  team: string;
  selector: string;
}

function shardMap(shards: ShardSpec[], budget: string): string {
  return `shards:\n${shards
    .map((s) => `  - name: ${s.name}\n    selector: ${s.selector}\n    credentials:\n      tokenEnv: TOKEN_${s.team.toUpperCase()}\n    rateLimit: ${budget}`)
    .join('\n')}\n`;
}

/** The built command, whether this module runs built (dist/bench) or from source (src/bench, in tests). */
const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

/** Runs the built command once; resolves with its exit code and output when it exits. */
function runShard(args: string[], env: Record<string, string>, cwd: string): { started: number; done: Promise<{ code: number | null; stderr: string; ended: number }> } {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-8000)));
  const done = new Promise<{ code: number | null; stderr: string; ended: number }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, ended: Date.now() }));
  });
  return { started, done };
}

/**
 * Converges the fleet from empty with one process per shard of `shards`, started together:
 * each is the built command (`reconcile DIR --shards MAP --shard NAME`) with its own token,
 * the shard map's budget and its own state directory, as a deployment runs them.
 */
async function convergeSharded(fleet: GeneratedFleet, root: string, label: string, shards: ShardSpec[], budget: string, emulatorLimit: number, windowMs: number): Promise<ShardRunFigures> {
  const mapFile = join(root, `${label}-shards.yaml`);
  await writeFile(mapFile, shardMap(shards, budget));
  const emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: emulatorLimit, windowMs },
    speed: 2000,
    seed: {
      users: TEAMS.map((t) => ({ name: `Team ${t}`, email: `${t}@bench.test`, tokens: [tokenOf(t)] })),
      organizations: [{ name: fleet.shape.organization, slug: ORGANIZATION_SLUG, members: TEAMS.map((t) => ({ user: `${t}@bench.test`, role: 'Owner' as const })) }],
    },
  });
  // The shard processes started: each has exited before the emulator closes and the root is removed.
  const children: Array<Promise<unknown>> = [];
  try {
    const env: Record<string, string> = { ...fleet.env, MANAGEMENT_API_URL: emulator.url };
    for (const t of TEAMS) env[`TOKEN_${t.toUpperCase()}`] = tokenOf(t);
    const args = (spec: ShardSpec, dryRun: boolean) => [fleet.dir, '--shards', mapFile, '--shard', spec.name, '--state-dir', join(root, label, 'state'), '--organization-wait', '60s', ...(dryRun ? ['--dry-run', '--detailed-exitcode'] : [])];
    // Each token's user id as the emulator logs it: one request each, a window before the run.
    const userOf = new Map<string, string>();
    for (const t of TEAMS) {
      await fetch(`${emulator.url}/v1/organizations`, { headers: { authorization: `Bearer ${tokenOf(t)}` } });
      const id = emulator.requests().at(-1)?.user;
      if (id) userOf.set(t, id);
    }
    await new Promise((resolve) => setTimeout(resolve, windowMs + 100));
    const before = emulator.requests().length;
    const runs = shards.map((spec) => ({ spec, ...runShard(args(spec, false), env, root) }));
    children.push(...runs.map((run) => run.done));
    const started = Math.min(...runs.map((r) => r.started));
    const ended = await Promise.all(
      runs.map(async (run) => {
        const result = await run.done;
        if (result.code !== 0) throw new Error(`shard ${run.spec.name}: the apply exited ${result.code}\n${result.stderr}`);
        return result.ended;
      }),
    );
    const seconds = (Math.max(...ended) - started) / 1000;
    const sent = emulator.requests().slice(before).filter((e) => e.path.startsWith('/v1/'));
    // Per process: from its start to its user's first request and first write at the emulator.
    const firstRequest = runs.map((run) => {
      const own = sent.filter((e) => e.user === userOf.get(run.spec.team));
      const first = own[0]?.time ?? Number.NaN;
      const write = own.find((e) => e.method !== 'GET')?.time ?? Number.NaN;
      return { requestSeconds: round((first - run.started) / 1000), writeSeconds: round((write - run.started) / 1000) };
    });
    for (const spec of shards) {
      const check = await runShard(args(spec, true), env, root).done;
      if (check.code !== 0) throw new Error(`shard ${spec.name} did not converge in one pass (dry run exited ${check.code})\n${check.stderr}`);
    }
    return {
      seconds: round(seconds),
      perShardSeconds: ended.map((e, i) => round((e - runs[i]!.started) / 1000)),
      requests: sent.length,
      rateLimited: sent.filter((e) => e.status === 429).length,
      firstRequest,
    };
  } finally {
    await Promise.allSettled(children);
    await emulator.close();
  }
}

/**
 * Converges `projects` projects (labelled team a, b and c in turn) from empty with one shard
 * owning the organization, then with three shards by label, each at `budgetPerWindow`
 * requests per `windowMs`. The emulator allows each user a fifth more than the budget (as the
 * service's 60 to the default 50), so any excess would show as 429 answers.
 *
 * `pairs` times in turn (one shard, then three), each pair against fresh emulators and state:
 * a pair's ratio compares two runs a few seconds apart, and the figure is the median pair, so
 * that a machine whose speed drifts over minutes moves single runs, not the figure.
 */
export async function shardScaling(projects = 45, budgetPerWindow = 20, windowMs = 1000, pairs = 1): Promise<ShardScalingFigures> {
  const root = await mkdtemp(join(tmpdir(), 'reconcile-bench-shards-'));
  try {
    const fleet = await generateFleet(join(root, 'manifests'), {
      projects,
      secrets: 1,
      functions: 0,
      sections: ['postgres'],
      organization: 'bench-shards-org',
      organizationSlug: ORGANIZATION_SLUG,
      prefix: 'shard',
      labels: (i) => ({ team: TEAMS[i % TEAMS.length]! }),
    });
    const budget = `${budgetPerWindow}/${windowMs / 1000}s`;
    const emulatorLimit = Math.round(budgetPerWindow * 1.2);
    const runs: Array<{ single: ShardRunFigures; sharded: ShardRunFigures; ratio: number }> = [];
    for (let pair = 0; pair < Math.max(1, pairs); pair++) {
      const single = await convergeSharded(fleet, root, `single-${pair}`, [{ name: 'everything', team: 'a', selector: `{ organization: ${fleet.shape.organization} }` }], budget, emulatorLimit, windowMs);
      const sharded = await convergeSharded(
        fleet,
        root,
        `three-${pair}`,
        TEAMS.map((t) => ({ name: `team-${t}`, team: t, selector: `{ labels: { team: ${t} } }` })),
        budget,
        emulatorLimit,
        windowMs,
      );
      runs.push({ single, sharded, ratio: round(sharded.seconds / (single.seconds / TEAMS.length)) });
    }
    const median = [...runs].sort((a, b) => a.ratio - b.ratio)[Math.floor(runs.length / 2)]!;
    return { projects, shards: TEAMS.length, budget, single: median.single, sharded: median.sharded, ratio: median.ratio, ratios: runs.map((run) => run.ratio) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
