// The benchmark scenarios. Rate windows are scaled (one second stands for the service's
// minute): every figure is a ratio or a count, so it does not depend on the scale.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { converge, openFleetHarness } from './harness.js';
import { naiveObservation, sendAtFixedInterval } from './naive.js';
import { clientOver, recordingCaller, type Recording } from './replay.js';
import { maxInAnyWindow } from './window.js';
import { createClient } from '../api/client.js';
import { staticToken } from '../api/auth.js';

const FAST = { limit: 1_000_000, windowMs: 1000 };
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

export interface PassCostFigures {
  projects: number;
  requests: number;
  lowerBound: number;
  ratio: number;
  naiveRequests: number;
  naiveRatio: number;
  convergeSeconds: number;
  /** Present for the largest fleet: planner time and memory measured in a child process. */
  plan?: PlanFigures;
}

interface PlanFigures {
  loadMs: number;
  planMs: number;
  /** The smallest peak RSS of the runs (and below, the largest). */
  peakRssMb: number;
  peakRssMaxMb?: number;
}

/** The fleet of the no-change scenarios (1, 5, 6), with no limit that counts while it converges. */
function openNoChangeFleet(projects: number) {
  return openFleetHarness({
    shape: { projects, secrets: 2, functions: 1, sections: ['auth', 'postgres', 'restapi'] },
    emulatorRate: FAST,
    clientRate: FAST,
    concurrency: 8,
  });
}

/** Scenario 1 (and 5 for the largest fleet): requests of a no-change pass against the lower bound. */
export async function passCost(projects: number, options: { measurePlan?: boolean } = {}): Promise<PassCostFigures> {
  const harness = await openNoChangeFleet(projects);
  try {
    const started = performance.now();
    await converge(harness);
    const convergeSeconds = (performance.now() - started) / 1000;
    const before = harness.emulator.requests().length;
    const dry = await harness.pass({ dryRun: true });
    const sent = harness.emulator.requests().slice(before).filter((e) => e.path.startsWith('/v1/'));
    if (dry.plan.hasChanges) throw new Error('the no-change pass found changes');
    const naive = naiveObservation(harness.fleet, await harness.refs());
    const figures: PassCostFigures = {
      projects,
      requests: sent.length,
      lowerBound: harness.fleet.lowerBound,
      ratio: round(sent.length / harness.fleet.lowerBound),
      naiveRequests: naive.length,
      naiveRatio: round(naive.length / harness.fleet.lowerBound),
      convergeSeconds: round(convergeSeconds, 1),
    };
    if (options.measurePlan) figures.plan = await measurePlan(harness);
    return figures;
  } finally {
    await harness.close();
  }
}

/** Scenario 5: record every read of a dry pass, then time the planner over the recording in a fresh process. */
async function measurePlan(harness: Awaited<ReturnType<typeof openFleetHarness>>): Promise<PlanFigures> {
  const recording: Recording = {};
  const recorded = await harness.pass({ dryRun: true, client: clientOver(recordingCaller(harness.emulator.url, harness.emulator.token, recording)) });
  if (recorded.result !== 'success' || recorded.plan.hasChanges) throw new Error(`the recording pass did not see a converged fleet (${recorded.result})`);
  const work = await mkdtemp(join(tmpdir(), 'reconcile-plan-'));
  const file = join(work, 'recording.json');
  const child = fileURLToPath(new URL('./plan-child.js', import.meta.url));
  const once = () =>
    new Promise<PlanFigures>((resolve, reject) => {
      const proc = spawn(process.execPath, [child, harness.fleet.dir, file, harness.stateDir], {
        env: { ...process.env, ...harness.fleet.env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      proc.on('error', reject);
      proc.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as PlanFigures) : reject(new Error(`plan child exited ${code}`))));
    });
  // Peak RSS of one run depends on when V8 grows and collects the young heap (the same build
  // has peaked anywhere from about 190 to 310 MB): three runs, the median time and the
  // smallest and largest peak.
  const runs: PlanFigures[] = [];
  try {
    await writeFile(file, JSON.stringify(recording));
    for (let i = 0; i < PLAN_RUNS; i++) runs.push(await once());
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const peaks = runs.map((run) => run.peakRssMb);
  return {
    loadMs: median(runs.map((run) => run.loadMs)),
    planMs: median(runs.map((run) => run.planMs)),
    peakRssMb: Math.min(...peaks),
    peakRssMaxMb: Math.max(...peaks),
  };
}

/** Runs of the planning process per measurement. */
const PLAN_RUNS = 3;

interface LongRunFigures {
  windows: number;
  /** The largest window by the client's send times, and by the service's arrival times (loopback jitter included). */
  ours: { requests: number; maxWindowOverBudget: number; maxWindowOverBudgetAtService: number; rateLimited: number };
  naive: { requests: number; maxWindowOverLimit: number; rateLimited: number };
  colleagueRequests: number;
  /** 429 answers the colleague received while sharing the limit with each strategy. */
  colleagueRefused: { withOurs: number; withNaive: number };
}

/**
 * Scenario 2: drift re-checks back to back for `windows` windows. Ours: the client's budget of
 * 50 per window. Naive: a fixed interval at the service's 60. With `colleague`, someone else
 * spends 10 requests per window of the same user's limit at the same time (why the default
 * budget is 50, not 60): the two together then sit exactly at the limit.
 */
export async function longRun(windows = 15, windowMs = 1000, withColleague = false): Promise<LongRunFigures> {
  const harness = await openFleetHarness({
    shape: { projects: 10, secrets: 2, functions: 1, sections: ['auth', 'postgres', 'restapi'] },
    emulatorRate: { limit: 60, windowMs },
    clientRate: { limit: 50, windowMs },
  });
  try {
    await converge(harness);
    // Let the convergence's window drain so the run starts clean.
    await new Promise((resolve) => setTimeout(resolve, windowMs * 1.1));
    const colleague = async (durationMs: number) =>
      !withColleague
        ? { sent: 0, statuses: {} }
        : sendAtFixedInterval(
        harness.emulator.url,
        harness.emulator.token,
        Array.from({ length: Math.floor((durationMs / windowMs) * 10) }, () => ({ method: 'GET' as const, path: '/v1/snippets' })),
        windowMs / 10,
      );
    const isOurs = (path: string) => path.startsWith('/v1/') && !path.startsWith('/v1/snippets');

    const start = harness.emulator.requests().length;
    const sendStart = harness.sendTimes.length;
    const deadline = performance.now() + windows * windowMs;
    const colleagueRun = colleague(windows * windowMs);
    while (performance.now() < deadline) await harness.pass({ dryRun: true, priority: 'drift' });
    await colleagueRun;
    const ourLog = harness.emulator.requests().slice(start);
    const oursTimes = ourLog.filter((e) => isOurs(e.path)).map((e) => e.time);
    const oursFigures = {
      requests: oursTimes.length,
      maxWindowOverBudget: round(maxInAnyWindow(harness.sendTimes.slice(sendStart), windowMs) / 50),
      maxWindowOverBudgetAtService: round(maxInAnyWindow(oursTimes, windowMs) / 50),
      rateLimited: ourLog.filter((e) => e.status === 429 && isOurs(e.path)).length,
    };
    const colleagueRefusedWithOurs = ourLog.filter((e) => e.status === 429 && !isOurs(e.path)).length;

    await new Promise((resolve) => setTimeout(resolve, windowMs * 1.5));
    const naiveStart = harness.emulator.requests().length;
    const reads = naiveObservation(harness.fleet, await harness.refs());
    const naiveDeadline = windows * windowMs;
    const naiveRequests = Array.from({ length: Math.ceil((naiveDeadline / windowMs) * 60) }, (_, i) => reads[i % reads.length]!);
    const colleagueRun2 = colleague(naiveDeadline);
    await sendAtFixedInterval(harness.emulator.url, harness.emulator.token, naiveRequests, windowMs / 60);
    const colleagueDone = await colleagueRun2;
    const naiveLog = harness.emulator.requests().slice(naiveStart);
    const naiveTimes = naiveLog.filter((e) => isOurs(e.path)).map((e) => e.time);
    return {
      windows,
      ours: oursFigures,
      naive: {
        requests: naiveTimes.length,
        maxWindowOverLimit: round(maxInAnyWindow(naiveTimes, windowMs) / 60),
        rateLimited: naiveLog.filter((e) => e.status === 429 && isOurs(e.path)).length,
      },
      colleagueRequests: colleagueDone.sent,
      colleagueRefused: { withOurs: colleagueRefusedWithOurs, withNaive: naiveLog.filter((e) => e.status === 429 && !isOurs(e.path)).length },
    };
  } finally {
    await harness.close();
  }
}

interface ConvergeFigures {
  projects: number;
  requests: number;
  seconds: number;
  minimumSeconds: number;
  ratio: number;
  naiveModelledRatio: number;
  writeLatencySlots: number;
  naiveWriteLatencySlots: number;
}

/**
 * Scenario 3: time to converge a fleet from empty over the minimum the budget allows
 * (requests needed / rate). Scenario 4 (on a converged fleet of its own): request slots between a write
 * being asked for and its send, while a full drift sweep waits in the queue.
 */
export async function convergeAndLatency(projects = 10, windowMs = 1000): Promise<ConvergeFigures> {
  const budget = 50;
  const harness = await openFleetHarness({
    shape: { projects, secrets: 2, functions: 1, sections: ['auth', 'postgres', 'restapi'] },
    emulatorRate: { limit: 60, windowMs },
    clientRate: { limit: budget, windowMs },
  });
  try {
    const started = performance.now();
    await harness.pass();
    const seconds = (performance.now() - started) / 1000;
    const log = harness.emulator.requests().filter((e) => e.path.startsWith('/v1/'));
    const minimumSeconds = (log.length / budget) * (windowMs / 1000);
    const check = await harness.pass({ dryRun: true });
    if (check.plan.hasChanges) throw new Error('the fleet did not converge in one pass');

    // The naive tool: the same writes, one GET per resource before and after, at 60 per window
    // spaced evenly (it cannot burst), so its time is its request count over its rate.
    const writes = log.filter((e) => e.method !== 'GET').length;
    const naiveReads = naiveObservation(harness.fleet, await harness.refs()).length;
    const naiveSeconds = ((writes + 2 * naiveReads) / 60) * (windowMs / 1000);

    const latency = await writeLatency();
    return {
      projects,
      requests: log.length,
      seconds: round(seconds),
      minimumSeconds: round(minimumSeconds),
      ratio: round(seconds / minimumSeconds),
      naiveModelledRatio: round(naiveSeconds / minimumSeconds),
      writeLatencySlots: latency.slots,
      naiveWriteLatencySlots: latency.naiveSlots,
    };
  } finally {
    await harness.close();
  }
}

/**
 * Scenario 4 on a fleet of its own with a 5 s window: the write is asked once the sweep has
 * spent the window, and a window this long leaves that moment well before the window rolls
 * over even on a busy machine (with a 1 s window a late poll could ask just as slots came
 * free, and count the sweep requests granted them as slots the write waited for).
 */
async function writeLatency(windowMs = 5000): Promise<{ slots: number; naiveSlots: number }> {
  const harness = await openFleetHarness({
    shape: { projects: 2, secrets: 0, functions: 0, sections: ['auth'] },
    emulatorRate: { limit: 60, windowMs },
    clientRate: { limit: 50, windowMs },
  });
  try {
    await harness.pass();
    return await measureWriteLatency(harness, windowMs);
  } finally {
    await harness.close();
  }
}

async function measureWriteLatency(harness: Awaited<ReturnType<typeof openFleetHarness>>, windowMs: number): Promise<{ slots: number; naiveSlots: number }> {
  await new Promise((resolve) => setTimeout(resolve, windowMs * 1.1));
  const refs = [...(await harness.refs()).values()];
  const api = harness.client.api;
  const controller = new AbortController();
  const sweepSize = 200;
  // Counted in the client's send order (its transport), not by arrival: a write carries a
  // body, so the emulator can log a GET sent just after it first.
  const sends = harness.sendMethods;
  const base = sends.length;
  const sweep = Array.from({ length: sweepSize }, (_, i) =>
    api.getAuthServiceConfig(refs[i % refs.length]!, { priority: 'drift', project: `p${i % refs.length}`, signal: controller.signal }).catch(() => undefined),
  );
  // Wait until the sweep has spent the current window, then ask for a write.
  while (sends.length - base < 50) await new Promise((resolve) => setTimeout(resolve, 5));
  const askedAt = sends.length;
  const sweepSentBefore = askedAt - base;
  await api.updateAuthServiceConfig(refs[0]!, { jwt_exp: 3600 }, { priority: 'write', project: 'p0' });
  const writeIndex = sends.indexOf('PATCH', askedAt);
  controller.abort();
  await Promise.all(sweep);
  return { slots: writeIndex - askedAt, naiveSlots: sweepSize - sweepSentBefore };
}

interface ModelPassFigures {
  model: 'user' | 'scoped';
  projects: number;
  requests: number;
  /** The fewest requests a no-change pass can make (the same in both models). */
  lowerBound: number;
  /** Requests counted against the user (the project and organization lists in `scoped`). */
  userScoped: number;
  seconds: number;
  /** The least time the budget allows: the user's count over its rate (all requests in `user`). */
  minimumSeconds: number;
  rateLimited: number;
}

const USER_SCOPED = new Set(['/v1/projects', '/v1/organizations', '/v1/snippets']);

/**
 * Scenario 6: a no-change pass over `projects` projects in each rate model, the emulator counting
 * the same way as the client budgets. In `user` every request spends the user's 60 per window;
 * in `scoped` only the lists do, and the per-project reads each have their own count, so the
 * pass takes the time its user-scoped calls allow rather than the time of all of its requests.
 */
export async function passByModel(model: 'user' | 'scoped', projects: number, windowMs = 1000): Promise<ModelPassFigures> {
  const budget = 50;
  // Converge without a limit that counts, then measure the pass with the real ones.
  const harness = await openNoChangeFleet(projects);
  try {
    await converge(harness);
    harness.emulator.setRateLimit({ limit: 60, windowMs }, model);
    const client = await createClient({
      baseUrl: harness.emulator.url,
      auth: staticToken(harness.emulator.token),
      rate: { limit: budget, windowMs },
      rateModel: model,
      concurrency: 8,
    });
    const before = harness.emulator.requests().length;
    const started = performance.now();
    try {
      const dry = await harness.pass({ dryRun: true, client });
      if (dry.plan.hasChanges) throw new Error('the no-change pass found changes');
    } finally {
      await client.close();
    }
    const seconds = (performance.now() - started) / 1000;
    const sent = harness.emulator.requests().slice(before).filter((e) => e.path.startsWith('/v1/'));
    const userScoped = sent.filter((e) => model === 'user' || USER_SCOPED.has(e.path)).length;
    return {
      model,
      projects,
      requests: sent.length,
      lowerBound: harness.fleet.lowerBound,
      userScoped,
      seconds: round(seconds),
      // The first `budget` go at once; each further one waits its turn in the window.
      minimumSeconds: round((Math.max(0, userScoped - budget) / budget) * (windowMs / 1000)),
      rateLimited: sent.filter((e) => e.status === 429).length,
    };
  } finally {
    await harness.close();
  }
}
