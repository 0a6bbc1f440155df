import type { Readable, Writable } from 'node:stream';
import { colorWanted, createLogger, type LogFormat, type Logger } from '../util/logger.js';
import type { Settings } from './settings.js';

export function isTty(stream: Readable | Writable): boolean {
  return (stream as Writable & { isTTY?: boolean }).isTTY === true;
}

/** `--log-format` / RECONCILE_LOG_FORMAT (main.ts has checked it), else pretty on a terminal and JSON otherwise. */
export function logFormat(settings: Pick<Settings, 'logFormat'>, stream: Writable): LogFormat {
  return settings.logFormat ?? (isTty(stream) ? 'pretty' : 'json');
}

/**
 * The logger of a command, writing to `stream` (standard error for one-shot commands, so that
 * standard output carries only the plan; standard output for the daemon).
 */
export function streamLogger(context: { settings: Pick<Settings, 'logFormat' | 'logLevel'>; env: NodeJS.ProcessEnv }, stream: Writable): Logger {
  const format = logFormat(context.settings, stream);
  return createLogger({
    level: context.settings.logLevel,
    format,
    color: format === 'pretty' && colorWanted(context.env, isTty(stream)),
    destination: stream,
  });
}
