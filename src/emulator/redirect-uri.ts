// OAuth redirect URIs are compared as parsed URLs (WHATWG), never as strings or regular
// expressions: `http://127.0.0.1:9@evil.example/` starts like a loopback address but its host is
// evil.example, and only a parser says so the way a browser will.

/** A registered redirect URI; `*` may stand for the port alone (`http://127.0.0.1:*`). */
interface RedirectPattern {
  protocol: string;
  hostname: string;
  /** Any port: the request may use any path below `pathname` and any query. */
  anyPort: boolean;
  /** For an exact pattern: the whole normalised URL. */
  href: string;
  pathname: string;
}

const ANY_PORT = /^(https?:\/\/[^/?#@\\]+):\*(?=$|\/)/i;

function authorityOf(uri: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(uri)?.[1];
}

/** The port written in an authority (after a bracketed IPv6 host or the last colon), if any. */
function writtenPort(authority: string): string | undefined {
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end !== -1 && host[end + 1] === ':' ? host.slice(end + 2) : undefined;
  }
  const colon = host.lastIndexOf(':');
  return colon === -1 ? undefined : host.slice(colon + 1);
}

/** Why a port is not one a browser can be sent to, or undefined when it is fine. */
function portProblem(port: string): string | undefined {
  if (port === '') return undefined;
  if (!/^\d+$/.test(port)) return `the port \`${port}\` is not a number`;
  const value = Number(port);
  if (value < 1 || value > 65535) return `the port \`${port}\` is outside 1..65535`;
  return undefined;
}

/**
 * Checks one URI (a redirect_uri of a request, or a pattern with its `*` port taken out) and
 * answers the parsed URL, or throws a TypeError saying what is wrong with it.
 */
function parseStrict(uri: string): URL {
  // The URL parser drops tabs and newlines and reads `\` as `/`: what is compared must be what was sent.
  if (/[^\x21-\x7e]/.test(uri)) throw new TypeError('it must be printable ASCII without spaces or control characters');
  if (uri.includes('\\')) throw new TypeError('it must not contain backslashes');
  const authority = authorityOf(uri);
  if (authority === undefined) throw new TypeError('it must be an absolute http or https URL');
  if (authority.includes('@')) throw new TypeError('it must not contain user information (`user@` or `user:password@` before the host)');
  const port = writtenPort(authority);
  const problem = port === undefined ? undefined : portProblem(port);
  if (problem) throw new TypeError(problem);
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new TypeError('it is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`the scheme must be http or https, not \`${url.protocol.slice(0, -1)}\``);
  if (url.hostname === '') throw new TypeError('it has no host');
  if (url.hash !== '' || uri.includes('#')) throw new TypeError('it must not contain a fragment (`#`)');
  return url;
}

/** Parses a registered redirect URI; throws a TypeError naming the problem (seed validation). */
export function parseRedirectPattern(pattern: string): RedirectPattern {
  const wildcard = ANY_PORT.exec(pattern);
  const concrete = wildcard ? `${wildcard[1]}${pattern.slice(wildcard[0].length)}` : pattern;
  if (concrete.includes('*')) throw new TypeError('`*` may only stand for the whole port, as in `http://127.0.0.1:*`');
  const url = parseStrict(concrete);
  if (wildcard && url.port !== '') throw new TypeError('a pattern with `:*` has no other port');
  return { protocol: url.protocol, hostname: url.hostname, anyPort: wildcard !== null, href: url.href, pathname: url.pathname };
}

/** Parses the redirect_uri of a request; throws a TypeError naming the problem. */
export const parseRedirectUri = parseStrict;

function underPath(requested: string, registered: string): boolean {
  if (registered === '/' || requested === registered) return true;
  return requested.startsWith(registered.endsWith('/') ? registered : `${registered}/`);
}

/**
 * Exact patterns match the same normalised URL only. A `:*` pattern (loopback clients pick a
 * free port) matches the same scheme and host on any port, at or below its path, with any query.
 */
export function redirectMatches(pattern: RedirectPattern, url: URL): boolean {
  if (!pattern.anyPort) return url.href === pattern.href;
  return url.protocol === pattern.protocol && url.hostname === pattern.hostname && underPath(url.pathname, pattern.pathname);
}
