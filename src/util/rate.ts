/** A request budget: at most `limit` requests in any window of `windowMs`. */
export interface RateSpec {
  limit: number;
  windowMs: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a duration such as `60s`, `1m`, `250ms` or `1.5s` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(text);
  if (!match) {
    throw new TypeError(`Expected a duration such as \`60s\`, \`1m\` or \`500ms\`, got \`${text}\``);
  }
  const value = Number(match[1]) * UNITS[match[2]!]!;
  if (!(value > 0)) throw new TypeError(`Expected a duration > 0, got \`${text}\``);
  return value;
}

/** Parses `N/DURATION` (for example `50/60s`) into a rate spec. */
export function parseRate(text: string): RateSpec {
  const match = /^\s*(\d+)\s*\/\s*(.+)$/.exec(text);
  if (!match) {
    throw new TypeError(`Expected a rate as N/DURATION such as \`50/60s\`, got \`${text}\``);
  }
  const limit = Number(match[1]);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(`Expected the request count in \`${text}\` to be a whole number >= 1`);
  }
  return { limit, windowMs: parseDuration(match[2]!) };
}

