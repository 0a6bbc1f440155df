import { badRequest, conflict, notFound } from '../errors.js';
import { buildMultipart, type MultipartPart } from '../body.js';
import { newUuid } from '../random.js';
import { bundleBytes, bundleDigest } from '../section-updates.js';
import type { FunctionRecord, ProjectRecord } from '../state.js';
import { created, ok, projectFor, type Handler, type HandlerContext } from './context.js';

const SLUG = /^[A-Za-z][A-Za-z0-9_-]*$/;

function functionResponse(fn: FunctionRecord): Record<string, unknown> {
  return {
    id: fn.id,
    slug: fn.slug,
    name: fn.name,
    status: fn.status,
    version: fn.version,
    created_at: fn.createdAt,
    updated_at: fn.updatedAt,
    verify_jwt: fn.verifyJwt,
    import_map: fn.importMapPath !== undefined,
    ...(fn.entrypointPath !== undefined ? { entrypoint_path: fn.entrypointPath } : {}),
    ...(fn.importMapPath !== undefined ? { import_map_path: fn.importMapPath } : {}),
    ...(fn.ezbrSha256 !== undefined ? { ezbr_sha256: fn.ezbrSha256 } : {}),
  };
}

/** `file:///src/index.ts`, `./index.ts` and `index.ts` name the same source. */
function normalizePath(path: string): string {
  return path.replace(/^file:\/\//, '').replace(/^\.\//, '').replace(/^\/+/, '');
}

function hasFile(files: Map<string, Buffer>, path: string): boolean {
  const wanted = normalizePath(path);
  return [...files.keys()].some((name) => normalizePath(name) === wanted || wanted.endsWith(`/${normalizePath(name)}`));
}

function functionFor(context: HandlerContext, project: ProjectRecord): FunctionRecord {
  const slug = context.params.function_slug!;
  const fn = project.functions.get(slug);
  if (!fn) throw notFound(`Function ${slug} not found in project ${project.ref}`);
  return fn;
}

export const listFunctions: Handler = (context) => ok([...projectFor(context).functions.values()].map(functionResponse));

export const getFunction: Handler = (context) => ok(functionResponse(functionFor(context, projectFor(context))));

export const deployFunction: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const metadata = context.body as { entrypoint_path: string; import_map_path?: string; static_patterns?: string[]; verify_jwt?: boolean; name?: string };
  const slug = (context.query.slug as string | undefined) ?? metadata.name;
  if (!slug) throw badRequest('`slug` query parameter is required (or `metadata.name`)');
  if (!SLUG.test(slug)) throw badRequest(`\`slug\` must match ^[A-Za-z][A-Za-z0-9_-]*$, got ${JSON.stringify(slug)}`);
  const parts = (context.parts ?? []) as MultipartPart[];
  const foreign = parts.filter((p) => p.name !== 'file');
  if (foreign.length > 0) throw badRequest(`Unexpected multipart part \`${foreign[0]!.name}\`: only \`metadata\` and \`file\` parts are accepted`);
  const files = new Map<string, Buffer>();
  for (const part of parts) {
    if (!part.filename) throw badRequest('Every `file` part needs a filename (the path relative to the function root)');
    const path = part.filename;
    if (path.split('/').includes('..') || path.startsWith('/')) throw badRequest(`File name ${JSON.stringify(path)} must be a path relative to the function root`);
    if (files.has(path)) throw badRequest(`File ${path} is uploaded twice`);
    files.set(path, part.content);
  }
  if (files.size === 0) throw badRequest('At least one `file` part is required');
  if (!hasFile(files, metadata.entrypoint_path)) throw badRequest(`\`metadata.entrypoint_path\` ${metadata.entrypoint_path} is not among the uploaded files`);
  if (metadata.import_map_path !== undefined && !hasFile(files, metadata.import_map_path)) {
    throw badRequest(`\`metadata.import_map_path\` ${metadata.import_map_path} is not among the uploaded files`);
  }
  const existing = project.functions.get(slug);
  const next: FunctionRecord = {
    id: existing?.id ?? newUuid(),
    slug,
    name: metadata.name ?? existing?.name ?? slug,
    status: 'ACTIVE',
    version: (existing?.version ?? 0) + 1,
    createdAt: existing?.createdAt ?? context.now,
    updatedAt: context.now,
    verifyJwt: metadata.verify_jwt ?? existing?.verifyJwt ?? true,
    entrypointPath: metadata.entrypoint_path,
    importMapPath: metadata.import_map_path,
    staticPatterns: metadata.static_patterns ?? [],
    files,
  };
  next.ezbrSha256 = bundleDigest(next);
  // bundleOnly: the service bundles and answers, but the deployed function does not change.
  if (context.query.bundleOnly === true) return created(functionResponse({ ...next, version: existing?.version ?? 0 }));
  project.functions.set(slug, next);
  return created(functionResponse(next));
};

export const createFunction: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const body = context.body as { slug: string; name: string; body: string; verify_jwt?: boolean };
  const slug = (context.query.slug as string | undefined) ?? body.slug;
  if (!SLUG.test(slug)) throw badRequest(`\`slug\` must match ^[A-Za-z][A-Za-z0-9_-]*$, got ${JSON.stringify(slug)}`);
  if (project.functions.has(slug)) throw conflict(`Function ${slug} already exists in project ${project.ref}`);
  const entrypoint = (context.query.entrypoint_path as string | undefined) ?? 'index.ts';
  const fn: FunctionRecord = {
    id: newUuid(), slug, name: (context.query.name as string | undefined) ?? body.name, status: 'ACTIVE', version: 1,
    createdAt: context.now, updatedAt: context.now, verifyJwt: (context.query.verify_jwt as boolean | undefined) ?? body.verify_jwt ?? true,
    entrypointPath: entrypoint, importMapPath: context.query.import_map_path as string | undefined, staticPatterns: [],
    files: new Map([[normalizePath(entrypoint), Buffer.from(body.body, 'utf8')]]),
  };
  fn.ezbrSha256 = bundleDigest(fn);
  project.functions.set(slug, fn);
  return created(functionResponse(fn));
};

export const updateFunction: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const fn = functionFor(context, project);
  const body = context.body as { name?: string; body?: string; verify_jwt?: boolean };
  const name = body.name ?? (context.query.name as string | undefined);
  const verifyJwt = body.verify_jwt ?? (context.query.verify_jwt as boolean | undefined);
  if (name !== undefined) fn.name = name;
  if (verifyJwt !== undefined) fn.verifyJwt = verifyJwt;
  if (body.body !== undefined) {
    fn.files = new Map([[normalizePath(fn.entrypointPath ?? 'index.ts'), Buffer.from(body.body, 'utf8')]]);
    fn.version++;
    fn.ezbrSha256 = bundleDigest(fn);
  }
  fn.updatedAt = context.now;
  return ok(functionResponse(fn));
};

export const deleteFunction: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const fn = functionFor(context, project);
  project.functions.delete(fn.slug);
  return ok({ message: 'ok' });
};

export const bulkUpdateFunctions: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const items = context.body as Array<{
    id: string; slug: string; name: string; status: FunctionRecord['status']; version: number; created_at?: number;
    verify_jwt?: boolean; entrypoint_path?: string; import_map_path?: string;
  }>;
  const slugs = new Set<string>();
  items.forEach((item, index) => {
    if (slugs.has(item.slug)) throw badRequest(`\`[${index}].slug\`: ${item.slug} appears twice`);
    slugs.add(item.slug);
  });
  const updated: FunctionRecord[] = [];
  for (const item of items) {
    const existing = project.functions.get(item.slug);
    const fn: FunctionRecord = existing ?? {
      id: item.id, slug: item.slug, name: item.name, status: item.status, version: item.version, createdAt: item.created_at ?? context.now,
      updatedAt: context.now, verifyJwt: item.verify_jwt ?? true, staticPatterns: [], files: new Map(),
    };
    // The bulk update sets metadata as given; it never bumps the version itself.
    fn.name = item.name;
    fn.status = item.status;
    fn.version = item.version;
    if (item.verify_jwt !== undefined) fn.verifyJwt = item.verify_jwt;
    if (item.entrypoint_path !== undefined) fn.entrypointPath = item.entrypoint_path;
    if (item.import_map_path !== undefined) fn.importMapPath = item.import_map_path;
    fn.updatedAt = context.now;
    updated.push(fn);
  }
  for (const fn of updated) project.functions.set(fn.slug, fn);
  return ok({ functions: updated.map((fn) => ({ ...functionResponse(fn), created_at: fn.createdAt, updated_at: fn.updatedAt })) });
};

export const getFunctionBody: Handler = (context) => {
  const project = projectFor(context);
  const fn = functionFor(context, project);
  const accept = String(context.headers.accept ?? '');
  if (accept.includes('multipart/form-data')) {
    const metadata = {
      entrypoint_path: fn.entrypointPath,
      ...(fn.importMapPath !== undefined ? { import_map_path: fn.importMapPath } : {}),
      static_patterns: fn.staticPatterns,
      verify_jwt: fn.verifyJwt,
      name: fn.name,
    };
    const parts: MultipartPart[] = [
      { name: 'metadata', contentType: 'application/json', content: Buffer.from(JSON.stringify(metadata), 'utf8') },
      ...[...fn.files.entries()].map(([path, content]) => ({ name: 'file', filename: path, contentType: 'application/octet-stream', content })),
    ];
    const built = buildMultipart(parts);
    return { status: 200, raw: { contentType: built.contentType, bytes: built.bytes } };
  }
  return { status: 200, raw: { contentType: 'application/octet-stream', bytes: bundleBytes(fn) } };
};
