import { stat } from 'node:fs/promises';
import { readBoundedFile } from '../manifests/bounded-read.js';
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { TokenSource } from './token-source.js';
import { AuthConfigError } from './auth-errors.js';

/** Largest token file read: a token is a few hundred bytes at most. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/**
 * A personal access token kept in a file (a mounted secret). Before each request the file's
 * identity (inode, size, mtime) is compared with what was read last, a cheap `stat`; the
 * content is read again only when it changed, so a rotated token is used from the next
 * request on with no restart. `recheckMs` spaces the checks out on the clock (0: every request).
 */
export function tokenFile(path: string, options: { clock?: Clock; recheckMs?: number } = {}): TokenSource {
  if (typeof path !== 'string' || path === '') throw new TypeError(`Expected \`path\` to be a non-empty string, got \`${String(path)}\``);
  const clock = options.clock ?? systemClock;
  const recheckMs = options.recheckMs ?? 0;
  if (!Number.isFinite(recheckMs) || recheckMs < 0) {
    throw new TypeError(`Expected \`recheckMs\` to be a finite number >= 0, got \`${recheckMs}\` (${typeof recheckMs})`);
  }
  let identity = '';
  let token = '';
  let checkedAt = Number.NEGATIVE_INFINITY;

  async function refresh(force: boolean): Promise<string> {
    if (!force && token && clock.now() - checkedAt < recheckMs) return token;
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new AuthConfigError(`Cannot read the token file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
    checkedAt = clock.now();
    const next = `${info.ino}:${info.size}:${info.mtimeMs}`;
    if (!force && next === identity && token) return token;
    // Never blocks and never reads without bound: a FIFO or /dev/zero is an error at once.
    const read = readBoundedFile(path, MAX_TOKEN_FILE_BYTES);
    if ('problem' in read) throw new AuthConfigError(`Cannot read the token file ${path}: it ${read.detail}`);
    const text = read.bytes.toString('utf8').trim();
    if (text === '') {
      // Caught between a truncate and a write by a writer that does not replace files
      // atomically: keep the token we have and look again next time.
      if (token) return token;
      throw new AuthConfigError(`The token file ${path} is empty`);
    }
    if (/\s/.test(text)) throw new AuthConfigError(`The token file ${path} must hold one token and nothing else`);
    identity = next;
    token = text;
    return token;
  }

  return {
    token: () => refresh(false),
    async invalidate() {
      // A 401: the file may have been rewritten within one mtime tick; read it regardless.
      identity = '';
      await refresh(true).catch(() => undefined);
    },
  };
}
