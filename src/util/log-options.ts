// What the command line and the commands need to know of logging without a logger: the
// formats and levels the options accept and whether a stream gets colour. Apart from the
// logger (logger.ts), so that a command that logs nothing (`status`, `validate`) does not load
// pino and its dependencies.

export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** The levels `--log-level` accepts: pino's, lowest first, and `silent`. */
export const LOG_LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * Whether a stream gets colour: `FORCE_COLOR` (any value but `0` or `false`) forces it,
 * as it does for Node itself, then a non-empty `NO_COLOR` turns it off, else a terminal has it.
 */
export function colorWanted(env: NodeJS.ProcessEnv, isTty: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return isTty;
}
