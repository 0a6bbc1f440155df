// Continuous drift checking on a scaled clock: a fleet on the emulator, re-checked through the
// real daemon, engine and client over loopback HTTP, while the daemon's clock is a manual one
// that the run moves in one-second steps (a pass takes no time on it). The stated bound and the
// largest observation age are read from the daemon's metrics, as a dashboard reads them.
import { Daemon, type DaemonPassRequest } from '../daemon/controller.js';
import { createMetrics, type DaemonMetrics } from '../daemon/metrics.js';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass, type PassOptions } from '../reconcile/engine.js';
import { ManualClock } from '../util/clock.js';
import { silentLogger } from '../util/logger.js';
import { converge, openFleetHarness, type FleetHarness } from './harness.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

interface FreshnessOptions {
  projects: number;
  /** Full re-check cycles measured after the warm-up cycle. */
  cycles: number;
  /** The budget the daemon plans with, on its (scaled) clock. */
  budget: { limit: number; windowMs: number };
}

interface FreshnessFigures {
  projects: number;
  /** The stated floor at the end of the run, seconds. */
  boundSeconds: number;
  /** Largest reconciler_observation_age_max_seconds seen after the warm-up, seconds. */
  largestAgeSeconds: number;
  /** Largest (max age ÷ bound at that moment) seen after the warm-up. */
  ratio: number;
  /** Time from an out-of-band change to the pass that found it, seconds. */
  detectionSeconds: number;
  /** The bound when the change was made, seconds. */
  boundAtChangeSeconds: number;
  samples: number;
}

const STEP_MS = 1_000;

async function gauge(metrics: DaemonMetrics, name: string): Promise<number | undefined> {
  const text = await metrics.render();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

export async function continuousFreshness(options: FreshnessOptions): Promise<FreshnessFigures> {
  const unlimited = { limit: 1_000_000, windowMs: 60_000 };
  // The client and the emulator do not limit: the daemon's plan on the scaled clock is under test.
  const harness = await openFleetHarness({ shape: { projects: options.projects, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: unlimited, clientRate: unlimited });
  const clock = new ManualClock();
  const metrics = createMetrics(undefined, { clock, processMetrics: false });
  const found: Array<{ project: string; at: number }> = [];
  let daemon: Daemon | undefined;
  try {
    await converge(harness);
    daemon = new Daemon({
      manifestsPath: harness.fleet.dir,
      loadManifests: (dir) => loadManifests(dir),
      runPass: async (request) => {
        const result = await runPass(passOptions(harness, clock, request));
        for (const entry of result.plan.entries) {
          if (request.priority === 'drift' && entry.project !== undefined && entry.action !== 'noop') found.push({ project: entry.project, at: clock.now() });
        }
        return result;
      },
      metrics,
      log: silentLogger,
      clock,
      trigger: 'continuous',
      budget: () => options.budget,
    });
    const step = async () => {
      await clock.advance(STEP_MS);
      await daemon!.settled();
    };
    await daemon.start();
    await daemon.settled();
    const bound = async () => (await gauge(metrics, 'reconciler_observation_age_bound_seconds')) ?? Number.POSITIVE_INFINITY;
    // Warm-up: the first cycle, while the per-project cost estimate settles on the measured one.
    const warmUpUntil = clock.now() + 2 * (await bound()) * 1000;
    while (clock.now() < warmUpUntil) await step();

    let ratio = 0;
    let largestAge = 0;
    let samples = 0;
    const sample = async () => {
      const age = (await gauge(metrics, 'reconciler_observation_age_max_seconds')) ?? 0;
      largestAge = Math.max(largestAge, age);
      ratio = Math.max(ratio, age / (await bound()));
      samples += 1;
    };
    const measureUntil = clock.now() + options.cycles * (await bound()) * 1000;
    let change: { project: string; at: number; boundSeconds: number } | undefined;
    while (clock.now() < measureUntil) {
      await step();
      await sample();
      if (!change) {
        // The worst case: change the project observed most recently, so it is found a cycle later.
        const project = await newestObserved(metrics);
        const refs = await harness.refs();
        const answer = await fetch(`${harness.emulator.url}/v1/projects/${refs.get(project)}/config/auth`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${harness.emulator.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ site_url: 'https://changed-out-of-band.example.com' }),
        });
        if (!answer.ok) throw new Error(`the out-of-band change failed: ${answer.status}`);
        change = { project, at: clock.now(), boundSeconds: await bound() };
      }
    }
    const detected = found.find((f) => f.project === change!.project && f.at >= change!.at);
    return {
      projects: options.projects,
      boundSeconds: round(await bound()),
      largestAgeSeconds: round(largestAge),
      ratio: round(ratio),
      detectionSeconds: detected ? round((detected.at - change!.at) / 1000) : Number.POSITIVE_INFINITY,
      boundAtChangeSeconds: round(change!.boundSeconds),
      samples,
    };
  } finally {
    await daemon?.stop(1_000);
    await harness.close();
  }
}

/** The project with the smallest reconciler_observation_age_seconds. */
/** The options of a daemon pass over the bench's fleet: its client and state, no log. */
function passOptions(harness: FleetHarness, clock: ManualClock, request: DaemonPassRequest): PassOptions {
  return {
    manifests: request.manifests,
    client: harness.client,
    stateDir: harness.stateDir,
    dryRun: false,
    env: harness.fleet.env,
    log: silentLogger,
    clock,
    priority: request.priority,
    signal: request.signal,
    ...(request.projects ? { projects: request.projects } : {}),
  };
}

async function newestObserved(metrics: DaemonMetrics): Promise<string> {
  let newest: { project: string; age: number } | undefined;
  for (const line of (await metrics.render()).split('\n')) {
    const match = /^reconciler_observation_age_seconds\{project="([^"]+)"\} (\S+)$/.exec(line);
    if (match && (!newest || Number(match[2]) < newest.age)) newest = { project: match[1]!, age: Number(match[2]) };
  }
  if (!newest) throw new Error('no project has been observed');
  return newest.project;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

interface WritePassOptions {
  projects: number;
  /** Projects a revision changes (the first ones of the fleet). */
  changed: number;
  /** The budget the daemon plans with and the modelled client spends, on the scaled clock. */
  budget: { limit: number; windowMs: number };
  /** Full re-check cycles measured before the revision, and after it. */
  cycles: number;
}

interface WritePassFigures {
  projects: number;
  changed: number;
  /** Requests of the revision's write pass. */
  writeRequests: number;
  /** Seconds (scaled clock) from the revision to the last of its requests. */
  writeSeconds: number;
  /** The stated bound just before the revision, and the largest stated from it on, seconds. */
  boundBeforeSeconds: number;
  boundLargestSeconds: number;
  /** Largest (max age ÷ bound at that moment) before the revision, and from it on. */
  ratioBefore: number;
  ratioThrough: number;
  /** Largest reconciler_observation_age_max_seconds from the revision on. */
  largestAgeSeconds: number;
  samples: number;
}

/**
 * The client's request budget on the scaled clock: a sliding window of `limit` sends per
 * `windowMs`, in which a request takes the first free place after every place already given
 * (the client's queue sends write-priority requests first, and a write pass's are given their
 * places when it runs, ahead of any re-check that starts after).
 */
class BudgetModel {
  readonly #sends: number[] = [];
  constructor(readonly limit: number, readonly windowMs: number) {}

  /** The place (ms since the epoch) of each of `count` requests asked for at `from`. */
  take(count: number, from: number): number[] {
    const places: number[] = [];
    for (let i = 0; i < count; i++) {
      let at = Math.max(from, this.#sends[this.#sends.length - 1] ?? from);
      // The window ending at `at` must hold fewer than `limit` sends.
      const oldest = this.#sends[this.#sends.length - this.limit];
      if (oldest !== undefined) at = Math.max(at, oldest + this.windowMs);
      this.#sends.push(at);
      places.push(at);
    }
    if (this.#sends.length > 4 * this.limit) this.#sends.splice(0, this.#sends.length - 2 * this.limit);
    return places;
  }

  /** When a request asked for at `from` would be sent, without taking the place. */
  next(from: number): number {
    const oldest = this.#sends[this.#sends.length - this.limit];
    return Math.max(from, this.#sends[this.#sends.length - 1] ?? from, oldest === undefined ? from : oldest + this.windowMs);
  }
}

/**
 * Continuous drift checking through a revision's write pass, on a scaled clock. As in
 * `continuousFreshness`, the passes themselves run against the emulator with a client that does
 * not limit, in no time on the daemon's manual clock; unlike it, the time the budget makes them
 * take is modelled on that clock (`BudgetModel`): a write pass holds its projects until the
 * last of its requests has its place, and a re-check starts reading only when the budget has a
 * place for it after the writes. After a warm-up and a measured stretch, a revision changes
 * `changed` projects; the run samples the age and bound metrics every second through the write
 * pass and for `cycles` cycles after it.
 */
export async function freshnessThroughWrites(options: WritePassOptions): Promise<WritePassFigures> {
  const unlimited = { limit: 1_000_000, windowMs: 60_000 };
  const harness = await openFleetHarness({ shape: { projects: options.projects, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: unlimited, clientRate: unlimited });
  const clock = new ManualClock();
  const metrics = createMetrics(undefined, { clock, processMetrics: false });
  const model = new BudgetModel(options.budget.limit, options.budget.windowMs);
  // The passes' work against the emulator, in real time: a step waits for it.
  const working = new Set<Promise<unknown>>();
  const work = <T>(promise: Promise<T>): Promise<T> => {
    working.add(promise);
    void promise.finally(() => working.delete(promise)).catch(() => undefined);
    return promise;
  };
  let daemon: Daemon | undefined;
  let write: { at: number; requests: number; lastSendAt?: number } | undefined;
  try {
    await converge(harness);
    daemon = new Daemon({
      manifestsPath: harness.fleet.dir,
      loadManifests: (dir) => work(loadManifests(dir)),
      runPass: async (request) => {
        if (request.priority === 'drift') {
          // Reads wait for their place behind the writes already given theirs.
          const start = model.next(clock.now());
          if (start > clock.now()) await clock.sleep(start - clock.now(), request.signal);
        }
        const result = await work(
          runPass(passOptions(harness, clock, request)),
        );
        const places = model.take(result.requests, clock.now());
        const last = places[places.length - 1] ?? clock.now();
        if (request.priority === 'write' && write && write.lastSendAt === undefined) {
          write.requests = result.requests;
          write.lastSendAt = last;
        }
        if (last > clock.now()) await clock.sleep(last - clock.now(), request.signal);
        return result;
      },
      metrics,
      log: silentLogger,
      clock,
      trigger: 'continuous',
      budget: () => options.budget,
    });
    const step = async () => {
      await clock.advance(STEP_MS);
      while (working.size > 0) {
        await Promise.allSettled([...working]);
        await clock.advance(0);
      }
    };
    const started = daemon.start();
    const bound = async () => (await gauge(metrics, 'reconciler_observation_age_bound_seconds')) ?? Number.POSITIVE_INFINITY;
    while (((await gauge(metrics, 'reconciler_observation_age_bound_seconds')) ?? 0) <= 0) await step();
    await started;
    // Warm-up: the first cycles, while the per-project cost estimate settles on the measured one.
    for (let cycle = 0; cycle < 5; cycle++) {
      const until = clock.now() + (await bound()) * 1000;
      while (clock.now() < until) await step();
    }

    let samples = 0;
    const sample = async () => {
      samples += 1;
      const age = (await gauge(metrics, 'reconciler_observation_age_max_seconds')) ?? 0;
      const stated = await bound();
      return { age, stated, ratio: age / stated };
    };
    let ratioBefore = 0;
    const beforeUntil = clock.now() + options.cycles * (await bound()) * 1000;
    while (clock.now() < beforeUntil) {
      await step();
      ratioBefore = Math.max(ratioBefore, (await sample()).ratio);
    }
    const boundBefore = await bound();
    await changeProjects(harness, options.changed);
    write = { at: clock.now(), requests: 0 };
    const reading = work(daemon.reload());
    let ratioThrough = 0;
    let largestAge = 0;
    let boundLargest = boundBefore;
    const record = async () => {
      const s = await sample();
      ratioThrough = Math.max(ratioThrough, s.ratio);
      largestAge = Math.max(largestAge, s.age);
      boundLargest = Math.max(boundLargest, s.stated);
    };
    while (write.lastSendAt === undefined || clock.now() < write.lastSendAt) {
      await step();
      await record();
    }
    await reading;
    const afterUntil = clock.now() + options.cycles * (await bound()) * 1000;
    while (clock.now() < afterUntil) {
      await step();
      await record();
    }
    return {
      projects: options.projects,
      changed: options.changed,
      writeRequests: write.requests,
      writeSeconds: round((write.lastSendAt - write.at) / 1000),
      boundBeforeSeconds: round(boundBefore),
      boundLargestSeconds: round(boundLargest),
      ratioBefore: round(ratioBefore),
      ratioThrough: round(ratioThrough),
      largestAgeSeconds: round(largestAge),
      samples,
    };
  } finally {
    const stopping = daemon?.stop(1_000);
    // The stop's grace period runs on the scaled clock.
    for (let i = 0; i < 4 && stopping; i++) await clock.advance(500);
    await stopping;
    await harness.close();
  }
}

/** A new revision that changes the first `changed` projects of the fleet (each one's site URL). */
async function changeProjects(harness: FleetHarness, changed: number): Promise<void> {
  for (let i = 0; i < changed; i++) {
    const file = join(harness.fleet.dir, 'projects', `${harness.fleet.projectNames[i]}.yaml`);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(`https://app-${i}.example.com`, `https://app-${i}-next.example.com`));
  }
}
