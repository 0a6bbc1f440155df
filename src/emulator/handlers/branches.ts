import { badRequest, conflict, notFound } from '../errors.js';
import { PLATFORM_DOMAIN } from '../defaults.js';
import { uniqueRef } from '../project-factory.js';
import { newUuid, randomHex } from '../random.js';
import type { BranchRecord, BranchStatus, EmulatorState, ProjectRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler, type HandlerContext } from './context.js';

function branchResponse(branch: BranchRecord): Record<string, unknown> {
  return {
    id: branch.id,
    name: branch.name,
    project_ref: branch.projectRef,
    parent_project_ref: branch.parentRef,
    is_default: branch.isDefault,
    ...(branch.gitBranch !== undefined ? { git_branch: branch.gitBranch } : {}),
    ...(branch.prNumber !== undefined ? { pr_number: branch.prNumber } : {}),
    persistent: branch.persistent,
    status: branch.status,
    created_at: branch.createdAt,
    updated_at: branch.updatedAt,
    with_data: branch.withData,
    ...(branch.notifyUrl !== undefined ? { notify_url: branch.notifyUrl } : {}),
    preview_project_status: branch.previewStatus,
  };
}

function branchesOf(state: EmulatorState, ref: string): BranchRecord[] {
  return [...state.branches.values()].filter((b) => b.parentRef === ref);
}

/** Runs migrations then functions on the branch clock: each step takes `branchStep`. */
function scheduleWorkflow(context: HandlerContext, branch: BranchRecord, steps: BranchStatus[]): void {
  branch.generation++;
  const generation = branch.generation;
  steps.forEach((status, index) => {
    const at = context.now + (index + 1) * context.durations.branchStep;
    context.state.schedule(at, () => {
      if (branch.generation !== generation || context.state.branches.get(branch.id) !== branch) return;
      branch.status = status;
      branch.updatedAt = iso(at);
      if (index === 0) branch.previewStatus = 'ACTIVE_HEALTHY';
    });
  });
}

function newBranch(context: HandlerContext, parent: ProjectRecord, fields: Partial<BranchRecord> & { name: string }): BranchRecord {
  const stamp = iso(context.now);
  return {
    id: newUuid(), projectRef: uniqueRef(context.state), parentRef: parent.ref, isDefault: false, persistent: false,
    status: 'CREATING_PROJECT', previewStatus: 'COMING_UP', createdAt: stamp, updatedAt: stamp, withData: false,
    dbPass: randomHex(16), jwtSecret: randomHex(32), postgresEngine: parent.database.postgresEngine,
    postgresVersion: parent.database.version, releaseChannel: parent.database.releaseChannel, generation: 0,
    ...fields,
  };
}

export const listBranches: Handler = (context) => {
  const project = projectFor(context);
  return ok(branchesOf(context.state, project.ref).map(branchResponse));
};

export const createBranch: Handler = (context) => {
  const project = projectFor(context, { write: true });
  if (project.status !== 'ACTIVE_HEALTHY') throw badRequest(`Project ${project.ref} is ${project.status}: branches need an ACTIVE_HEALTHY project`);
  const body = context.body as {
    branch_name: string; git_branch?: string; persistent?: boolean; region?: string; release_channel?: string;
    postgres_engine?: string; with_data?: boolean; notify_url?: string; is_default?: boolean;
  };
  const existing = branchesOf(context.state, project.ref);
  if (existing.some((b) => b.name === body.branch_name)) throw conflict(`A branch named ${body.branch_name} already exists`);
  if (body.git_branch !== undefined && existing.some((b) => b.gitBranch === body.git_branch)) throw conflict(`A branch for git branch ${body.git_branch} already exists`);
  const stamp = iso(context.now);
  const additions: BranchRecord[] = [];
  if (!project.branchingEnabled && body.branch_name !== 'main') {
    // Enabling branching makes the project itself the default branch.
    additions.push(newBranch(context, project, {
      name: 'main', projectRef: project.ref, isDefault: true, gitBranch: 'main', persistent: true,
      status: 'FUNCTIONS_DEPLOYED', previewStatus: 'ACTIVE_HEALTHY', createdAt: stamp, updatedAt: stamp,
    }));
  }
  const makeDefault = !project.branchingEnabled && body.branch_name === 'main';
  const branch = newBranch(context, project, {
    name: body.branch_name,
    gitBranch: body.git_branch,
    persistent: body.persistent ?? false,
    withData: body.with_data ?? false,
    notifyUrl: body.notify_url,
    ...(body.release_channel ? { releaseChannel: body.release_channel } : {}),
    ...(body.postgres_engine ? { postgresEngine: body.postgres_engine } : {}),
    ...(makeDefault ? { projectRef: project.ref, isDefault: true, status: 'FUNCTIONS_DEPLOYED', previewStatus: 'ACTIVE_HEALTHY' } : {}),
  });
  additions.push(branch);
  project.branchingEnabled = true;
  for (const b of additions) context.state.branches.set(b.id, b);
  if (!makeDefault) scheduleWorkflow(context, branch, ['RUNNING_MIGRATIONS', 'MIGRATIONS_PASSED', 'FUNCTIONS_DEPLOYED']);
  return created(branchResponse(branch));
};

export const disableBranching: Handler = (context) => {
  const project = projectFor(context, { write: true });
  if (!project.branchingEnabled) throw badRequest(`Branching is not enabled for project ${project.ref}`);
  for (const branch of branchesOf(context.state, project.ref)) context.state.branches.delete(branch.id);
  project.branchingEnabled = false;
  return ok({});
};

function branchFor(context: HandlerContext, write: boolean): { branch: BranchRecord; parent: ProjectRecord } {
  const branch = context.state.branches.get(context.params.branch_id!);
  if (!branch) throw notFound(`Branch ${context.params.branch_id} not found`);
  const parent = projectFor(context, { write }, branch.parentRef);
  return { branch, parent };
}

export const getBranchConfig: Handler = (context) => {
  const { branch } = branchFor(context, false);
  return ok({
    ref: branch.projectRef,
    postgres_version: branch.postgresVersion,
    postgres_engine: branch.postgresEngine,
    release_channel: branch.releaseChannel,
    status: branch.previewStatus,
    db_host: `db.${branch.projectRef}.${PLATFORM_DOMAIN}`,
    db_port: 5432,
    db_user: 'postgres',
    db_pass: branch.dbPass,
    jwt_secret: branch.jwtSecret,
  });
};

export const updateBranch: Handler = (context) => {
  const { branch, parent } = branchFor(context, true);
  const body = context.body as { branch_name?: string; git_branch?: string; persistent?: boolean; status?: BranchStatus; notify_url?: string };
  const siblings = branchesOf(context.state, parent.ref).filter((b) => b !== branch);
  if (body.branch_name !== undefined && siblings.some((b) => b.name === body.branch_name)) throw conflict(`A branch named ${body.branch_name} already exists`);
  if (body.git_branch !== undefined && siblings.some((b) => b.gitBranch === body.git_branch)) throw conflict(`A branch for git branch ${body.git_branch} already exists`);
  if (body.branch_name !== undefined) branch.name = body.branch_name;
  if (body.git_branch !== undefined) branch.gitBranch = body.git_branch;
  if (body.persistent !== undefined) branch.persistent = body.persistent;
  if (body.notify_url !== undefined) branch.notifyUrl = body.notify_url;
  if (body.status !== undefined) {
    branch.generation++;
    branch.status = body.status;
  }
  branch.updatedAt = iso(context.now);
  return ok(branchResponse(branch));
};

export const deleteBranch: Handler = (context) => {
  const { branch } = branchFor(context, true);
  if (branch.isDefault) throw badRequest('The default branch cannot be deleted; disable branching on the project instead');
  branch.generation++;
  context.state.branches.delete(branch.id);
  return ok({ message: 'ok' });
};

function branchAction(context: HandlerContext): ReturnType<Handler> {
  const { branch } = branchFor(context, true);
  if (branch.status === 'CREATING_PROJECT') throw badRequest(`Branch ${branch.name} is still being created`);
  branch.status = 'RUNNING_MIGRATIONS';
  branch.updatedAt = iso(context.now);
  scheduleWorkflow(context, branch, ['MIGRATIONS_PASSED', 'FUNCTIONS_DEPLOYED']);
  return created({ workflow_run_id: newUuid(), message: 'ok' });
}

export const pushBranch: Handler = (context) => branchAction(context);
export const resetBranch: Handler = (context) => branchAction(context);
