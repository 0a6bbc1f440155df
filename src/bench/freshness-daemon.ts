// Scenario 8b: the stated freshness bound through a write pass, on the built daemon
// (`reconcile --watch --resync continuous`) with a real budget in wall-clock time. A fleet is
// converged on the emulator first (without a limit), then the daemon runs over it with its own
// budget; the run scrapes its /metrics every second and compares, in each scrape,
// reconciler_observation_age_max_seconds with reconciler_observation_age_bound_seconds. After
// a warm-up and a stretch without writes, a revision changes some projects, and the run goes on
// through the write pass and one stated cycle after it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { converge, openFleetHarness, type FleetHarness } from './harness.js';

const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

export interface DaemonFreshnessOptions {
  projects: number;
  /** Projects the revision changes (the first ones of the fleet). */
  changed: number;
  /** The daemon's --rate-limit, e.g. `60/20s` (a scaled-down 60 per minute). */
  rateLimit: string;
  /** Seconds sampled before the revision, after the warm-up. */
  beforeSeconds?: number;
  node?: string;
  /** Progress messages. */
  log?: (message: string) => void;
}

export interface DaemonFreshnessFigures {
  projects: number;
  changed: number;
  rateLimit: string;
  /** Largest (age ÷ bound stated in the same scrape) before the revision, and from it on. */
  ratioBefore: number;
  ratioThrough: number;
  /** The bound just before the revision and the largest stated from it on, seconds. */
  boundBeforeSeconds: number;
  boundLargestSeconds: number;
  /** Largest age from the revision on, seconds. */
  largestAgeSeconds: number;
  /** Seconds from the revision to the end of its write pass (the daemon's log), and the pass's requests. */
  writeSeconds: number;
  writeRequests: number;
  samples: number;
  /** Every scrape from the revision on: seconds since it, age, bound. */
  trace: Array<[number, number, number]>;
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function gaugeOf(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

export async function daemonFreshnessThroughWrites(options: DaemonFreshnessOptions): Promise<DaemonFreshnessFigures> {
  const unlimited = { limit: 100_000, windowMs: 60_000 };
  const harness = await openFleetHarness({ shape: { projects: options.projects, secrets: 0, functions: 0, sections: ['auth'] }, emulatorRate: unlimited, clientRate: unlimited });
  const work = await mkdtemp(join(tmpdir(), 'reconcile-freshness-daemon-'));
  let daemon: WatchedDaemon | undefined;
  try {
    await converge(harness);
    daemon = startDaemon(harness, work, options);
    const log = options.log ?? (() => undefined);
    const warm = await warmUp(daemon, log);
    const before = await sampleBefore(daemon, warm, options.beforeSeconds ?? warm);
    log(`before the revision: largest age / bound ${round(before.ratio)}; changing ${options.changed} projects`);
    const passesBefore = daemon.writePasses.length;
    await changeProjects(harness, options.changed);
    const through = await sampleThrough(daemon, passesBefore, before.bound, log);
    return report(options, before, through, daemon.writePasses[passesBefore]!);
  } finally {
    await daemon?.stop();
    await harness.close();
    await rm(work, { recursive: true, force: true });
  }
}

type Sample = { age: number; bound: number };

/** The daemon under measure: its metrics, its write passes as its log reports them, and its output's tail. */
interface WatchedDaemon {
  /** The metrics address, once the daemon has said it started. */
  url(): string | undefined;
  /** Write passes finished: when (ms since the epoch) and with how many requests. */
  readonly writePasses: Array<{ at: number; requests: number }>;
  /** The last 20,000 characters of its stdout and stderr. */
  transcript(): string;
  /** Rejects when the daemon exits. */
  readonly exited: Promise<never>;
  /** Ends the daemon (SIGTERM) and waits for it to close. */
  stop(): Promise<void>;
}

/** Starts the built daemon over the harness's fleet with its own budget, following its JSON log. */
function startDaemon(harness: FleetHarness, work: string, options: DaemonFreshnessOptions): WatchedDaemon {
  const daemon: ChildProcess = spawn(
    options.node ?? process.execPath,
    [BIN, harness.fleet.dir, '--watch', '--resync', 'continuous', '--observe', 'none', '--metrics-addr', '127.0.0.1:0', '--state-dir', join(work, 'state'), '--rate-limit', options.rateLimit],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let url: string | undefined;
  let transcript = '';
  const writePasses: Array<{ at: number; requests: number }> = [];
  let pending = '';
  daemon.stdout!.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    transcript = (transcript + text).slice(-20_000);
    pending += text;
    const parts = pending.split('\n');
    pending = parts.pop()!;
    for (const part of parts) {
      try {
        const line = JSON.parse(part) as Record<string, unknown>;
        if (line.msg === 'daemon started') url = line.metrics as string;
        if (line.msg === 'pass finished' && line.priority === 'write') writePasses.push({ at: Date.now(), requests: Number(line.requests ?? 0) });
      } catch {
        // not a log line
      }
    }
  });
  daemon.stderr!.on('data', (chunk: Buffer) => (transcript = (transcript + chunk.toString('utf8')).slice(-20_000)));
  const exited = new Promise<never>((_, reject) => daemon.once('exit', (code) => reject(new Error(`the daemon exited (${code})\n${transcript.slice(-4000)}`))));
  // Sampling stops at the first rejection; a rejection after the run (the daemon stopped) is expected.
  exited.catch(() => undefined);
  return {
    url: () => url,
    writePasses,
    transcript: () => transcript,
    exited,
    async stop() {
      if (daemon.exitCode !== null) return;
      daemon.kill('SIGTERM');
      await new Promise((resolve) => daemon.once('close', resolve));
    },
  };
}

/** One scrape of the daemon's /metrics: the largest observation age and the bound stated with it. */
async function scrape(daemon: WatchedDaemon): Promise<Sample | undefined> {
  const url = daemon.url();
  if (!url) return undefined;
  const text = await (await fetch(`${url}/metrics`)).text();
  const age = gaugeOf(text, 'reconciler_observation_age_max_seconds');
  const bound = gaugeOf(text, 'reconciler_observation_age_bound_seconds');
  return age === undefined || bound === undefined || !(bound > 0) ? undefined : { age, bound };
}

/** One scrape a second until `until()` (ms since the epoch) has passed; fails when the daemon exits. */
async function sampleUntil(daemon: WatchedDaemon, until: () => number, each: (s: Sample) => void): Promise<void> {
  while (Date.now() < until()) {
    const next = Date.now() + 1000;
    const s = await Promise.race([scrape(daemon), daemon.exited]);
    if (s) each(s);
    await sleep(Math.max(0, next - Date.now()));
  }
}

/** The first pass (over everything), then two stated cycles of warm-up; returns the bound stated last. */
async function warmUp(daemon: WatchedDaemon, log: (message: string) => void): Promise<number> {
  let bound = 0;
  await sampleUntil(daemon, () => (daemon.writePasses.length > 0 && bound > 0 ? 0 : Number.POSITIVE_INFINITY), (s) => (bound = s.bound));
  log(`first pass done, bound ${round(bound, 1)}s: warm-up of two cycles`);
  // Two cycles of the bound as it is now stated: it falls from the first estimate of a
  // re-check's cost to the measured one within the first slices.
  const warmFrom = Date.now();
  await sampleUntil(daemon, () => warmFrom + 2 * bound * 1000, (s) => (bound = s.bound));
  return bound;
}

/** The stretch without writes: the largest age / bound, the scrapes, and the bound stated last. */
async function sampleBefore(daemon: WatchedDaemon, bound: number, seconds: number): Promise<{ ratio: number; samples: number; bound: number }> {
  const before = { ratio: 0, samples: 0, bound };
  const until = Date.now() + seconds * 1000;
  await sampleUntil(daemon, () => until, (s) => {
    before.samples += 1;
    before.bound = s.bound;
    before.ratio = Math.max(before.ratio, s.age / s.bound);
  });
  return before;
}

/** The revision: the first `changed` projects of the fleet get another site URL. */
async function changeProjects(harness: FleetHarness, changed: number): Promise<void> {
  for (let i = 0; i < changed; i++) {
    const file = join(harness.fleet.dir, 'projects', `${harness.fleet.projectNames[i]}.yaml`);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(`https://app-${i}.example.com`, `https://app-${i}-next.example.com`));
  }
}

interface Through {
  /** When the revision was written (ms since the epoch). */
  changedAt: number;
  ratio: number;
  largestAge: number;
  boundLargest: number;
  samples: number;
  trace: Array<[number, number, number]>;
}

/** From the revision on: through the write pass, then one stated cycle after it (at most 180 s to the pass). */
async function sampleThrough(daemon: WatchedDaemon, passesBefore: number, boundBefore: number, log: (message: string) => void): Promise<Through> {
  const through: Through = { changedAt: Date.now(), ratio: 0, largestAge: 0, boundLargest: boundBefore, samples: 0, trace: [] };
  const { changedAt } = through;
  let afterUntil = Number.POSITIVE_INFINITY;
  await sampleUntil(daemon, () => afterUntil, (s) => {
    through.samples += 1;
    through.trace.push([round((Date.now() - changedAt) / 1000, 1), s.age, round(s.bound)]);
    through.ratio = Math.max(through.ratio, s.age / s.bound);
    through.largestAge = Math.max(through.largestAge, s.age);
    through.boundLargest = Math.max(through.boundLargest, s.bound);
    if (afterUntil === Number.POSITIVE_INFINITY && daemon.writePasses.length > passesBefore) {
      afterUntil = Date.now() + s.bound * 1000;
      log(`write pass done after ${round((Date.now() - changedAt) / 1000, 1)}s; one stated cycle more`);
    }
    if (afterUntil === Number.POSITIVE_INFINITY && Date.now() - changedAt > 180_000) {
      throw new Error(`no write pass within 180 s of the revision\n${daemon.transcript().slice(-4000)}`);
    }
  });
  return through;
}

/** The figures of the run, rounded. */
function report(options: DaemonFreshnessOptions, before: { ratio: number; samples: number; bound: number }, through: Through, write: { at: number; requests: number }): DaemonFreshnessFigures {
  return {
    projects: options.projects,
    changed: options.changed,
    rateLimit: options.rateLimit,
    ratioBefore: round(before.ratio),
    ratioThrough: round(through.ratio),
    boundBeforeSeconds: round(before.bound, 1),
    boundLargestSeconds: round(through.boundLargest, 1),
    largestAgeSeconds: round(through.largestAge, 1),
    writeSeconds: round((write.at - through.changedAt) / 1000, 1),
    writeRequests: write.requests,
    samples: before.samples + through.samples,
    trace: through.trace,
  };
}
