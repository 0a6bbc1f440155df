import type { Readable, Writable } from 'node:stream';
import type { ParsedValues } from './options.js';

/** What a command receives: parsed options (flags over environment over defaults) and its streams. */
export interface CommandContext {
  /** Positional arguments after the command word. */
  positionals: string[];
  values: ParsedValues;
  /** Repeatable options (`--notify`), every value in order; absent or empty when not given. */
  lists?: Readonly<Record<string, readonly string[]>>;
  /** Options given on the command line (not from the environment or a default). */
  flags: ReadonlySet<string>;
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

export class UsageError extends Error {}

/** Value of a string option (flag, environment or default). */
export function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}
