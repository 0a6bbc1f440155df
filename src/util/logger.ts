import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';

/**
 * Paths that may hold a secret in any log object. Values there are replaced, whatever the
 * level: tokens, passwords, secret values, resolved references and request bodies.
 */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
  'client_secret',
  'authorization',
  'headers.authorization',
  '*.headers.authorization',
  'password',
  'db_pass',
  '*.db_pass',
  'value',
  '*.value',
  'values',
  'secret',
  'secrets',
  'body',
  '*.body',
  'root_key',
  '*.root_key',
];

export interface LoggerOptions {
  level?: string;
  /** Human-readable output (a TTY); JSON lines otherwise. */
  pretty?: boolean;
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Static fields on every line. */
  base?: Record<string, unknown>;
  /** File descriptor the pretty output goes to (default 2; the daemon logs to stdout, 1). */
  prettyFd?: 1 | 2;
}

export type Logger = PinoLogger;

/** The levels `--log-level` accepts. */
export const LOG_LEVELS: readonly string[] = [...Object.keys(pino.levels.values), 'silent'];

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const config = {
    level,
    base: options.base ?? {},
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.pretty) {
    const transport = pino.transport({
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', destination: options.prettyFd ?? 2 },
    });
    return pino(config, transport);
  }
  return pino(config, (options.destination as DestinationStream | undefined) ?? pino.destination({ dest: 2, sync: true }));
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });
