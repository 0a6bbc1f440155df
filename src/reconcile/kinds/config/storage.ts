import type { UpdateStorageConfigBody } from '../../../api/types.js';
import type { StorageSpec } from '../../../manifests/types.js';
import { diffFields } from '../../diff.js';
import type { FieldChange, KindModule } from '../../types.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, unsetEquals, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectStorage', key: 'storage' };

/**
 * Storage: GET, PATCH. Features are nested objects; the diff runs on their leaves
 * (`storage.features.s3Protocol.enabled`), and the PATCH sends each changed feature as a
 * whole object — the desired leaves over the live ones — because the service requires
 * every field of a feature it is given.
 */
export const storageConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<StorageSpec>(scope, SECTION.key) as Record<string, unknown>;
    const live = scope.ref === undefined ? undefined : ((await ctx.api.getStorageConfig(scope.ref, readOptions(scope, ctx))) as unknown as Record<string, unknown>);
    const changes = diffFields(leaves(desired), leaves(live ?? {}), { prefix: SECTION.key, equals: unsetEquals });
    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    const body = patchBody(desired, live ?? {}, changes);
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, async (apply) => {
        await apply.api.updateStorageConfig(refForApply(scope, apply), body, writeOptions(scope, apply));
      }),
    ];
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
