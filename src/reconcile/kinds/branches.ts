// `Branch`: preview branches, matched by name. One list per project; create with POST,
// update with PATCH, delete only with `spec.prune.branches` on the project. Disabling
// branching (which deletes every branch) happens only through the Project's
// `branching_disabled: true`, as one destructive entry.
import { convertOpenApiSchema, PROJECT_REFERENCE, POLICY, REGIONS, type OpenApiDocument, type JsonSchema } from '../../manifests/schema-source.js';
import type { BranchResponse, CreateBranchBody, UpdateBranchBody } from '../../api/types.js';
import { NotFoundError } from '../../api/errors.js';
import { API_VERSION, type BranchDocument } from '../../manifests/types.js';
import { textOf as str, type KindCheck } from '../../manifests/load-facets.js';
import type { FieldChange, KindContext, KindModule, PlanEntry, ProjectScope } from '../types.js';
import { changedSubset, makeEntry } from '../diff.js';
import { activeDocuments, allDocuments, DocumentGoneError, isObserveOnly, planPrune, projectDependency, refAtApply, sourceOf } from './common.js';

/** Branch statuses on the way to a usable branch. */
const CONVERGING = new Set(['CREATING_PROJECT', 'RUNNING_MIGRATIONS']);

/** The name of the entry that stands for the project's branching as a whole. */
const BRANCHING_ENTRY = '(branching)';

function pruneEnabled(project: ProjectScope): boolean {
  return project.document.spec.prune?.branches === true;
}

function branchingDisabled(project: ProjectScope): boolean {
  return project.document.spec.branching_disabled === true;
}

export function branchName(doc: BranchDocument): string {
  return doc.spec.branch_name ?? doc.metadata.name;
}

/** Fields the branch list shows and PATCH can change. Region and size are set at creation only. */
function diffBranch(doc: BranchDocument, live: BranchResponse): FieldChange[] {
  const changes: FieldChange[] = [];
  if (doc.spec.git_branch !== undefined && live.git_branch !== doc.spec.git_branch) {
    changes.push({ path: 'git_branch', ...(live.git_branch !== undefined ? { before: live.git_branch } : {}), after: doc.spec.git_branch });
  }
  if (doc.spec.persistent !== undefined && live.persistent !== doc.spec.persistent) {
    changes.push({ path: 'persistent', before: live.persistent, after: doc.spec.persistent });
  }
  return changes;
}

async function listBranches(project: ProjectScope, ctx: KindContext): Promise<BranchResponse[]> {
  if (!project.ref) return [];
  try {
    return await ctx.api.listAllBranches(project.ref, { ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (error) {
    // A project without branching has no branch list.
    if (error instanceof NotFoundError) return [];
    throw error;
  }
}

/** The schema of the `Branch` document (`BranchSpec`): `npm run generate:schemas` writes it to `schemas/branch.schema.json`. */
function branchDefs(openapi: OpenApiDocument): Record<string, JsonSchema> {
  const body = openapi.components.schemas.CreateBranchBody!.properties as Record<string, JsonSchema>;
  return {
    BranchSpec: {
      title: 'BranchSpec',
      description: 'A preview branch of a project.',
      type: 'object',
      properties: {
        project: PROJECT_REFERENCE,
        branch_name: { ...convertOpenApiSchema(body.branch_name!), description: 'Branch name; default metadata.name.' },
        git_branch: { ...convertOpenApiSchema(body.git_branch!), description: 'The git branch it follows.' },
        persistent: { ...convertOpenApiSchema(body.persistent!), description: 'Keep the branch when its git branch is merged or deleted.' },
        region: { ...convertOpenApiSchema(body.region!), enum: [...REGIONS], description: 'Region of the branch project.' },
        desired_instance_size: { ...convertOpenApiSchema(body.desired_instance_size!), description: 'Compute size of the branch project.' },
        policy: POLICY,
      },
      required: ['project'],
      additionalProperties: false,
    },
  };
}

/** A branch name once per project, and no branch in a project without branching. */
const checkBranches: KindCheck = (entries, check) => {
  const branchingDisabled = new Set(check.projects.filter((p) => p.spec.branching_disabled === true && p.name).map((p) => p.name!));
  for (const entry of entries) {
    const project = str(entry.spec.project);
    const branchName = str(entry.spec.branch_name) ?? entry.name;
    if (project !== undefined && branchName !== undefined && !check.duplicates.has(entry)) {
      check.claim('branch-name', `${project}\u0000${branchName}`, entry, str(entry.spec.branch_name) ? '/spec/branch_name' : '/metadata/name', (first) => `two branches named \`${branchName}\` in project \`${project}\`: also ${check.where(first, '/metadata/name')}`);
    }
    if (project !== undefined && branchingDisabled.has(project)) {
      check.error(entry, '/spec/project', `project \`${project}\` sets branching_disabled: true, so it can have no branches`);
    }
  }
};

export const branchesKind: KindModule<'Branch'> = {
  kind: 'Branch',
  document: { kind: 'Branch', description: 'A preview branch of a project.', defs: branchDefs },
  checks: checkBranches,
  manages(project) {
    return activeDocuments(project, 'Branch').length > 0 || pruneEnabled(project) || branchingDisabled(project);
  },
  async plan(project, ctx) {
    const live = await listBranches(project, ctx);
    const planned: PlanEntry[] = [];
    const docs = activeDocuments<BranchDocument>(project, 'Branch');

    if (branchingDisabled(project)) {
      for (const doc of docs) {
        planned.push(makeEntry({ kind: 'Branch', name: branchName(doc), project: project.name, changes: [], action: 'blocked', reason: 'the project sets branching_disabled: true', source: sourceOf(doc) }));
      }
      const entry = makeEntry({
        kind: 'Branch',
        name: BRANCHING_ENTRY,
        project: project.name,
        action: live.length ? 'delete' : 'update',
        changes: live.length ? [{ path: 'branches', before: live.map((b) => b.name).sort() }] : [],
        reason: live.length
          ? `DESTRUCTIVE: branching_disabled is true: disables preview branching and deletes all ${live.length} branches of the project`
          : 'branching is disabled',
        dependsOn: projectDependency(project),
      });
      planned.push(entry);
      return planned;
    }

    const byName = new Map(live.map((b) => [b.name, b]));
    for (const doc of docs) {
      const name = branchName(doc);
      const observeOnly = isObserveOnly(doc);
      const base = { kind: 'Branch' as const, name, project: project.name, source: sourceOf(doc), dependsOn: projectDependency(project), ...(observeOnly ? { observeOnly } : {}) };
      const current = byName.get(name);
      if (!current) {
        const body = createBody(doc);
        planned.push(makeEntry({ ...base, action: 'create', changes: Object.entries(body).filter(([k]) => k !== 'branch_name').map(([path, after]) => ({ path, after })) }));
        continue;
      }
      const changes = diffBranch(doc, current);
      const entry = makeEntry({ ...base, changes, ...(changes.length > 0 ? { target: { id: current.id } } : {}) });
      if (CONVERGING.has(current.status)) {
        // The service is still setting the branch up: that is progress, not drift.
        entry.pending = true;
        entry.reason = `branch status ${current.status}`;
      }
      planned.push(entry);
    }

    // Declared names, suspended documents included: those branches are never pruned.
    const declared = new Set(allDocuments<BranchDocument>(project, 'Branch').map(branchName));
    planned.push(
      ...planPrune(project, {
        kind: 'Branch',
        undeclared: live.filter((branch) => !declared.has(branch.name) && !branch.is_default),
        enabled: pruneEnabled(project),
        child: (branch) => ({ name: branch.name, reason: 'not declared in the manifests and spec.prune.branches is true', target: { id: branch.id } }),
        kept: (branches) => {
          for (const branch of branches) ctx.log.debug({ project: project.name, branch: branch.name }, 'live branch not in the manifests; kept (spec.prune.branches is not true)');
        },
      }),
    );
    return planned;
  },
  async apply(entry, project, ctx) {
    const options = { priority: 'write' as const, ...(ctx.signal ? { signal: ctx.signal } : {}) };
    const id = entry.target?.id as string | undefined;
    if (entry.action === 'delete' && id === undefined) {
      // The project's branching as a whole (BRANCHING_ENTRY): its `before` lists every live branch.
      await ctx.api.disablePreviewBranching(refAtApply(project, ctx), options);
      ctx.log.warn({ project: project.name, branches: ((entry.changes[0]?.before ?? []) as string[]).length }, 'preview branching disabled');
    } else if (entry.action === 'delete') {
      await ctx.api.deleteABranch(id!, options);
      ctx.log.info({ project: project.name, branch: entry.name }, 'branch deleted');
    } else if (entry.action === 'create') {
      const doc = declaredBranch(project, entry.name);
      const created = await ctx.api.createABranch(refAtApply(project, ctx), createBody(doc), options);
      ctx.log.info({ project: project.name, branch: entry.name, id: created.id }, 'branch created');
    } else {
      const doc = declaredBranch(project, entry.name);
      const patch = changedSubset({ git_branch: doc.spec.git_branch, persistent: doc.spec.persistent }, entry.changes) as UpdateBranchBody;
      await ctx.api.updateABranchConfig(id!, patch, options);
      ctx.log.info({ project: project.name, branch: entry.name }, 'branch updated');
    }
  },
  // One document per preview branch; the default branch is the project itself.
  async exportDocuments({ api, ref, name, read }) {
    const list = async () => {
      try {
        return await api.listAllBranches(ref, { project: name });
      } catch (error) {
        // A project without branching has no branch list: nothing to export, nothing to warn about.
        if (error instanceof NotFoundError) return [];
        throw error;
      }
    };
    const branches = (await read(list, 'branches')) ?? [];
    const documents = branches
      .filter((branch) => !branch.is_default)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((branch) => {
        const spec: Record<string, unknown> = { project: name, branch_name: branch.name };
        if (branch.git_branch !== undefined && branch.git_branch !== null) spec.git_branch = branch.git_branch;
        spec.persistent = branch.persistent;
        return { apiVersion: API_VERSION, kind: 'Branch', metadata: { name: branch.name }, spec };
      });
    return { documents };
  },
};

function createBody(doc: BranchDocument): CreateBranchBody {
  const body: CreateBranchBody = { branch_name: branchName(doc) };
  if (doc.spec.git_branch !== undefined) body.git_branch = doc.spec.git_branch;
  if (doc.spec.persistent !== undefined) body.persistent = doc.spec.persistent;
  if (doc.spec.region !== undefined) body.region = doc.spec.region;
  if (doc.spec.desired_instance_size !== undefined) body.desired_instance_size = doc.spec.desired_instance_size;
  return body;
}

/** The active Branch document an entry was planned from (entries are named after their branch). */
function declaredBranch(project: ProjectScope, name: string): BranchDocument {
  const doc = activeDocuments<BranchDocument>(project, 'Branch').find((d) => branchName(d) === name);
  if (!doc) throw new DocumentGoneError('Branch', name, project.name);
  return doc;
}
