import { EmulatorHttpError } from './errors.js';

export interface RequestTarget {
  /** The path exactly as sent: it has no dot segments, so no parser can resolve it elsewhere. */
  pathname: string;
  searchParams: URLSearchParams;
  /** The first segment is literally `_emulator`: the administration API. */
  admin: boolean;
}

const invalid = (raw: string, why: string): EmulatorHttpError =>
  new EmulatorHttpError(400, `Invalid request path \`${raw.length > 200 ? `${raw.slice(0, 200)}...` : raw}\`: ${why}`);

/**
 * Checks the request target before anything routes on it. A URL parser resolves `..`, `%2e%2e`
 * and backslashes, so `/v1/../_emulator/info` would become an admin path: such targets are
 * refused instead of normalised, and what is routed is the path as the client sent it.
 */
export function parseRequestTarget(raw: string): RequestTarget {
  if (!raw.startsWith('/')) throw invalid(raw, 'expected an absolute path such as /v1/projects');
  if (raw.includes('#')) throw invalid(raw, 'a fragment (`#`) is never part of a request');
  const queryAt = raw.indexOf('?');
  const path = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const query = queryAt === -1 ? '' : raw.slice(queryAt + 1);
  if (path.includes('\\')) throw invalid(raw, 'backslashes are not allowed in a path');
  const segments = path.slice(1).split('/');
  segments.forEach((segment, index) => {
    // One trailing slash is harmless (`/v1/projects/`, `/`); any other empty segment is not.
    if (segment === '' && index !== segments.length - 1) {
      throw invalid(raw, 'empty path segments (`//`) are not allowed');
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw invalid(raw, `malformed percent-encoding in \`${segment}\``);
    }
    if (decoded === '.' || decoded === '..') throw invalid(raw, 'dot segments (`.`, `..`, also percent-encoded) are not allowed');
    if (/[/\\]/.test(decoded)) throw invalid(raw, 'encoded slashes and backslashes (`%2F`, `%5C`) are not allowed');
    if (/[\u0000-\u001f\u007f]/.test(decoded)) throw invalid(raw, 'control characters are not allowed');
  });
  return { pathname: path, searchParams: new URLSearchParams(query), admin: segments[0] === '_emulator' };
}
