// `npm run test:chaos`: the emulator injects 5xx, timeouts, connection resets, lost answers,
// a surprise 429 block and slow lifecycles while the reconciler (the built command, as a user
// runs it) is killed with SIGKILL at random moments and restarted. Afterwards the invariants
// in ./invariants.ts must hold. One cycle stops a run (SIGSTOP) past the lock timeout instead,
// lets a second run take the lock over, and resumes the first. Exit 0 when they all hold (the
// run's temporary directory is removed), 1 otherwise (it is kept, and its path printed).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { seededRandom } from '../emulator/random.js';
import { generateFleet } from '../bench/fleet.js';
import { checkInvariants, type Expectations, type LiveFacts } from './invariants.js';

const SIZES = {
  tiny: { projects: 1, cycles: 3, secrets: 2, functions: 1, shardCycles: 0 },
  small: { projects: 3, cycles: 8, secrets: 3, functions: 2, shardCycles: 4 },
  full: { projects: 8, cycles: 25, secrets: 5, functions: 3, shardCycles: 8 },
} as const;
const SABOTAGES = ['duplicate-project', 'lost-secret', 'unwanted-delete', 'paused-holder-write'] as const;
type Sabotage = (typeof SABOTAGES)[number];

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'full' },
    seed: { type: 'string', default: '7' },
    sabotage: { type: 'string' },
  },
});
const size = SIZES[values.size as keyof typeof SIZES];
if (!size) throw new TypeError(`Expected --size to be one of ${Object.keys(SIZES).join(', ')}, got \`${values.size}\``);
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new TypeError(`Expected --seed to be an integer, got \`${values.seed}\``);
const sabotages = (values.sabotage ? values.sabotage.split(',') : []) as Sabotage[];
for (const s of sabotages) if (!SABOTAGES.includes(s)) throw new TypeError(`Expected --sabotage to name ${SABOTAGES.join(', ')}, got \`${s}\``);

// A seed replays the same kill points.
const rand = seededRandom(seed);
const say = (message: string) => process.stdout.write(`chaos: ${message}\n`);

const bin = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
const root = await mkdtemp(join(tmpdir(), 'reconcile-chaos-'));
const stateDir = join(root, 'state');
const fleet = await generateFleet(join(root, 'manifests'), {
  projects: size.projects,
  secrets: size.secrets,
  functions: size.functions,
  sections: ['auth', 'postgres'],
  organization: 'chaos-org',
  prefix: 'chaos',
});

// Renames mid-chaos: one project is declared under `deletion: delete`, and between runs its
// document is renamed (metadata.name changes, spec.name keeps the project's name). The old
// name's record must move to the new one: the project is neither deleted nor created again,
// whether the kills left it created, half-created (a creation intent) or not yet begun.
const renamedProject = fleet.projectNames[fleet.projectNames.length - 1]!;
const renamedFile = join(fleet.dir, 'projects', `${renamedProject}.yaml`);
async function declareRenamedAs(manifestName: string): Promise<void> {
  const documents = parseAllDocuments(await readFile(renamedFile, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: Record<string, unknown> });
  for (const document of documents) {
    if (document.kind !== 'Project') document.spec.project = manifestName;
    else {
      document.metadata.name = manifestName;
      document.spec.name = renamedProject;
      document.spec.policy = { deletion: 'delete' };
    }
  }
  await writeFile(renamedFile, documents.map((d) => stringify(d)).join('---\n'));
}
await declareRenamedAs(renamedProject);
const RENAME_AT = [Math.floor(size.cycles / 3), Math.floor((2 * size.cycles) / 3)];
const renames: string[] = [];
/** Project ref by manifest name, from the state directory's inventory (empty before the first record). */
async function readInventory(): Promise<Record<string, string>> {
  const text = await readFile(join(stateDir, 'inventory.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  const inventory = JSON.parse(text) as { projects?: Record<string, { ref: string }> };
  return Object.fromEntries(Object.entries(inventory.projects ?? {}).map(([name, record]) => [name, record.ref]));
}

// The organization and an unmanaged project with secrets exist before the run; one managed
// project already carries a secret set out of band that no manifest declares (no prune).
const emulator: RunningEmulator = await startEmulator({
  port: 0,
  rateLimit: { limit: 60, windowMs: 1000 },
  // Slow lifecycles: a project takes 120 s / 40 = 3 s to come up, its services 0.75 s more.
  speed: 40,
  seed: {
    organizations: [{ name: 'chaos-org', slug: 'chaosorgslug' }],
    projects: [
      { name: 'bystander', organization: 'chaosorgslug', region: 'eu-west-1', status: 'ACTIVE_HEALTHY', secrets: { KEEP_ME: 'bystander-value' } },
      { name: fleet.projectNames[0]!, organization: 'chaosorgslug', region: 'eu-central-1', status: 'ACTIVE_HEALTHY', secrets: { SET_BY_HAND: 'manual-value' } },
    ],
  },
});

const faults = {
  seed,
  rules: [{ errorRate: 0.1, timeoutRate: 0.05, resetRate: 0.03, lostAnswerRate: 0.03, latencyMs: 5 }],
};
emulator.setFaults(faults);

const env = {
  ...process.env,
  ...fleet.env,
  MANAGEMENT_API_URL: emulator.url,
  MANAGEMENT_API_TOKEN: emulator.token,
  RECONCILE_RATE_LIMIT: '50/1s',
  RECONCILE_HTTP_TIMEOUT: '1s',
  RECONCILE_LOG_LEVEL: 'warn',
  // A SIGKILLed run leaves its state lock behind: the next run takes it over after this.
  RECONCILE_LOCK_TIMEOUT: '1s',
};
const LOCK_TIMEOUT_MS = 1000;

/**
 * Runs the built command; with `killAfterRequests`, SIGKILLs it once that many of its requests
 * have reached the emulator (a random moment in its progress, whatever the machine's speed).
 */
function runReconcile(args: string[], killAfterRequests?: number): Promise<{ code: number | null; killed: boolean; stderr: string }> {
  return runCommand([bin, fleet.dir, '--state-dir', stateDir, ...args], env, killAfterRequests);
}

/** Runs `node ARGS` (the built command); with `killAfterRequests`, as runReconcile. */
function runCommand(args: string[], childEnv: NodeJS.ProcessEnv, killAfterRequests?: number): Promise<{ code: number | null; killed: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    const startCount = emulator.requests().length;
    const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    let killed = false;
    const poll =
      killAfterRequests === undefined
        ? undefined
        : setInterval(() => {
            if (emulator.requests().length - startCount >= killAfterRequests) {
              killed = true;
              child.kill('SIGKILL');
            }
          }, 5);
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      resolve({ code, killed, stderr });
    });
  });
}

/** Every file of the state directory: modification time and content. */
async function stateFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  if (!existsSync(stateDir)) return files;
  for (const entry of await readdir(stateDir, { recursive: true, withFileTypes: true })) {
    // A temporary file is no record (one being written at the pause may be completed, never renamed into place).
    if (!entry.isFile() || entry.name.endsWith('.tmp')) continue;
    const path = join(entry.parentPath, entry.name);
    const text = await readFile(path, 'utf8').catch(() => '');
    const mtime = await stat(path).then((s) => s.mtimeMs).catch(() => 0);
    files.set(path.slice(stateDir.length + 1), `${mtime} ${text}`);
  }
  return files;
}

/**
 * The paused-holder takeover: a run is stopped (SIGSTOP, as a frozen VM) once `stopAfter` of
 * its requests reached the emulator; once its lock is stale, a second run takes it over and
 * finishes; then the first resumes (SIGCONT). Everything the first sends or writes after the
 * takeover is recorded.
 */
async function pausedHolderTakeover(stopAfter: number): Promise<LiveFacts['pausedHolder']> {
  const startCount = emulator.requests().length;
  const child = spawn(process.execPath, [bin, fleet.dir, '--state-dir', stateDir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.resume();
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let finished = false;
  void exited.then(() => (finished = true));
  while (!finished && emulator.requests().length - startCount < stopAfter) await new Promise((resolve) => setTimeout(resolve, 5));
  if (finished) return undefined;
  child.kill('SIGSTOP');
  // Its heartbeat stopped with it: wait until the lock is older than the timeout.
  for (;;) {
    const lock = await readFile(join(stateDir, 'state.lock'), 'utf8').then((t) => JSON.parse(t) as { heartbeatAt: number }).catch(() => undefined);
    if (!lock || Date.now() - lock.heartbeatAt > LOCK_TIMEOUT_MS + 100) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const successor = await runReconcile([]);
  const tookOver = /took over the stale state lock/.test(successor.stderr);
  const before = await stateFiles();
  // A request is logged with its arrival time: one sent before the pause and held by a fault
  // until the client gave up is logged late, but arrived before the resume.
  const resumedAt = Date.now();
  if (sabotages.includes('paused-holder-write')) await writeFile(join(stateDir, 'inventory.json'), '{"version":1,"projects":{}}\n');
  child.kill('SIGCONT');
  await exited;
  const apiWritesAfter = emulator.requests().filter((e) => e.time >= resumedAt && e.method !== 'GET').map((e) => `${e.method} ${e.path}`);
  const after = await stateFiles();
  const stateFilesChanged = [...new Set([...before.keys(), ...after.keys()])].filter((name) => before.get(name) !== after.get(name));
  return { tookOver, apiWritesAfter, stateFilesChanged };
}

say(`seed ${seed}, size ${values.size}: ${size.projects} projects, ${size.cycles} kill cycles; state in ${stateDir}`);
const outcomes = { killed: 0, exited0: 0, exited1: 0 };
// The last kill cycle is a paused-holder takeover instead (retried a few times if the run finished before its stop point).
const PAUSE_AT = size.cycles - 1;
let pausedHolder: LiveFacts['pausedHolder'];
for (let cycle = 0; cycle < size.cycles; cycle++) {
  if (cycle === Math.floor(size.cycles / 2)) {
    emulator.setFaults({ ...faults, rateLimitBlock: { ms: 1000 } });
    emulator.setFaults(faults);
    say(`cycle ${cycle}: surprise 429 block for a whole window`);
  }
  const renameIndex = RENAME_AT.indexOf(cycle);
  if (renameIndex >= 0) {
    const from = renameIndex === 0 ? renamedProject : `${renamedProject}-renamed-${renameIndex}`;
    const to = `${renamedProject}-renamed-${renameIndex + 1}`;
    const recorded = from in (await readInventory());
    await declareRenamedAs(to);
    renames.push(from);
    say(`cycle ${cycle}: renamed the Project manifest ${from} to ${to} (spec.name ${renamedProject}, deletion: delete; ${recorded ? `its record under ${from} must move` : `no record under ${from} yet`})`);
  }
  const killAfter = 1 + Math.floor(rand() * size.projects * 12);
  if (cycle === PAUSE_AT) {
    // A run that finished before its stop point is tried again, stopped sooner (the last time after its first request).
    for (const stopAfter of [killAfter, Math.ceil(killAfter / 2), 1]) {
      pausedHolder ??= await pausedHolderTakeover(stopAfter);
    }
    say(
      pausedHolder
        ? `cycle ${cycle}: a run stopped (SIGSTOP) past the lock timeout; ${pausedHolder.tookOver ? 'a second run took the lock over' : 'no second run took the lock over'}; the first resumed`
        : `cycle ${cycle}: every run finished before its stop point: no paused holder`,
    );
    continue;
  }
  const result = await runReconcile([], killAfter);
  if (result.killed) {
    outcomes.killed++;
    await new Promise((resolveWait) => setTimeout(resolveWait, LOCK_TIMEOUT_MS + 100));
  }
  else if (result.code === 0) outcomes.exited0++;
  else outcomes.exited1++;
}

// Overlapping runs: two on the shared state directory (one of them must refuse) and one with a
// state directory of its own (another checkout), all at once, under the faults.
const overlapping = await Promise.all([runReconcile([]), runReconcile([]), runReconcile(['--state-dir', join(root, 'other-checkout-state')])]);
const refused = overlapping.filter((r) => /is locked by pid/.test(r.stderr)).length;
say(`overlapping runs: exits ${overlapping.map((r) => r.code).join(', ')}; ${refused} refused for the state lock`);

// A shard move mid-chaos: a second fleet, split by a label between shards `left` and `right`
// (a state directory each), both run at once and killed at random moments like the runs
// above. Halfway, `shard-mover` (deletion: delete) moves from `left` to `right` by its label
// alone: `left` must hand its record over and `right` adopt the project, never delete it.
const shardDir = join(root, 'shard-manifests');
const shardStateDir = join(root, 'shard-state');
const SHARD_PROJECTS = ['shard-left', 'shard-right', 'shard-mover'];
async function declareShards(moverTeam: 'left' | 'right'): Promise<void> {
  const team = (name: string) => (name === 'shard-mover' ? moverTeam : name.slice('shard-'.length));
  await mkdir(shardDir, { recursive: true });
  await writeFile(
    join(shardDir, 'shards.yaml'),
    stringify({ shards: ['left', 'right'].map((name) => ({ name, selector: { labels: { team: name } }, credentials: { tokenEnv: 'CHAOS_SHARD_TOKEN' } })) }),
  );
  const documents = [
    { apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name: 'chaos-org' }, spec: { slug: 'chaosorgslug' } },
    ...SHARD_PROJECTS.map((name) => ({
      apiVersion: 'reconciler/v1',
      kind: 'Project',
      metadata: { name, labels: { team: team(name) } },
      spec: { organization: 'chaos-org', region: 'eu-central-1', db_pass: { valueFrom: { env: 'FLEET_DB_PASS' } }, policy: { deletion: 'delete' } },
    })),
  ];
  await writeFile(join(shardDir, 'fleet.yaml'), documents.map((d) => stringify(d)).join('---\n'));
}
function runShard(shard: string, args: string[], killAfterRequests?: number): Promise<{ code: number | null; killed: boolean; stderr: string }> {
  return runCommand([bin, shardDir, '--state-dir', shardStateDir, '--shard', shard, ...args], { ...env, CHAOS_SHARD_TOKEN: emulator.token }, killAfterRequests);
}
async function readShardInventory(shard: string): Promise<Record<string, string>> {
  const text = await readFile(join(shardStateDir, 'shards', shard, 'inventory.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  const inventory = JSON.parse(text) as { projects?: Record<string, { ref: string }> };
  return Object.fromEntries(Object.entries(inventory.projects ?? {}).map(([name, record]) => [name, record.ref]));
}
const shardMoves: Array<{ project: string; from: string; to: string }> = [];
if (size.shardCycles > 0) {
  await declareShards('left');
  const MOVE_AT = Math.floor(size.shardCycles / 2);
  for (let cycle = 0; cycle < size.shardCycles; cycle++) {
    if (cycle === MOVE_AT) {
      const recorded = 'shard-mover' in (await readShardInventory('left'));
      await declareShards('right');
      shardMoves.push({ project: 'shard-mover', from: 'left', to: 'right' });
      say(`shard cycle ${cycle}: moved shard-mover from shard left to shard right by its label (deletion: delete; ${recorded ? 'left has a record to hand over' : 'no record in left yet'})`);
    }
    const runs = await Promise.all(['left', 'right'].map((shard) => runShard(shard, [], 1 + Math.floor(rand() * 30))));
    for (const run of runs) {
      if (run.killed) outcomes.killed++;
      else if (run.code === 0) outcomes.exited0++;
      else outcomes.exited1++;
    }
    if (runs.some((run) => run.killed)) await new Promise((resolveWait) => setTimeout(resolveWait, LOCK_TIMEOUT_MS + 100));
  }
}

// The faults stop; the reconciler must now finish what the kills interrupted.
emulator.setFaults({});
let final = await runReconcile([]);
for (let attempt = 1; final.code !== 0 && attempt < 3; attempt++) final = await runReconcile([]);
if (final.code !== 0) say(`the final apply exited ${final.code}: ${final.stderr.split('\n').slice(-5).join(' | ')}`);
let check = await runReconcile(['--dry-run', '--detailed-exitcode']);
if (size.shardCycles > 0) {
  for (const shard of ['left', 'right']) {
    let done = await runShard(shard, []);
    for (let attempt = 1; done.code !== 0 && attempt < 3; attempt++) done = await runShard(shard, []);
    if (done.code !== 0) say(`the final apply of shard ${shard} exited ${done.code}: ${done.stderr.split('\n').slice(-5).join(' | ')}`);
  }
  // Converged only when the main fleet and both shards plan nothing.
  for (const shard of ['left', 'right']) {
    const shardCheck = await runShard(shard, ['--dry-run', '--detailed-exitcode']);
    if (check.code === 0 && shardCheck.code !== 0) check = shardCheck;
  }
}

// A rollout across shards, with a failing canary and a removed project under an approval rule
// (faults off, one targeted fault instead). Three projects, split between shards `left` and
// `right` by a label, are created first. Then one commit brings the docs' canary Rollout
// (its waves span both shards), a change for every project while the canary's writes fail,
// and removes `roll-doomed` (deletion: delete, `plan: enterprise`, under an approval rule for
// enterprise deletions). Both shards must refuse that Rollout before anything is applied. Then
// one Rollout per shard: `left`'s canary halts on its failure, and the removed project's
// deletion still waits for an approval, by the labels its inventory record kept.
const rolloutDir = join(root, 'rollout-manifests');
const rolloutStateDir = join(root, 'rollout-state');
const ROLLOUT_PROJECTS = { 'roll-canary': { team: 'left', ring: 'canary' }, 'roll-tenant': { team: 'right', tier: 'tenant' }, 'roll-doomed': { team: 'left', tier: 'tenant', plan: 'enterprise' } };
const DELETIONS_RULE = { name: 'enterprise-deletions', classes: ['deletion'], selector: { labels: { plan: 'enterprise' } } };
async function declareRollout(stage: 'plain' | 'spanning' | 'per-shard'): Promise<void> {
  await mkdir(rolloutDir, { recursive: true });
  await writeFile(join(rolloutDir, 'shards.yaml'), stringify({ shards: ['left', 'right'].map((name) => ({ name, selector: { labels: { team: name } }, credentials: { tokenEnv: 'CHAOS_SHARD_TOKEN' } })) }));
  const rollout = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'reconciler/v1', kind: 'Rollout', metadata: { name }, spec });
  const rollouts =
    stage === 'plain' ? []
    : stage === 'spanning' ? [rollout('tenants', { soak: '1s', waves: [{ name: 'canary', selector: { labels: { ring: 'canary' } } }, { name: 'tenants', selector: { labels: { tier: 'tenant' } } }], approvals: [DELETIONS_RULE] })]
    : [
        rollout('left', { shard: 'left', soak: '1s', waves: [{ name: 'canary', selector: { labels: { ring: 'canary' } } }], approvals: [DELETIONS_RULE] }),
        rollout('right', { shard: 'right', soak: '1s', waves: [{ name: 'canary', selector: { labels: { tier: 'tenant' } } }], approvals: [DELETIONS_RULE] }),
      ];
  const documents = [
    { apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name: 'chaos-org' }, spec: { slug: 'chaosorgslug' } },
    ...rollouts,
    ...Object.entries(ROLLOUT_PROJECTS)
      .filter(([name]) => stage === 'plain' || name !== 'roll-doomed')
      .map(([name, labels]) => ({
        apiVersion: 'reconciler/v1',
        kind: 'Project',
        metadata: { name, labels },
        spec: { organization: 'chaos-org', region: 'eu-central-1', db_pass: { valueFrom: { env: 'FLEET_DB_PASS' } }, policy: { deletion: 'delete' }, restapi: { max_rows: stage === 'plain' ? 100 : 200 } },
      })),
  ];
  await writeFile(join(rolloutDir, 'fleet.yaml'), documents.map((d) => stringify(d)).join('---\n'));
}
const runRolloutShard = (shard: string) => runCommand([bin, rolloutDir, '--state-dir', rolloutStateDir, '--shard', shard], { ...env, CHAOS_SHARD_TOKEN: emulator.token });
async function rolloutRefs(): Promise<Record<string, string>> {
  const refs: Record<string, string> = {};
  for (const shard of ['left', 'right']) {
    const text = await readFile(join(rolloutStateDir, 'shards', shard, 'inventory.json'), 'utf8').catch(() => '{}');
    for (const [name, record] of Object.entries((JSON.parse(text) as { projects?: Record<string, { ref: string }> }).projects ?? {})) refs[name] = record.ref;
  }
  return refs;
}
await declareRollout('plain');
for (let attempt = 0; attempt < 3 && Object.keys(await rolloutRefs()).length < 3; attempt++) await Promise.all(['left', 'right'].map((shard) => runRolloutShard(shard)));
const rolledRefs = await rolloutRefs();
emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/restapi', method: 'PATCH', errorRate: 1, errorStatus: 500 }] });
await declareRollout('spanning');
const spanningFrom = emulator.requests().length;
const spanning = await Promise.all(['left', 'right'].map((shard) => runRolloutShard(shard)));
const spanningWrites = emulator.requests().slice(spanningFrom).filter((e) => e.method !== 'GET' && Object.values(rolledRefs).some((ref) => e.path.includes(`/${ref}`)));
const refusedShards = ['left', 'right'].filter((_, i) => spanning[i]!.code === 1 && /select projects of 2 shards/.test(spanning[i]!.stderr));
say(`rollout across shards: ${refusedShards.length === 2 ? 'both shards refused it' : `refused by ${refusedShards.join(', ') || 'no shard'}`}; ${spanningWrites.length} writes to its projects`);
await declareRollout('per-shard');
const perShard = await Promise.all(['left', 'right'].map((shard) => runRolloutShard(shard)));
const leftRecord = JSON.parse(await readFile(join(rolloutStateDir, 'shards', 'left', 'rollouts', 'left.json'), 'utf8').catch(() => '{}')) as { halted?: { wave: string } };
say(`one Rollout per shard: exits ${perShard.map((r) => r.code).join(', ')}; shard left ${leftRecord.halted ? `halted at wave ${leftRecord.halted.wave}` : 'not halted'}`);
emulator.setFaults({});
// The halt holds until someone resumes it or a newer revision comes: a later run deletes nothing either.
const leftAgain = await runRolloutShard('left');
say(`shard left once the fault is gone: exit ${leftAgain.code} (its rollout stays halted until resumed)`);
const doomedRef = rolledRefs['roll-doomed'];
const rolloutGates: LiveFacts['rolloutGates'] = {
  refusedShards,
  writesWhileRefused: spanningWrites.map((e) => `${e.method} ${e.path}`),
  canaryHalted: leftRecord.halted?.wave === 'canary',
  doomedLive: doomedRef !== undefined && emulator.requests().every((e) => !(e.method === 'DELETE' && e.path === `/v1/projects/${doomedRef}` && e.status < 300)),
};

const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(new URL(path, emulator.url), {
    method,
    headers: { authorization: `Bearer ${emulator.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
};

// Breaking an invariant on purpose proves the checks can fail.
const projectsBefore = (await api('GET', '/v1/projects')) as Array<{ name: string; ref: string; organization_id: string }>;
for (const sabotage of sabotages) {
  const first = projectsBefore.find((p) => p.name === fleet.projectNames[0]);
  if (sabotage === 'duplicate-project' && first) {
    await api('POST', '/v1/projects', { name: first.name, organization_id: first.organization_id, region: 'eu-central-1', db_pass: 'sabotage-password-1' });
  } else if (sabotage === 'lost-secret' && first) {
    await api('DELETE', `/v1/projects/${first.ref}/secrets`, ['SECRET_0']);
  } else if (sabotage === 'unwanted-delete') {
    const bystander = projectsBefore.find((p) => p.name === 'bystander');
    if (bystander) await api('DELETE', `/v1/projects/${bystander.ref}`);
  }
  say(`sabotage: ${sabotage}`);
}

const projects = ((await api('GET', '/v1/projects')) as Array<{ name: string; ref: string }>).map((p) => ({ name: p.name, ref: p.ref }));
const secrets: LiveFacts['secrets'] = {};
const functions: LiveFacts['functions'] = {};
for (const p of projects) {
  secrets[p.ref] = Object.fromEntries(((await api('GET', `/v1/projects/${p.ref}/secrets`)) as Array<{ name: string; value: string }>).map((s) => [s.name, s.value]));
  functions[p.ref] = ((await api('GET', `/v1/projects/${p.ref}/functions`)) as Array<{ slug: string }>).map((f) => f.slug);
}
const log = emulator.requests();
const facts: LiveFacts = {
  projects,
  secrets,
  functions,
  deletes: log.filter((e) => e.method === 'DELETE' && e.status >= 200 && e.status < 300).map((e) => ({ route: e.route, path: e.path })),
  finalPlanExit: check.code ?? -1,
  inventory: await readInventory(),
  ...(pausedHolder ? { pausedHolder } : {}),
  ...(size.shardCycles > 0 ? { shardInventories: { left: await readShardInventory('left'), right: await readShardInventory('right') } } : {}),
  rolloutGates,
};
const expectations: Expectations = {
  managedProjects: fleet.projectNames,
  bystanders: ['bystander'],
  secrets: Object.fromEntries(fleet.projectNames.map((name) => [name, Object.fromEntries(Array.from({ length: size.secrets }, (_, s) => [`SECRET_${s}`, fleet.env[`FLEET_SECRET_${s}`]!]))])),
  outOfBandSecrets: { bystander: ['KEEP_ME'], [fleet.projectNames[0]!]: ['SET_BY_HAND'] },
  functions: Object.fromEntries(fleet.projectNames.map((name) => [name, Array.from({ length: size.functions }, (_, f) => `fn-${f}`)])),
  renamed: renames.length ? [{ project: renamedProject, manifestName: `${renamedProject}-renamed-${renames.length}`, formerNames: renames }] : [],
  ...(size.shardCycles > 0 ? { moved: shardMoves } : {}),
};
if (size.shardCycles > 0) expectations.managedProjects = [...expectations.managedProjects, ...SHARD_PROJECTS];
expectations.managedProjects = [...expectations.managedProjects, ...Object.keys(ROLLOUT_PROJECTS)];
await emulator.close();

const injected: Record<string, number> = {};
for (const e of log) if (e.fault) injected[e.fault] = (injected[e.fault] ?? 0) + 1;
injected['429 answers'] = log.filter((e) => e.status === 429).length;
say(`requests served: ${log.length}; injected: ${Object.entries(injected).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
say(`survived: ${outcomes.killed} SIGKILLs mid-run, ${outcomes.exited0} runs that finished, ${outcomes.exited1} runs that ended in error and were retried`);
const results = checkInvariants(facts, expectations);
for (const r of results) say(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.detail}`);
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
if (failed) say(`kept the manifests and state directories in ${root}`);
else await rm(root, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
