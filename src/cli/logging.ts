import type { Readable, Writable } from 'node:stream';
import { colorWanted, createLogger, type LogFormat, type Logger } from '../util/logger.js';
import { stringOption, type CommandContext } from './context.js';

export function isTty(stream: Readable | Writable): boolean {
  return (stream as Writable & { isTTY?: boolean }).isTTY === true;
}

/** `--log-format` / RECONCILE_LOG_FORMAT (main.ts has checked it), else pretty on a terminal and JSON otherwise. */
export function logFormat(context: CommandContext, stream: Writable): LogFormat {
  const value = stringOption(context, 'log-format');
  return value === undefined ? (isTty(stream) ? 'pretty' : 'json') : (value as LogFormat);
}

/**
 * The logger of a command, writing to `stream` (standard error for one-shot commands, so that
 * standard output carries only the plan; standard output for the daemon).
 */
export function streamLogger(context: CommandContext, stream: Writable): Logger {
  const format = logFormat(context, stream);
  return createLogger({
    level: stringOption(context, 'log-level') ?? 'info',
    format,
    color: format === 'pretty' && colorWanted(context.env, isTty(stream)),
    destination: stream,
  });
}
