// `Secrets`: a project's set of function secrets. One list per project; every addition and
// change goes out in ONE bulk POST, every removal in ONE bulk DELETE, shared by the plan
// entries of the secrets they cover. Values exist only inside the apply closures: entries
// carry names and `sensitive` markers, never a value or a digest of one.
import type { SecretsDocument } from '../../manifests/types.js';
import type { KindContext, KindModule, PlannedChange, ProjectScope } from '../types.js';
import { makeEntry } from '../diff.js';
import { activeDocuments, isObserveOnly, once, projectDependency, refAtApply, sha256Hex, sourceOf } from './common.js';
import { diffSecrets, isReservedSecret, RESERVED_SECRET_PREFIX, SECRET_NAME_MAX, SECRET_VALUE_MAX } from './secret-diff.js';

export const secretsKind: KindModule = {
  kind: 'Secret',
  manages(project) {
    return activeDocuments(project, 'Secrets').length > 0;
  },
  async plan(project, ctx) {
    // Validation rejects two Secrets documents for one project; take the first defensively.
    const doc = activeDocuments<SecretsDocument>(project, 'Secrets')[0];
    if (!doc) return [];
    return planSecrets(doc, project, ctx);
  },
};

async function planSecrets(doc: SecretsDocument, project: ProjectScope, ctx: KindContext): Promise<PlannedChange[]> {
  const observeOnly = isObserveOnly(doc);
  const base = { kind: 'Secret' as const, project: project.name, source: sourceOf(doc), dependsOn: projectDependency(project), ...(observeOnly ? { observeOnly } : {}) };
  const planned: PlannedChange[] = [];
  const values = new Map<string, string>();
  const digests: Array<{ name: string; digest: string }> = [];
  for (const name of Object.keys(doc.spec.values).sort()) {
    let value: string;
    try {
      value = await ctx.resolveSecret(doc.spec.values[name], doc);
    } catch (error) {
      // The reference's own error names the reference (env:NAME / file:PATH), never a value.
      planned.push({ entry: makeEntry({ ...base, name, changes: [], action: 'blocked', reason: (error as Error).message }) });
      continue;
    }
    if (name.length > SECRET_NAME_MAX || value.length > SECRET_VALUE_MAX || isReservedSecret(name)) {
      const reason = isReservedSecret(name)
        ? `secret names starting with ${RESERVED_SECRET_PREFIX} are reserved for the service`
        : name.length > SECRET_NAME_MAX
          ? `secret name longer than ${SECRET_NAME_MAX} characters`
          : `secret value longer than ${SECRET_VALUE_MAX} characters`;
      planned.push({ entry: makeEntry({ ...base, name, changes: [], action: 'blocked', reason }) });
      continue;
    }
    values.set(name, value);
    digests.push({ name, digest: sha256Hex(value) });
  }

  const live = project.ref ? await ctx.api.listAllSecrets(project.ref, { ...(ctx.signal ? { signal: ctx.signal } : {}) }) : [];
  const diff = diffSecrets(digests, live);
  const prune = doc.spec.prune === true;

  const upserts = [...diff.create, ...diff.update];
  const removals = prune ? diff.extra : [];
  const postAll = once(async (applyCtx: KindContext) => {
    const ref = refAtApply(project, applyCtx);
    await applyCtx.api.bulkCreateSecrets(ref, upserts.map((name) => ({ name, value: values.get(name)! })), { priority: 'write', ...(applyCtx.signal ? { signal: applyCtx.signal } : {}) });
    applyCtx.log.info({ project: project.name, count: upserts.length }, 'secrets written');
  });
  const deleteAll = once(async (applyCtx: KindContext) => {
    const ref = refAtApply(project, applyCtx);
    await applyCtx.api.bulkDeleteSecrets(ref, removals, { priority: 'write', ...(applyCtx.signal ? { signal: applyCtx.signal } : {}) });
    applyCtx.log.info({ project: project.name, count: removals.length }, 'secrets deleted');
  });

  for (const name of diff.create) {
    const entry = makeEntry({ ...base, name, changes: [{ path: 'value', sensitive: true }], action: 'create' });
    planned.push(observeOnly ? { entry } : { entry, apply: postAll });
  }
  for (const name of diff.update) {
    const entry = makeEntry({ ...base, name, changes: [{ path: 'value', sensitive: true }], action: 'update' });
    planned.push(observeOnly ? { entry } : { entry, apply: postAll });
  }
  for (const name of diff.unchanged) planned.push({ entry: makeEntry({ ...base, name, changes: [] }) });
  for (const name of removals) {
    const entry = makeEntry({ ...base, name, changes: [], action: 'delete', reason: 'not listed and the Secrets document says `prune: true`' });
    planned.push(observeOnly ? { entry } : { entry, apply: deleteAll });
  }
  if (!prune && diff.extra.length) {
    ctx.log.debug({ project: project.name, count: diff.extra.length }, 'live secrets not listed; kept (prune is not true)');
  }
  return planned;
}
