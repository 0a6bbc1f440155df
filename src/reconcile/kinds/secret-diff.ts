// The diff of a project's secrets, on digests only: the service lists each secret's value
// as the lowercase hex SHA-256 of the value, so the plaintext never has to be read back.
import type { SecretResponse } from '../../api/types.js';

/** The service's limits on one secret. */
export const SECRET_NAME_MAX = 256;
export const SECRET_VALUE_MAX = 24_576;
/**
 * Secrets the service provides itself (its URL, keys, database URL): listed with the others,
 * but neither settable nor deletable, so they are never pruned and cannot be declared.
 */
export const RESERVED_SECRET_PREFIX = 'PLATFORM_';

export function isReservedSecret(name: string): boolean {
  return name.startsWith(RESERVED_SECRET_PREFIX);
}

interface DesiredSecretDigest {
  name: string;
  /** Lowercase hex SHA-256 of the resolved value. */
  digest: string;
}

interface SecretDiff {
  create: string[];
  update: string[];
  unchanged: string[];
  /** Live secrets the document does not list (deleted only when the set is declared complete). */
  extra: string[];
}

/** Names compared exactly; digests compared case-insensitively (the spec says lowercase, a reader should not depend on it). */
export function diffSecrets(desired: readonly DesiredSecretDigest[], live: readonly SecretResponse[]): SecretDiff {
  const liveByName = new Map(live.map((s) => [s.name, s.value.toLowerCase()]));
  const wanted = new Set(desired.map((d) => d.name));
  const diff: SecretDiff = { create: [], update: [], unchanged: [], extra: [] };
  for (const { name, digest } of desired) {
    const have = liveByName.get(name);
    if (have === undefined) diff.create.push(name);
    else if (have !== digest.toLowerCase()) diff.update.push(name);
    else diff.unchanged.push(name);
  }
  for (const s of live) if (!wanted.has(s.name) && !isReservedSecret(s.name)) diff.extra.push(s.name);
  for (const list of Object.values(diff)) list.sort();
  return diff;
}
