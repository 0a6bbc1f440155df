import { randomBytes, randomUUID } from 'node:crypto';

/** A small deterministic PRNG (mulberry32): faults given a `seed` repeat exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** 20 lowercase letters, the shape of the service's project refs and organization slugs. */
export function newRef(): string {
  const bytes = randomBytes(20);
  let out = '';
  for (const byte of bytes) out += LETTERS[byte % 26];
  return out;
}

export function newUuid(): string {
  return randomUUID();
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** Personal access tokens look like `pat_` and 40 hex digits. */
export function newPersonalAccessToken(): string {
  return `pat_${randomHex(20)}`;
}
