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
import { converge, openFleetHarness } from './harness.js';

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
  let daemon: ChildProcess | undefined;
  let transcript = '';
  try {
    await converge(harness);
    daemon = spawn(
      options.node ?? process.execPath,
      [BIN, harness.fleet.dir, '--watch', '--resync', 'continuous', '--observe', 'none', '--metrics-addr', '127.0.0.1:0', '--state-dir', join(work, 'state'), '--rate-limit', options.rateLimit],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let url: string | undefined;
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
    const exited = new Promise<never>((_, reject) => daemon!.once('exit', (code) => reject(new Error(`the daemon exited (${code})\n${transcript.slice(-4000)}`))));
    const scrape = async (): Promise<{ age: number; bound: number } | undefined> => {
      if (!url) return undefined;
      const text = await (await fetch(`${url}/metrics`)).text();
      const age = gaugeOf(text, 'reconciler_observation_age_max_seconds');
      const bound = gaugeOf(text, 'reconciler_observation_age_bound_seconds');
      return age === undefined || bound === undefined || !(bound > 0) ? undefined : { age, bound };
    };
    /** One scrape a second until `until` (ms since the epoch) or `done`. */
    const sampleUntil = async (until: () => number, each: (s: { age: number; bound: number }) => void) => {
      while (Date.now() < until()) {
        const next = Date.now() + 1000;
        const s = await Promise.race([scrape(), exited]);
        if (s) each(s);
        await sleep(Math.max(0, next - Date.now()));
      }
    };
    // The first pass (over everything), then two stated cycles of warm-up.
    const log = options.log ?? (() => undefined);
    let bound = 0;
    await sampleUntil(() => (writePasses.length > 0 && bound > 0 ? 0 : Number.POSITIVE_INFINITY), (s) => (bound = s.bound));
    log(`first pass done, bound ${round(bound, 1)}s: warm-up of two cycles`);
    // Two cycles of the bound as it is now stated: it falls from the first estimate of a
    // re-check's cost to the measured one within the first slices.
    const warmFrom = Date.now();
    await sampleUntil(() => warmFrom + 2 * bound * 1000, (s) => (bound = s.bound));
    let ratioBefore = 0;
    let samples = 0;
    const beforeUntil = Date.now() + (options.beforeSeconds ?? bound) * 1000;
    await sampleUntil(() => beforeUntil, (s) => {
      samples += 1;
      bound = s.bound;
      ratioBefore = Math.max(ratioBefore, s.age / s.bound);
    });
    log(`before the revision: largest age / bound ${round(ratioBefore)}; changing ${options.changed} projects`);
    const boundBefore = bound;
    const passesBefore = writePasses.length;
    for (let i = 0; i < options.changed; i++) {
      const file = join(harness.fleet.dir, 'projects', `${harness.fleet.projectNames[i]}.yaml`);
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.replace(`https://app-${i}.example.com`, `https://app-${i}-next.example.com`));
    }
    const changedAt = Date.now();
    let ratioThrough = 0;
    let largestAge = 0;
    let boundLargest = boundBefore;
    const trace: Array<[number, number, number]> = [];
    // Through the write pass, then one stated cycle after it.
    let afterUntil = Number.POSITIVE_INFINITY;
    await sampleUntil(() => afterUntil, (s) => {
      samples += 1;
      trace.push([round((Date.now() - changedAt) / 1000, 1), s.age, round(s.bound)]);
      ratioThrough = Math.max(ratioThrough, s.age / s.bound);
      largestAge = Math.max(largestAge, s.age);
      boundLargest = Math.max(boundLargest, s.bound);
      if (afterUntil === Number.POSITIVE_INFINITY && writePasses.length > passesBefore) {
        afterUntil = Date.now() + s.bound * 1000;
        log(`write pass done after ${round((Date.now() - changedAt) / 1000, 1)}s; one stated cycle more`);
      }
      if (afterUntil === Number.POSITIVE_INFINITY && Date.now() - changedAt > 180_000) {
        throw new Error(`no write pass within 180 s of the revision\n${transcript.slice(-4000)}`);
      }
    });
    const write = writePasses[passesBefore]!;
    return {
      projects: options.projects,
      changed: options.changed,
      rateLimit: options.rateLimit,
      ratioBefore: round(ratioBefore),
      ratioThrough: round(ratioThrough),
      boundBeforeSeconds: round(boundBefore, 1),
      boundLargestSeconds: round(boundLargest, 1),
      largestAgeSeconds: round(largestAge, 1),
      writeSeconds: round((write.at - changedAt) / 1000, 1),
      writeRequests: write.requests,
      samples,
      trace,
    };
  } finally {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGTERM');
      await new Promise((resolve) => daemon!.once('close', resolve));
    }
    await harness.close();
    await rm(work, { recursive: true, force: true });
  }
}
