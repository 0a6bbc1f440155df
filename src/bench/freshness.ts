// Continuous drift checking on a scaled clock: a fleet on the emulator, re-checked through the
// real daemon, engine and client over loopback HTTP, while the daemon's clock is a manual one
// that the run moves in one-second steps (a pass takes no time on it). The stated bound and the
// largest observation age are read from the daemon's metrics, as a dashboard reads them.
import { Daemon } from '../daemon/controller.js';
import { createMetrics, type DaemonMetrics } from '../daemon/metrics.js';
import { loadManifests } from '../manifests/load.js';
import { runPass } from '../reconcile/engine.js';
import { ManualClock } from '../util/clock.js';
import { silentLogger } from '../util/logger.js';
import { converge, openFleetHarness } from './harness.js';

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
        const result = await runPass({
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
        });
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
