// `Secrets`: a project's set of function secrets. One list per project; every addition and
// change goes out in ONE bulk POST, every removal in ONE bulk DELETE, shared by the plan
// entries of the secrets they cover (each entry's `target.batch` names them). Values are
// resolved again when the request is sent: entries carry names and `sensitive` markers,
// never a value or a digest of one.
import { PROJECT_REFERENCE, POLICY, SECRET_REF, type JsonSchema } from '../../manifests/schema-source.js';
import { API_VERSION, type SecretRef, type SecretsDocument } from '../../manifests/types.js';
import { textOf, type KindCheck } from '../../manifests/load-facets.js';
import type { KindContext, KindModule, PlanEntry, ProjectScope } from '../types.js';
import { makeEntry } from '../diff.js';
import { activeDocuments, DocumentGoneError, isObserveOnly, oncePerPass, planPrune, projectDependency, refAtApply, sha256Hex, sourceOf } from './common.js';
import { diffSecrets, isReservedSecret, RESERVED_SECRET_PREFIX, SECRET_NAME_MAX, SECRET_VALUE_MAX } from './secret-diff.js';

/** The schema of the `Secrets` document (`SecretsSpec`): `npm run generate:schemas` writes it to `schemas/secrets.schema.json`. */
function secretsDefs(): Record<string, JsonSchema> {
  return {
    SecretsSpec: {
      title: 'SecretsSpec',
      description: "A project's secrets (the environment of its functions). One Secrets document per project.",
      type: 'object',
      properties: {
        project: PROJECT_REFERENCE,
        values: {
          type: 'object',
          description: 'Secret name -> reference to its value. Values are never literals.',
          propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 256 },
          additionalProperties: SECRET_REF,
        },
        prune: { type: 'boolean', default: false, description: 'true: the set is complete; live secrets not listed are deleted. Default false.' },
        policy: POLICY,
      },
      required: ['project', 'values'],
      additionalProperties: false,
    },
  };
}

/** One Secrets document per project. */
const checkSecrets: KindCheck = (entries, check) => {
  for (const entry of entries) {
    const project = textOf(entry.spec.project);
    check.claim('secrets', project, entry, '/spec/project', (first) => `a second Secrets document for project \`${project}\`: the first is at ${check.where(first, '/metadata/name')} (one document holds a project's whole set)`);
  }
};

export const secretsKind: KindModule<'Secret'> = {
  kind: 'Secret',
  document: { kind: 'Secrets', description: "A project's set of function secrets.", defs: secretsDefs },
  checks: checkSecrets,
  manages(project) {
    return activeDocuments(project, 'Secrets').length > 0;
  },
  async plan(project, ctx) {
    // Validation rejects two Secrets documents for one project; take the first defensively.
    const doc = activeDocuments<SecretsDocument>(project, 'Secrets')[0];
    if (!doc) return [];
    return planSecrets(doc, project, ctx);
  },
  // One bulk request for every entry of its batch, however many of them are applied.
  async apply(entry, project, ctx) {
    const batch = (entry.target?.batch ?? []) as string[];
    if (entry.action === 'delete') {
      await oncePerPass(ctx, `${project.name}\0secrets-delete`, async () => {
        const ref = refAtApply(project, ctx);
        await ctx.api.bulkDeleteSecrets(ref, batch, { priority: 'write', ...(ctx.signal ? { signal: ctx.signal } : {}) });
        ctx.log.info({ project: project.name, count: batch.length }, 'secrets deleted');
      });
      return;
    }
    await oncePerPass(ctx, `${project.name}\0secrets-post`, async () => {
      const ref = refAtApply(project, ctx);
      const doc = activeDocuments<SecretsDocument>(project, 'Secrets')[0];
      if (!doc) throw new DocumentGoneError('Secrets', entry.name, project.name);
      const secrets: Array<{ name: string; value: string }> = [];
      for (const name of batch) secrets.push({ name, value: await ctx.resolveSecret(doc.spec.values[name], doc) });
      await ctx.api.bulkCreateSecrets(ref, secrets, { priority: 'write', ...(ctx.signal ? { signal: ctx.signal } : {}) });
      ctx.log.info({ project: project.name, count: batch.length }, 'secrets written');
    });
  },
  // One Secrets document naming the project's secrets; each value is a reference to fill in.
  async exportDocuments({ api, ref, name, read, secretRef }) {
    const secrets = await read(() => api.listAllSecrets(ref), 'secrets');
    // The service's own secrets (reserved prefix) are not the team's to manage.
    const own = (secrets ?? []).filter((secret) => !secret.name.startsWith(RESERVED_SECRET_PREFIX));
    if (own.length === 0) return { documents: [] };
    const values: Record<string, SecretRef> = {};
    for (const secret of own.sort((a, b) => a.name.localeCompare(b.name))) values[secret.name] = secretRef(secret.name);
    return { documents: [{ apiVersion: API_VERSION, kind: 'Secrets', metadata: { name: `${name}-secrets` }, spec: { project: name, values } }] };
  },
};

async function planSecrets(doc: SecretsDocument, project: ProjectScope, ctx: KindContext): Promise<PlanEntry[]> {
  const observeOnly = isObserveOnly(doc);
  const base = { kind: 'Secret' as const, project: project.name, source: sourceOf(doc), dependsOn: projectDependency(project), ...(observeOnly ? { observeOnly } : {}) };
  const planned: PlanEntry[] = [];
  const digests: Array<{ name: string; digest: string }> = [];
  for (const name of Object.keys(doc.spec.values).sort()) {
    let value: string;
    try {
      value = await ctx.resolveSecret(doc.spec.values[name], doc);
    } catch (error) {
      // The reference's own error names the reference (env:NAME / file:PATH), never a value.
      planned.push(makeEntry({ ...base, name, changes: [], action: 'blocked', reason: (error as Error).message }));
      continue;
    }
    if (name.length > SECRET_NAME_MAX || value.length > SECRET_VALUE_MAX || isReservedSecret(name)) {
      const reason = isReservedSecret(name)
        ? `secret names starting with ${RESERVED_SECRET_PREFIX} are reserved for the service`
        : name.length > SECRET_NAME_MAX
          ? `secret name longer than ${SECRET_NAME_MAX} characters`
          : `secret value longer than ${SECRET_VALUE_MAX} characters`;
      planned.push(makeEntry({ ...base, name, changes: [], action: 'blocked', reason }));
      continue;
    }
    digests.push({ name, digest: sha256Hex(value) });
  }

  const live = project.ref ? await ctx.api.listAllSecrets(project.ref, { ...(ctx.signal ? { signal: ctx.signal } : {}) }) : [];
  const diff = diffSecrets(digests, live);
  const prune = doc.spec.prune === true;

  const upserts = [...diff.create, ...diff.update];
  const post = { batch: upserts };
  for (const name of diff.create) planned.push(makeEntry({ ...base, name, changes: [{ path: 'value', sensitive: true }], action: 'create', target: post }));
  for (const name of diff.update) planned.push(makeEntry({ ...base, name, changes: [{ path: 'value', sensitive: true }], action: 'update', target: post }));
  for (const name of diff.unchanged) planned.push(makeEntry({ ...base, name, changes: [] }));
  // One bulk DELETE removes them all: every entry names the whole batch.
  const removal = { batch: [...diff.extra] };
  planned.push(
    ...planPrune(project, {
      kind: 'Secret',
      undeclared: diff.extra,
      enabled: prune,
      child: (name) => ({ name, reason: 'not listed and the Secrets document says `prune: true`', target: removal }),
      kept: (names) => ctx.log.debug({ project: project.name, count: names.length }, 'live secrets not listed; kept (prune is not true)'),
      document: { source: base.source, observeOnly },
    }),
  );
  return planned;
}
