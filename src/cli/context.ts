import type { Readable, Writable } from 'node:stream';
import type { CommandName } from './options.js';
import type { Settings, SettingsOf } from './settings.js';

/**
 * What a command receives: its options, parsed and validated once (`settings`: a command's
 * own are `SettingsOf<'command'>`, the options the table gives it), and its streams.
 */
export interface CommandContext<S extends Partial<Settings> = Settings> {
  /** Positional arguments after the command word. */
  positionals: string[];
  /** Every option (flags over environment over defaults), typed and validated once by main.ts (settings.ts). */
  settings: S;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: Writable;
  stderr: Writable;
  /** Where a confirmation is read from: the process's standard input when run as the command (bin.ts); absent, nothing is asked. */
  stdin?: Readable;
  /** Aborted on SIGTERM/SIGINT. */
  signal: AbortSignal;
}

/** The context of one command: the settings of its options only. A command exits with 0 (success), 1 (error) or 2 (changes, with --detailed-exitcode). */
export type ContextOf<C extends CommandName> = CommandContext<SettingsOf<C>>;

export { UsageError } from './usage-error.js';
