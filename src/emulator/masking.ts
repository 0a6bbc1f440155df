import { createHash, createHmac } from 'node:crypto';

/** Lowercase hex SHA-256: how the service answers function secret values. */
export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Lowercase hex HMAC-SHA256 keyed by the project ref: how secret-bearing auth fields come back. */
export function hmacForProject(ref: string, value: string): string {
  return createHmac('sha256', ref).update(value).digest('hex');
}

// One list for the whole project: the manifests require references for the same fields.
export { isSecretAuthField } from '../manifests/secret-fields.js';
