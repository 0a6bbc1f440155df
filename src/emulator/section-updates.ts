// State changes shared by the API handlers and the seed, so both build identical records.
import { isIP } from 'node:net';
import { badRequest } from './errors.js';
import { sha256Hex } from './masking.js';
import { newUuid, randomHex } from './random.js';
import { PLATFORM_DOMAIN } from './defaults.js';
import type { FunctionRecord, ProjectRecord } from './state.js';

export function applyPoolerUpdate(project: ProjectRecord, update: { default_pool_size?: number | null; pool_mode?: string }): void {
  const primary = project.pooler.find((p) => p.databaseType === 'PRIMARY')!;
  if (update.default_pool_size !== undefined) primary.defaultPoolSize = update.default_pool_size;
  if (update.pool_mode !== undefined) primary.poolMode = update.pool_mode as 'transaction' | 'session';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    if (isPlainObject(value) && isPlainObject(target[key])) deepMerge(target[key] as Record<string, unknown>, value);
    else target[key] = structuredClone(value);
  }
}

export function applyStorageUpdate(project: ProjectRecord, update: Record<string, unknown>): void {
  deepMerge(project.storage, update);
}

function checkCidr(cidr: string, family: 4 | 6, field: string): void {
  const [address, prefix, extra] = cidr.split('/');
  const max = family === 4 ? 32 : 128;
  const bits = Number(prefix);
  if (extra !== undefined || prefix === undefined || !/^\d+$/.test(prefix) || bits > max || isIP(address ?? '') !== family) {
    throw badRequest(`\`${field}\` holds an invalid IPv${family} CIDR: ${cidr}`);
  }
}

/** Validates then stores a network restrictions request (whole replacement). */
export function applyNetworkRestrictions(project: ProjectRecord, request: { dbAllowedCidrs?: string[]; dbAllowedCidrsV6?: string[] }, stamp: string): void {
  const v4 = request.dbAllowedCidrs ?? [];
  const v6 = request.dbAllowedCidrsV6 ?? [];
  v4.forEach((cidr) => checkCidr(cidr, 4, 'dbAllowedCidrs'));
  v6.forEach((cidr) => checkCidr(cidr, 6, 'dbAllowedCidrsV6'));
  const current = project.networkRestrictions;
  current.oldConfig = current.config;
  current.config = { dbAllowedCidrs: [...v4], dbAllowedCidrsV6: [...v6] };
  current.status = 'stored';
  current.updatedAt = stamp;
}

/** A custom hostname already active (seeds). */
export function activateCustomHostnameNow(project: ProjectRecord, hostname: string): void {
  project.customHostname = {
    status: '5_services_reconfigured',
    hostname,
    id: newUuid(),
    txtName: `_acme-challenge.${hostname}`,
    txtValue: randomHex(16),
    ownershipValue: randomHex(16),
    verifiableAt: 0,
    generation: project.customHostname.generation + 1,
  };
}

/** The digest of a function's opaque bundle: it changes exactly when sources or settings change. */
export function bundleDigest(fn: Pick<FunctionRecord, 'files' | 'entrypointPath' | 'importMapPath' | 'staticPatterns'>): string {
  return sha256Hex(bundleBytes(fn));
}

/** The opaque bundle the body endpoint returns without `Accept: multipart/form-data`. */
export function bundleBytes(fn: Pick<FunctionRecord, 'files' | 'entrypointPath' | 'importMapPath' | 'staticPatterns'>): Buffer {
  const header = Buffer.from(
    JSON.stringify({ entrypoint_path: fn.entrypointPath, import_map_path: fn.importMapPath, static_patterns: fn.staticPatterns }),
    'utf8',
  );
  const chunks: Buffer[] = [Buffer.from('EZBR2\n', 'utf8'), u32(header.length), header];
  for (const path of [...fn.files.keys()].sort()) {
    const name = Buffer.from(path, 'utf8');
    const content = fn.files.get(path)!;
    chunks.push(u32(name.length), name, u32(content.length), content);
  }
  return Buffer.concat(chunks);
}

function u32(n: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(n);
  return buffer;
}

export function vanityDomain(subdomain: string): string {
  return `${subdomain}.${PLATFORM_DOMAIN}`;
}
