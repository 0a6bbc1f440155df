// Scenario 7: does splitting a fleet between shards scale? The same fleet is converged from
// empty once by a single shard (one identity, one budget) and once by three shards at the
// same time, each as its own process would run it: its own user and token, its own client
// and budget (the shard map's rateLimit), its own state directory. Each run has an emulator
// of its own that counts every user separately, as the service does.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../emulator/index.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';
import { DEFAULT_TIMEOUTS, undiciTransport, type Transport } from '../api/transport.js';
import { runPass } from '../reconcile/engine.js';
import { loadShardedManifests } from '../shards/load-sharded.js';
import { silentLogger } from '../util/logger.js';
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
  /** Per shard, seconds from the common start to its first request and to its first write. */
  firstRequest: Array<{ requestSeconds: number; writeSeconds: number }>;
}

interface ShardScalingFigures {
  projects: number;
  shards: number;
  /** Each shard's budget, as the shard map writes it. */
  budget: string;
  single: ShardRunFigures;
  sharded: ShardRunFigures;
  /** The three shards' time over a third of the single shard's time (1.00: perfect scaling). */
  ratio: number;
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

/** Converges the fleet from empty with one concurrent pass per shard of `shards`. */
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
  try {
    const prepared = await Promise.all(
      shards.map(async (spec) => {
        const loaded = await loadShardedManifests(fleet.dir, { shardsFile: mapFile, shard: spec.name, cwd: root });
        if (loaded.set.errors.length > 0 || !loaded.shard?.rate) {
          throw new Error(`shard ${spec.name} did not load: ${loaded.set.errors.slice(0, 3).map((e) => `${e.file}:${e.line} ${e.message}`).join('; ')}`);
        }
        const stateDir = join(root, label, 'shards', spec.name);
        const first = { request: Number.NaN, write: Number.NaN };
        const inner = undiciTransport({ origin: new URL(emulator.url).origin, timeouts: DEFAULT_TIMEOUTS, connections: 5 });
        const transport: Transport = {
          send(request) {
            const now = performance.now();
            if (Number.isNaN(first.request)) first.request = now;
            if (request.method !== 'GET' && Number.isNaN(first.write)) first.write = now;
            return inner.send(request);
          },
          close: () => inner.close(),
        };
        const client = await createClient({ baseUrl: emulator.url, auth: staticToken(tokenOf(spec.team)), rate: loaded.shard.rate, stateDir, concurrency: 4, transport });
        return { spec, manifests: loaded.set, stateDir, client, first };
      }),
    );
    const pass = (shard: (typeof prepared)[number], dryRun: boolean) =>
      runPass({ manifests: shard.manifests, client: shard.client, stateDir: shard.stateDir, dryRun, env: fleet.env, log: silentLogger, wait: { initialDelayMs: 10, maxDelayMs: 50 } });
    try {
      const before = emulator.requests().length;
      const started = performance.now();
      const perShardSeconds = await Promise.all(
        prepared.map(async (shard) => {
          const applied = await pass(shard, false);
          if (applied.result !== 'success') throw new Error(`shard ${shard.spec.name}: the apply pass ended ${applied.result}`);
          return (performance.now() - started) / 1000;
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const sent = emulator.requests().slice(before).filter((e) => e.path.startsWith('/v1/'));
      await Promise.all(
        prepared.map(async (shard) => {
          const check = await pass(shard, true);
          if (check.plan.hasChanges) throw new Error(`shard ${shard.spec.name} did not converge in one pass`);
        }),
      );
      const firstRequest = prepared.map((shard) => ({ requestSeconds: round((shard.first.request - started) / 1000), writeSeconds: round((shard.first.write - started) / 1000) }));
      return { seconds: round(seconds), perShardSeconds: perShardSeconds.map((s) => round(s)), requests: sent.length, rateLimited: sent.filter((e) => e.status === 429).length, firstRequest };
    } finally {
      await Promise.all(prepared.map((shard) => shard.client.close()));
    }
  } finally {
    await emulator.close();
  }
}

/**
 * Converges `projects` projects (labelled team a, b and c in turn) from empty with one shard
 * owning the organization, then with three shards by label, each at `budgetPerWindow`
 * requests per `windowMs`. The emulator allows each user a fifth more than the budget (as the
 * service's 60 to the default 50), so any excess would show as 429 answers.
 */
export async function shardScaling(projects = 45, budgetPerWindow = 20, windowMs = 1000): Promise<ShardScalingFigures> {
  const root = await mkdtemp(join(tmpdir(), 'reconcile-bench-shards-'));
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
  const single = await convergeSharded(fleet, root, 'single', [{ name: 'everything', team: 'a', selector: `{ organization: ${fleet.shape.organization} }` }], budget, emulatorLimit, windowMs);
  const sharded = await convergeSharded(
    fleet,
    root,
    'three',
    TEAMS.map((t) => ({ name: `team-${t}`, team: t, selector: `{ labels: { team: ${t} } }` })),
    budget,
    emulatorLimit,
    windowMs,
  );
  return { projects, shards: TEAMS.length, budget, single, sharded, ratio: round(sharded.seconds / (single.seconds / TEAMS.length)) };
}
