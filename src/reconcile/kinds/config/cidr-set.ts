import { isIPv4, isIPv6 } from 'node:net';

/**
 * Network restrictions are sets: the service may answer them in another order, with
 * duplicates folded, or with an implicit host prefix spelled out. Both sides are
 * canonicalised before they are compared, so none of that reads as drift.
 */
export function canonicalCidr(text: string): string {
  const trimmed = text.trim().toLowerCase();
  const slash = trimmed.indexOf('/');
  const address = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const prefix = slash === -1 ? undefined : trimmed.slice(slash + 1);
  if (isIPv4(address)) return `${address}/${prefix === undefined ? '32' : String(Number(prefix))}`;
  if (isIPv6(address)) return `${compressIpv6(address)}/${prefix === undefined ? '128' : String(Number(prefix))}`;
  // Not an address we can read: compare it as written rather than guess.
  return trimmed;
}

/** The distinct canonical CIDRs of a list, sorted (for stable display and comparison). */
export function cidrSet(list: readonly string[] | undefined | null): string[] {
  return [...new Set((list ?? []).map(canonicalCidr))].sort();
}

/** Order- and spelling-insensitive equality of two CIDR lists. */
export function sameCidrSet(a: readonly string[] | undefined | null, b: readonly string[] | undefined | null): boolean {
  const left = cidrSet(a);
  const right = cidrSet(b);
  return left.length === right.length && left.every((value, index) => value === right[index]);
}

function compressIpv6(address: string): string {
  const groups = expandIpv6(address).map((group) => group.replace(/^0+(?=.)/, ''));
  // Longest run of two or more zero groups becomes `::` (RFC 5952).
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart === -1) return groups.join(':');
  const head = groups.slice(0, bestStart).join(':');
  const tail = groups.slice(bestStart + bestLength).join(':');
  return `${head}::${tail}`;
}

function expandIpv6(address: string): string[] {
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  return [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
}
