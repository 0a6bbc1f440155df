// The built daemon (`node dist/cli/bin.js --watch ...`) as a child process, its JSON log lines
// collected as they arrive.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(new URL('../..', import.meta.url).pathname);
export const NODE = join(REPO, 'node_modules/.bin/node');
export const BIN = join(REPO, 'dist/cli/bin.js');

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx tsc -p .), as npm test does`);
}

export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export class DaemonProcess {
  readonly lines: LogLine[] = [];
  /** Everything the process wrote, for the secret checks. */
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcess;
  #waiters: Array<() => void> = [];

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.#child = spawn(NODE, [BIN, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    this.#child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stdout += text;
      pending += text;
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const part of parts) {
        if (!part.trim()) continue;
        try {
          this.lines.push(JSON.parse(part) as LogLine);
        } catch {
          this.lines.push({ msg: `unparsed: ${part}` });
        }
      }
      this.#wake();
    });
    this.#child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.exited = new Promise((resolveExit) => {
      this.#child.on('exit', (code) => {
        this.#wake();
        resolveExit(code);
      });
    });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves with the first log line (from index `from`) matching, or rejects after `timeoutMs` with the log so far. */
  async waitFor(predicate: (line: LogLine) => boolean, options: { from?: number; timeoutMs?: number } = {}): Promise<LogLine> {
    const from = options.from ?? 0;
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const found = this.lines.slice(from).find(predicate);
      if (found) return found;
      if (this.#child.exitCode !== null) throw new Error(`daemon exited (${this.#child.exitCode}) before the expected line\n${this.stdout}\n${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for a log line\n${this.stdout.slice(-6000)}\n${this.stderr}`);
      await new Promise<void>((resolveWait) => {
        const timer = setTimeout(resolveWait, Math.min(left, 1000));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolveWait();
        });
      });
    }
  }

  /** The metrics URL from the `daemon started` line. */
  async metricsUrl(): Promise<string> {
    const started = await this.waitFor((l) => l.msg === 'daemon started');
    return started.metrics as string;
  }

  /** The child's process id (its memory is read from /proc). */
  get pid(): number {
    return this.#child.pid!;
  }

  signal(signal: NodeJS.Signals): void {
    this.#child.kill(signal);
  }

  /** Stops the process (SIGTERM) and returns its exit code. */
  async stop(): Promise<number | null> {
    if (this.#child.exitCode === null) this.#child.kill('SIGTERM');
    return this.exited;
  }
}
