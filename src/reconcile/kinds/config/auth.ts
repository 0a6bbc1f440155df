import type { AuthSpec } from '../../../manifests/types.js';
import { changedSubset, diffFields } from '../../diff.js';
import type { FieldChange, KindModule } from '../../types.js';
import { isSecretAuthField } from '../../../manifests/secret-fields.js';
import { matchesAuthSecretDigest } from './hmac-digest.js';
import { plannedChange, readOptions, refForApply, sectionManaged, sectionSpec, unsetEquals, writeOptions, type Section } from './section-plan.js';

const SECTION: Section = { kind: 'ProjectAuth', key: 'auth' };

/**
 * Auth: one GET, one PATCH of the changed fields only. Secret-bearing fields come back as
 * HMAC-SHA256 digests keyed by the project ref, so they are compared digest to digest:
 * an unchanged secret is no diff, a secret changed out of band is seen, and neither side's
 * value ever reaches the entry (only `sensitive: true`).
 */
export const authConfig: KindModule = {
  kind: SECTION.kind,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const spec = sectionSpec<AuthSpec>(scope, SECTION.key);
    const plain: Record<string, unknown> = {};
    const secrets = new Map<string, string>();
    for (const [field, value] of Object.entries(spec)) {
      if (value === undefined) continue;
      if (isSecretAuthField(field)) secrets.set(field, await ctx.resolveSecret(value, scope.document));
      else plain[field] = value;
    }

    const live = scope.ref === undefined ? undefined : ((await ctx.api.getAuthServiceConfig(scope.ref, readOptions(scope, ctx))) as unknown as Record<string, unknown>);
    const changes: FieldChange[] = diffFields(plain, live ?? {}, { prefix: SECTION.key, equals: unsetEquals });
    const changedSecrets: string[] = [];
    for (const [field, value] of secrets) {
      if (live !== undefined && scope.ref !== undefined && matchesAuthSecretDigest(live[field], value, scope.ref)) continue;
      changedSecrets.push(field);
      changes.push({ path: `${SECTION.key}.${field}`, sensitive: true });
    }
    changes.sort((a, b) => a.path.localeCompare(b.path));

    if (changes.length === 0) return [plannedChange(scope, SECTION, { action: 'noop' })];
    const body: Record<string, unknown> = changedSubset(plain, changes, SECTION.key);
    for (const field of changedSecrets) body[field] = secrets.get(field);
    return [
      plannedChange(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes }, async (apply) => {
        await apply.api.updateAuthServiceConfig(refForApply(scope, apply), body, writeOptions(scope, apply));
      }),
    ];
  },
};
