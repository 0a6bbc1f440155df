import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The service answers secret-bearing auth fields with the lowercase hex HMAC-SHA256 of the
 * value keyed by the project ref. Computing the same digest locally lets a plan see drift on
 * a masked field without ever reading (or showing) the value.
 */
export function authSecretDigest(value: string, projectRef: string): string {
  return createHmac('sha256', projectRef).update(value, 'utf8').digest('hex');
}

/** True when `live` is the digest the service would show for `value` (constant time on equal lengths). */
export function matchesAuthSecretDigest(live: unknown, value: string, projectRef: string): boolean {
  if (typeof live !== 'string') return false;
  return sameSecret(live.toLowerCase(), authSecretDigest(value, projectRef));
}

/** Constant-time string comparison, so a comparison of secrets leaks no prefix length through timing. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}
