import type { UpdateStorageConfigBody } from '../../../api/types.js';
import type { StorageSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { FieldChange } from '../../types.js';
import { describeNested, sectionFromBody } from '../../../manifests/schema-source.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, unsetEquals, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectStorage', key: 'storage' } as const;

/**
 * Storage: GET, PATCH. Features are nested objects; the diff runs on their leaves
 * (`storage.features.s3Protocol.enabled`), and the PATCH sends each changed feature as a
 * whole object — the desired leaves over the live ones — because the service requires
 * every field of a feature it is given.
 */
export const storageConfig: ConfigSection<'ProjectStorage'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'restapi',
    property: { description: 'The storage configuration.', $ref: '#/$defs/StorageSpec' },
    defs: (openapi) => ({
      StorageSpec: sectionFromBody(openapi, 'UpdateStorageConfigBody', 'StorageSpec', 'The storage configuration (PATCH /v1/projects/{ref}/config/storage).', describeNested(STORAGE_FIELDS, 'storage')),
    }),
  },
  services: ['storage'],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<StorageSpec>(scope, SECTION.key) as Record<string, unknown>;
    const live = scope.ref === undefined ? undefined : ((await ctx.api.getStorageConfig(scope.ref, readOptions(scope, ctx))) as unknown as Record<string, unknown>);
    const changes = diffFields(leaves(desired), leaves(live ?? {}), { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    const kept = keptGroups(desired, live ?? {}, changes);
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, kept ? { live: kept } : undefined)];
  },
  async apply(entry, scope, ctx) {
    const desired = sectionSpec<StorageSpec>(scope, SECTION.key) as Record<string, unknown>;
    const live = (entry.target?.live ?? {}) as Record<string, unknown>;
    await ctx.api.updateStorageConfig(refAtApply(scope, ctx), patchBody(desired, live, entry.changes), writeOptions(scope, ctx));
  },
  async export({ api, ref, read, prune }) {
    return prune(await read(() => api.getStorageConfig(ref)), 'StorageSpec');
  },
};

/** Dotted leaf paths of a nested object (arrays are leaves). */
export function leaves(value: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (isObject(item)) Object.assign(out, leaves(item, path));
    else out[path] = item;
  }
  return out;
}

/**
 * The live groups the PATCH body merges the desired leaves over, as observed at plan time
 * (`{ features: { s3Protocol: {...} } }`); undefined when no changed group has any.
 */
function keptGroups(desired: Record<string, unknown>, live: Record<string, unknown>, changes: readonly FieldChange[]): Record<string, unknown> | undefined {
  const kept: Record<string, Record<string, unknown>> = {};
  for (const { path } of changes) {
    const [top, group] = path.slice(SECTION.key.length + 1).split('.') as [string, string | undefined];
    if (group === undefined || !isObject(desired[top]) || !isObject(desired[top][group]) || !isObject(live[top])) continue;
    const haveGroup = live[top][group];
    if (isObject(haveGroup)) (kept[top] ??= {})[group] = haveGroup;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The PATCH body: changed top-level scalars, and each changed second-level object whole. */
function patchBody(desired: Record<string, unknown>, live: Record<string, unknown>, changes: readonly FieldChange[]): UpdateStorageConfigBody {
  const body: Record<string, unknown> = {};
  for (const { path } of changes) {
    const [top, group] = path.slice(SECTION.key.length + 1).split('.') as [string, string | undefined];
    const want = desired[top];
    if (!isObject(want)) {
      body[top] = want;
      continue;
    }
    const target = (body[top] ??= {}) as Record<string, unknown>;
    if (group === undefined) continue;
    const wantGroup = want[group];
    const haveGroup = isObject(live[top]) ? (live[top] as Record<string, unknown>)[group] : undefined;
    target[group] = isObject(wantGroup) ? { ...(isObject(haveGroup) ? haveGroup : {}), ...wantGroup } : wantGroup;
  }
  return body as UpdateStorageConfigBody;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const STORAGE_FIELDS: Record<string, string> = {
  fileSizeLimit: 'Largest upload, in bytes.',
  features: 'Storage features.',
  'features.imageTransformation': 'On-the-fly image transformation.',
  'features.s3Protocol': 'The S3-compatible protocol endpoint.',
  'features.icebergCatalog': 'The Iceberg catalog and its limits.',
  'features.vectorBuckets': 'Vector buckets and their limits.',
  external: 'Upstream selection.',
  'external.upstreamTarget': 'Which upstream serves the project: `main` or `canary`.',
};
