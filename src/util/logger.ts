import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import type { LogFormat } from './log-options.js';

/**
 * Paths that may hold a secret in any log object. Values there are replaced, whatever the
 * level: tokens, passwords, secret values, resolved references and request bodies.
 */
const REDACT_PATHS = [
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

export { LOG_FORMATS, LOG_LEVELS, colorWanted, type LogFormat } from './log-options.js';

interface LoggerOptions {
  level?: string;
  /** `pretty`: one concise line per event for a person at a terminal; `json` (default): JSON lines. */
  format?: LogFormat;
  /** ANSI colour in the pretty format (see `colorWanted`). */
  color?: boolean;
  /** Where lines go (default: standard error). */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Static fields on every line. */
  base?: Record<string, unknown>;
}

export type Logger = PinoLogger;


export function createLogger(options: LoggerOptions = {}): Logger {
  const config = {
    level: options.level ?? 'info',
    base: options.base ?? {},
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names, not numbers: a person or a log query reads `"level":"warn"` without a table.
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const target = options.destination ?? pino.destination({ dest: 2, sync: true });
  if (options.format === 'pretty') return pino(config, prettyStream(target, options.color ?? false));
  return pino(config, target as DestinationStream);
}

const ANSI = { reset: '\u001b[0m', dim: '\u001b[2m', red: '\u001b[31m', green: '\u001b[32m', yellow: '\u001b[33m', cyan: '\u001b[36m', gray: '\u001b[90m' };
const LEVEL_COLORS: Record<string, string> = { trace: ANSI.gray, debug: ANSI.gray, info: ANSI.green, warn: ANSI.yellow, error: ANSI.red, fatal: ANSI.red };
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value && typeof value === 'object' && 'message' in value && typeof (value as { message: unknown }).message === 'string') {
    // A serialized error: its message is the point on a terminal; the stack is in the JSON format.
    return JSON.stringify((value as { message: string }).message);
  }
  return JSON.stringify(value) ?? String(value);
}

/**
 * Renders one JSON log line as `HH:MM:SS LEVEL message key=value ...`. A progress line (it has
 * a `wait` field) says everything in its message, so its fields are left to the JSON format.
 */
export function formatPrettyLine(line: string, color: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (code: string | undefined, text: string) => (color && code ? `${code}${text}${ANSI.reset}` : text);
  const level = typeof record.level === 'string' ? record.level : 'info';
  const time = typeof record.time === 'string' ? new Date(record.time) : new Date();
  const clock = [time.getHours(), time.getMinutes(), time.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  const message = typeof record.msg === 'string' ? record.msg : '';
  const fields =
    'wait' in record
      ? []
      : Object.entries(record)
          .filter(([key, value]) => !OMITTED.has(key) && value !== undefined)
          .map(([key, value]) => `${paint(ANSI.dim, `${key}=`)}${formatValue(value)}`);
  const text = paint(level === 'error' || level === 'fatal' ? ANSI.red : undefined, message);
  return `${paint(ANSI.dim, clock)} ${paint(LEVEL_COLORS[level], level.toUpperCase().padEnd(5))} ${[text, ...fields].join(' ')}\n`;
}

function prettyStream(target: DestinationStream | NodeJS.WritableStream, color: boolean): DestinationStream {
  return {
    write(chunk: string) {
      // pino hands over whole lines, one per call.
      for (const line of chunk.split('\n')) if (line !== '') target.write(formatPrettyLine(line, color));
    },
  };
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });
