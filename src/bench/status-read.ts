// `reconcile status` as an operator runs it, against the built daemon (`reconcile --watch`)
// over a converged fleet on the emulator: the wall time of the command (process start
// included) and the API requests the emulator logged meanwhile, asking the daemon
// (`--daemon-url`) and, after the daemon stopped, the state directory. Neither run is given
// an API URL, a token or a secret variable.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { converge, openFleetHarness } from './harness.js';
import type { FleetView } from '../status/fleet-view.js';

/** The built command, whether this module runs built (dist/bench) or from source (src/bench, in tests). */
const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

function runCommand(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<CommandRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(node, [BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started }));
  });
}

export interface StatusReadFigures {
  projects: number;
  fromDaemon: { wallMs: number; apiRequests: number; view: FleetView; output: string };
  fromStateDir: { wallMs: number; apiRequests: number; view: FleetView; output: string };
  /** Everything the daemon and the commands wrote, and the secret values of the fleet, for canary checks. */
  transcript: string;
  secrets: string[];
}

/** Starts the daemon over `projects` converged projects, asks `reconcile status` twice, and stops it. */
export async function statusAgainstDaemon(options: { projects: number; node?: string; statusToken?: string }): Promise<StatusReadFigures> {
  const node = options.node ?? process.execPath;
  const unlimited = { limit: 100_000, windowMs: 60_000 };
  const harness = await openFleetHarness({ shape: { projects: options.projects, secrets: 1, functions: 0, sections: ['auth'] }, emulatorRate: unlimited, clientRate: unlimited });
  const work = await mkdtemp(join(tmpdir(), 'reconcile-status-read-'));
  const stateDir = join(work, 'state');
  let transcript = '';
  let daemon: ReturnType<typeof spawn> | undefined;
  try {
    await converge(harness);
    const tokenFile = options.statusToken ? join(work, 'status-token') : undefined;
    if (tokenFile) await (await import('node:fs/promises')).writeFile(tokenFile, `${options.statusToken}\n`);
    // A yearly drift schedule and no observed-only reads: after its first pass the daemon sends nothing by itself.
    daemon = spawn(
      node,
      [BIN, harness.fleet.dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--state-dir', stateDir, '--resync', '0 0 1 1 *', '--observe', 'none', '--rate-limit', '1000/1s', ...(tokenFile ? ['--status-token-file', tokenFile] : [])],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Array<Record<string, unknown>> = [];
    let pending = '';
    const seen = new Promise<string>((resolve, reject) => {
      let url: string | undefined;
      daemon!.stdout!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        transcript += text;
        pending += text;
        const parts = pending.split('\n');
        pending = parts.pop()!;
        for (const part of parts) {
          if (!part.trim()) continue;
          try {
            const line = JSON.parse(part) as Record<string, unknown>;
            lines.push(line);
            if (line.msg === 'daemon started') url = line.metrics as string;
            if (line.msg === 'pass finished' && line.priority === 'write' && url) resolve(url);
          } catch {
            // not a log line
          }
        }
      });
      daemon!.stderr!.on('data', (chunk: Buffer) => (transcript += chunk.toString('utf8')));
      daemon!.on('exit', (code) => reject(new Error(`the daemon exited (${code}) before its first pass\n${transcript.slice(-4000)}`)));
    });
    const url = await seen;
    const tokenEnv = tokenFile ? { RECONCILE_STATUS_TOKEN_FILE: tokenFile } : {};

    const before = harness.emulator.requests().length;
    const asked = await runCommand(node, ['status', '--output', 'json'], { RECONCILE_DAEMON_URL: url, ...tokenEnv });
    const duringDaemon = harness.emulator.requests().length - before;
    transcript += asked.stdout + asked.stderr;
    if (asked.code !== 0) throw new Error(`reconcile status --daemon-url exited ${asked.code}: ${asked.stderr}`);

    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon!.once('close', resolve));
    daemon = undefined;
    const beforeOffline = harness.emulator.requests().length;
    const offline = await runCommand(node, ['status', '--state-dir', stateDir, '--output', 'json'], {});
    const duringOffline = harness.emulator.requests().length - beforeOffline;
    transcript += offline.stdout + offline.stderr;
    if (offline.code !== 0) throw new Error(`reconcile status --state-dir exited ${offline.code}: ${offline.stderr}`);
    return {
      projects: options.projects,
      fromDaemon: { wallMs: Math.round(asked.wallMs), apiRequests: duringDaemon, view: JSON.parse(asked.stdout) as FleetView, output: asked.stdout },
      fromStateDir: { wallMs: Math.round(offline.wallMs), apiRequests: duringOffline, view: JSON.parse(offline.stdout) as FleetView, output: offline.stdout },
      transcript,
      secrets: [...Object.values(harness.fleet.env), harness.emulator.token, ...(options.statusToken ? [options.statusToken] : [])],
    };
  } finally {
    if (daemon) {
      daemon.kill('SIGTERM');
      await new Promise((resolve) => daemon!.once('close', resolve));
    }
    await harness.close();
    await rm(work, { recursive: true, force: true });
  }
}
