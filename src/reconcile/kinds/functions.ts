// `Function`: sources from the checkout, deployed through the multipart deploy endpoint.
// A no-change pass costs one functions list per project: the state store keeps, per
// function, the digest of what was deployed with the `version` and `updated_at` the service
// answered; while the list still shows that version, nothing else is read. Without a record
// (or after an out-of-band deploy changed the version) the body is fetched once and compared.
import { relative, resolve, sep } from 'node:path';
import { PROJECT_REFERENCE, POLICY, type JsonSchema } from '../../manifests/schema-source.js';
import type { FunctionResponse } from '../../api/types.js';
import type { FunctionDocument } from '../../manifests/types.js';
import type { FieldChange, KindContext, KindModule, PlanEntry, ProjectScope } from '../types.js';
import { makeEntry } from '../diff.js';
import { activeDocuments, allDocuments, checkoutRootOf, DocumentGoneError, isObserveOnly, planPrune, projectDependency, refAtApply, sha256Hex, sourceOf } from './common.js';
import { collectFunctionSources, FunctionSourceError, normalizeRelative, sourceDirectories, type FunctionSources, type SourceDirectories } from './function-sources.js';
import { buildDeployForm, normalizeBodyPath, parseFunctionBody, type DeployMetadata } from './function-deploy.js';
import { sourcesDigest } from './function-sources.js';
import { exportFunction, type ExportedFile } from '../export-functions.js';
import { referencePolicyOf } from '../../manifests/reference-policy.js';
import { checkFunctions } from './function-checks.js';

/** What the state store keeps per deployed function (key: `functionStateKey`). */
interface DeployedFunctionRecord {
  /** Digest of the sources and the deploy metadata that were deployed. */
  digest: string;
  sourcesDigest: string;
  version: number;
  updated_at?: number;
  verify_jwt?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  /** Whether the service reported an import map in use. */
  import_map?: boolean;
  name?: string;
}

function functionStateKey(ref: string, slug: string): string {
  return `functions/${ref}/${slug}`;
}

interface DesiredFunction {
  doc: FunctionDocument;
  slug: string;
  metadata: DeployMetadata;
}

function desiredFunction(doc: FunctionDocument): DesiredFunction {
  const slug = doc.spec.slug ?? doc.metadata.name;
  const metadata: DeployMetadata = {
    entrypoint_path: normalizeRelative(slug, 'entrypoint', doc.spec.entrypoint),
    name: doc.spec.name ?? slug,
  };
  if (doc.spec.import_map !== undefined) metadata.import_map_path = normalizeRelative(slug, 'import_map', doc.spec.import_map);
  if (doc.spec.static_patterns?.length) metadata.static_patterns = [...doc.spec.static_patterns];
  if (doc.spec.verify_jwt !== undefined) metadata.verify_jwt = doc.spec.verify_jwt;
  return { doc, slug, metadata };
}

/** Digest of what a deploy sends: the sources and every metadata field. */
function deployDigest(sources: FunctionSources, metadata: DeployMetadata): string {
  const keys = Object.keys(metadata).sort() as Array<keyof DeployMetadata>;
  return sha256Hex(`${sources.digest}\n${JSON.stringify(keys.map((k) => [k, metadata[k]]))}`);
}

/** The service may report paths as URLs or absolute paths: compare by path suffix. */
function samePath(observed: string | undefined, desired: string | undefined): boolean {
  if (desired === undefined) return true;
  if (observed === undefined) return false;
  const o = normalizeBodyPath(observed);
  return o === desired || o.endsWith(`/${desired}`);
}

function short(digest: string | undefined): string {
  return digest ? `sha256:${digest.slice(0, 12)}` : 'unknown';
}

/** The function's sources; `directories`: the plan's memo of source directories (a deploy reads its directory again). */
async function sourcesFor(desired: DesiredFunction, directories?: SourceDirectories): Promise<FunctionSources> {
  const { doc, slug, metadata } = desired;
  return collectFunctionSources({
    functionName: slug,
    baseDir: doc.source.dir,
    source: doc.spec.source,
    entrypoint: metadata.entrypoint_path,
    ...(metadata.import_map_path !== undefined ? { importMap: metadata.import_map_path } : {}),
    ...(metadata.static_patterns ? { staticPatterns: metadata.static_patterns } : {}),
    checkoutRoot: checkoutRootOf(doc),
    sealed: referencePolicyOf(doc),
    ...(directories ? { directories } : {}),
  });
}

/** Metadata fields the list shows, compared with the manifest (entrypoint and import map by the record when there is one). */
function metadataChanges(live: FunctionResponse, desired: DeployMetadata, record: DeployedFunctionRecord | undefined): FieldChange[] {
  const changes: FieldChange[] = [];
  if (desired.name !== undefined && live.name !== desired.name) changes.push({ path: 'name', before: live.name, after: desired.name });
  if (desired.verify_jwt !== undefined && live.verify_jwt !== desired.verify_jwt) {
    changes.push({ path: 'verify_jwt', ...(live.verify_jwt !== undefined ? { before: live.verify_jwt } : {}), after: desired.verify_jwt });
  }
  const entrypointKnown = record !== undefined && record.entrypoint_path === live.entrypoint_path;
  if (!entrypointKnown && !samePath(live.entrypoint_path, desired.entrypoint_path)) {
    changes.push({ path: 'entrypoint_path', ...(live.entrypoint_path !== undefined ? { before: live.entrypoint_path } : {}), after: desired.entrypoint_path });
  }
  const importMapKnown = record !== undefined && record.import_map_path === live.import_map_path && record.import_map === live.import_map;
  if (!importMapKnown && desired.import_map_path !== undefined && !samePath(live.import_map_path, desired.import_map_path)) {
    changes.push({ path: 'import_map_path', ...(live.import_map_path !== undefined ? { before: live.import_map_path } : {}), after: desired.import_map_path });
  } else if (!importMapKnown && record !== undefined && desired.import_map_path === undefined && live.import_map === true) {
    // An import map set without a deploy (bulk update keeps the version): the manifest has none.
    changes.push({ path: 'import_map', before: true, after: false });
  }
  return changes;
}

function recordMatchesLive(record: DeployedFunctionRecord | undefined, live: FunctionResponse): record is DeployedFunctionRecord {
  return (
    record !== undefined &&
    record !== null &&
    record.version === live.version &&
    (record.updated_at === undefined || live.updated_at === undefined || record.updated_at === live.updated_at)
  );
}

function recordFrom(live: Partial<FunctionResponse> & { version: number }, digest: string, sources: string): DeployedFunctionRecord {
  const record: DeployedFunctionRecord = { digest, sourcesDigest: sources, version: live.version };
  if (live.updated_at !== undefined) record.updated_at = live.updated_at;
  if (live.verify_jwt !== undefined) record.verify_jwt = live.verify_jwt;
  if (live.entrypoint_path !== undefined) record.entrypoint_path = live.entrypoint_path;
  if (live.import_map_path !== undefined) record.import_map_path = live.import_map_path;
  if (live.import_map !== undefined) record.import_map = live.import_map;
  if (live.name !== undefined) record.name = live.name;
  return record;
}

async function planOne(
  desired: DesiredFunction,
  live: FunctionResponse | undefined,
  project: ProjectScope,
  ctx: KindContext,
): Promise<PlanEntry> {
  const { doc, slug, metadata } = desired;
  const base = { kind: 'Function' as const, name: slug, project: project.name, source: sourceOf(doc), dependsOn: projectDependency(project) };
  const observeOnly = isObserveOnly(doc);
  let sources: FunctionSources;
  try {
    // Functions of one pass that share a source directory resolve and list it once.
    sources = await sourcesFor(desired, ctx.pass.shared('function-source-directories', sourceDirectories));
  } catch (error) {
    if (!(error instanceof FunctionSourceError)) throw error;
    return makeEntry({ ...base, changes: [], action: 'blocked', reason: error.message });
  }
  const digest = deployDigest(sources, metadata);

  let changes: FieldChange[];
  let action: 'create' | 'update' = 'update';
  if (!live) {
    action = 'create';
    changes = [{ path: 'sources', after: short(sources.digest) }, ...Object.entries(metadata).map(([path, after]) => ({ path, after }))];
  } else {
    const key = functionStateKey(project.ref!, slug);
    const record = await ctx.state.get<DeployedFunctionRecord>(key);
    changes = metadataChanges(live, metadata, recordMatchesLive(record, live) ? record : undefined);
    if (recordMatchesLive(record, live)) {
      if (record.digest !== digest && record.sourcesDigest !== sources.digest) {
        changes.push({ path: 'sources', before: short(record.sourcesDigest), after: short(sources.digest) });
      } else if (record.digest !== digest && changes.length === 0) {
        // Metadata the list does not show (static patterns, import map) changed in git.
        changes.push({ path: 'metadata', before: short(record.digest), after: short(digest) });
      }
    } else {
      // No record, or the function was deployed by someone else since: read what is live, once.
      const body = await parseFunctionBody(
        await ctx.api.getAFunctionBody(project.ref!, slug, { headers: { accept: 'multipart/form-data' }, ...(ctx.signal ? { signal: ctx.signal } : {}) }),
      );
      const liveDigest = body ? sourcesDigest(body.files) : undefined;
      if (liveDigest !== sources.digest) {
        changes.push({ path: 'sources', before: body ? short(liveDigest) : 'unknown (the service returned no file list)', after: short(sources.digest) });
      } else if (changes.length === 0) {
        // Live equals git: remember it, so the next pass needs no body read.
        await ctx.state.set(key, recordFrom(live, digest, sources.digest));
      }
    }
  }

  // The full digest of the planned sources: the apply uploads only what was planned.
  return makeEntry({
    ...base,
    changes,
    action: changes.length ? action : 'update',
    ...(observeOnly ? { observeOnly } : {}),
    ...(changes.length ? { target: { sourcesDigest: sources.digest } } : {}),
  });
}

async function deploy(entry: PlanEntry, project: ProjectScope, ctx: KindContext): Promise<void> {
  const doc = activeDocuments<FunctionDocument>(project, 'Function').find((d) => (d.spec.slug ?? d.metadata.name) === entry.name);
  if (!doc) throw new DocumentGoneError('Function', entry.name, project.name);
  const desired = desiredFunction(doc);
  const { slug, metadata } = desired;
  const ref = refAtApply(project, ctx);
  // Read again at apply time: what is uploaded must be what was planned.
  const now = await sourcesFor(desired);
  if (now.digest !== entry.target?.sourcesDigest) {
    throw new FunctionSourceError(slug, 'sources changed on disk during the pass; the next pass deploys them');
  }
  const form = await buildDeployForm(now, metadata);
  const deployed = await ctx.api.deployAFunction(ref, form, {
    query: { slug },
    priority: 'write',
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  await ctx.state.set(functionStateKey(ref, slug), recordFrom(deployed, deployDigest(now, metadata), now.digest));
  ctx.log.info({ project: project.name, function: slug, version: deployed.version }, 'function deployed');
}

async function remove(entry: PlanEntry, project: ProjectScope, ctx: KindContext): Promise<void> {
  const ref = refAtApply(project, ctx);
  await ctx.api.deleteAFunction(ref, entry.name, { priority: 'write', ...(ctx.signal ? { signal: ctx.signal } : {}) });
  await forget(ctx, functionStateKey(ref, entry.name));
  ctx.log.info({ project: project.name, function: entry.name }, 'function deleted');
}

/** Removes a record: the engine's file store can delete keys; any other store gets a null record (read as none). */
async function forget(ctx: KindContext, key: string): Promise<void> {
  const store = ctx.state as KindContext['state'] & { delete?: (key: string) => Promise<void> };
  if (typeof store.delete === 'function') await store.delete(key);
  else await ctx.state.set(key, null);
}

function pruneEnabled(project: ProjectScope): boolean {
  return project.document.spec.prune?.functions === true;
}

/** The schema of the `Function` document (`FunctionSpec`): `npm run generate:schemas` writes it to `schemas/function.schema.json`. */
function functionDefs(): Record<string, JsonSchema> {
  return {
    FunctionSpec: {
      title: 'FunctionSpec',
      description: 'A function deployed from a source directory of the checkout through the multipart deploy endpoint.',
      type: 'object',
      properties: {
        project: PROJECT_REFERENCE,
        slug: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$', description: 'Function slug; default metadata.name (which must then be a valid slug).' },
        name: { type: 'string', minLength: 1, description: 'Display name; default the slug.' },
        source: { type: 'string', minLength: 1, description: 'Source directory, relative to the manifest file; it must lie inside the manifests directory.' },
        entrypoint: { type: 'string', minLength: 1, description: 'Entrypoint file, relative to `source`.' },
        import_map: { type: 'string', minLength: 1, description: 'Import map file, relative to `source`.' },
        static_patterns: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Globs (relative to `source`) of extra files to upload.' },
        verify_jwt: { type: 'boolean', description: 'Require a valid JWT on every call.' },
        policy: POLICY,
      },
      required: ['project', 'source', 'entrypoint'],
      additionalProperties: false,
    },
  };
}

export const functionsKind: KindModule<'Function'> = {
  kind: 'Function',
  document: { kind: 'Function', description: 'A function of a project, deployed from sources in the checkout.', defs: functionDefs },
  checks: checkFunctions,
  // Its source directory, read by a pass (and hashed for the revision); a change concerns its project.
  files: {
    readAt: 'pass',
    reads: (doc, root) => [`${relative(root, resolve(doc.source.dir, (doc as FunctionDocument).spec.source)).split(sep).join('/')}/`],
    affects: (doc) => [(doc as FunctionDocument).spec.project],
  },
  manages(project) {
    return activeDocuments(project, 'Function').length > 0 || pruneEnabled(project);
  },
  async plan(project, ctx) {
    const docs = activeDocuments<FunctionDocument>(project, 'Function');
    const desired: DesiredFunction[] = [];
    const planned: PlanEntry[] = [];
    for (const doc of docs) {
      try {
        desired.push(desiredFunction(doc));
      } catch (error) {
        if (!(error instanceof FunctionSourceError)) throw error;
        planned.push(makeEntry({ kind: 'Function', name: doc.spec.slug ?? doc.metadata.name, project: project.name, changes: [], action: 'blocked', reason: error.message, source: sourceOf(doc) }));
      }
    }
    // A REMOVED function is gone as far as the manifests are concerned: deploy creates it again.
    const live = (project.ref ? await ctx.api.listAllFunctions(project.ref, { ...(ctx.signal ? { signal: ctx.signal } : {}) }) : []).filter(
      (fn) => fn.status !== 'REMOVED',
    );
    const bySlug = new Map(live.map((fn) => [fn.slug, fn]));
    planned.push(...(await Promise.all(desired.map((d) => planOne(d, bySlug.get(d.slug), project, ctx)))));

    // Every declared slug, suspended ones included: a suspended function is never pruned.
    const declared = new Set(allDocuments<FunctionDocument>(project, 'Function').map((doc) => doc.spec.slug ?? doc.metadata.name));
    planned.push(
      ...planPrune(project, {
        kind: 'Function',
        undeclared: live.filter((fn) => !declared.has(fn.slug)),
        enabled: pruneEnabled(project),
        child: (fn) => ({ name: fn.slug, reason: 'not declared in the manifests and spec.prune.functions is true' }),
        kept: (functions) => {
          for (const fn of functions) ctx.log.debug({ project: project.name, function: fn.slug }, 'live function not in the manifests; kept (spec.prune.functions is not true)');
        },
      }),
    );
    return planned;
  },
  apply(entry, project, ctx) {
    return entry.action === 'delete' ? remove(entry, project, ctx) : deploy(entry, project, ctx);
  },
  // A document per live function, with its source files; without sources they are only named.
  async exportDocuments({ api, ref, name, read, functions: withSources, functionDir, log }) {
    const functions = (await read(() => api.listAllFunctions(ref, { project: name }), 'functions')) ?? [];
    const live = functions.filter((fn: FunctionResponse) => fn.status !== 'REMOVED').sort((a, b) => a.slug.localeCompare(b.slug));
    if (!withSources) return { documents: [], leftOut: live.map((fn) => `${name}/${fn.slug}`) };
    if (live.length === 0) return { documents: [] };
    const dir = functionDir();
    const documents: Array<Record<string, unknown>> = [];
    const files: ExportedFile[] = [];
    for (const fn of live) {
      const exported = await exportFunction({ api, ref, project: name, dir, live: fn, log });
      documents.push(exported.document);
      files.push(...exported.files);
    }
    return { documents, files };
  },
};
