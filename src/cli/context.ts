import type { Readable, Writable } from 'node:stream';
import type { Settings } from './settings.js';

/** What a command receives: its options, parsed and validated once (`settings`), and its streams. */
export interface CommandContext {
  /** Positional arguments after the command word. */
  positionals: string[];
  /** Every option (flags over environment over defaults), typed and validated once by main.ts (settings.ts). */
  settings: Settings;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: Writable;
  stderr: Writable;
  /** Where a confirmation is read from: the process's standard input when run as the command (bin.ts); absent, nothing is asked. */
  stdin?: Readable;
  /** Aborted on SIGTERM/SIGINT. */
  signal: AbortSignal;
}

/** A command exits with 0 (success), 1 (error) or 2 (changes, with --detailed-exitcode). */
export type CommandHandler = (context: CommandContext) => Promise<number>;

export { UsageError } from './usage-error.js';
