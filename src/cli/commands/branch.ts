// `reconcile branch push|reset NAME --project P`: branch actions are not state, so they are
// commands, not manifest fields. P is a Project manifest name (its ref from `spec.ref` or
// the project list) or a project ref. Cost: one project list (unless the manifest gives the
// ref), one branch list, one POST.
import { resolve } from 'node:path';
import { isApiError } from '../../api/errors.js';
import type { ManagementApi } from '../../api/endpoints.js';
import type { ProjectDocument } from '../../manifests/types.js';
import { didYouMean } from '../../manifests/suggest.js';
import { openApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, type ContextOf } from '../context.js';

const ACTIONS = ['push', 'reset'] as const;
type BranchAction = (typeof ACTIONS)[number];

/** The project named on the command line cannot be found, or not unambiguously. */
class ProjectLookupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectLookupError';
  }
}

/** The branch does not exist in the project. */
class BranchNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BranchNotFoundError';
  }
}

async function manifestProjects(context: ContextOf<'branch'>): Promise<ProjectDocument[]> {
  const dir = context.settings.manifests;
  if (!dir) return [];
  const { loadManifests } = await import('../../reconcile/load-manifests.js');
  const set = await loadManifests(resolve(context.cwd, dir));
  return set.documents.filter((d): d is ProjectDocument => d.kind === 'Project');
}

/** Resolves P: a manifest name first (with `--manifests`), then a live ref, then a unique live project name. */
async function resolveProjectRef(api: ManagementApi, wanted: string, documents: readonly ProjectDocument[], signal?: AbortSignal): Promise<string> {
  const doc = documents.find((d) => d.metadata.name === wanted);
  if (doc?.spec.ref) return doc.spec.ref;
  const apiName = doc ? (doc.spec.name ?? doc.metadata.name) : wanted;
  const projects = await api.listAllProjects({ priority: 'write', ...(signal ? { signal } : {}) });
  if (!doc) {
    const byRef = projects.find((p) => p.ref === wanted);
    if (byRef) return byRef.ref;
  }
  const byName = projects.filter((p) => p.name === apiName);
  if (byName.length === 1) return byName[0]!.ref;
  if (byName.length > 1) {
    throw new ProjectLookupError(`project name \`${apiName}\` matches ${byName.length} live projects (${byName.map((p) => p.ref).join(', ')}); pass the ref with --project`);
  }
  // Manifest names first: they are what the user means to type, live names and refs after.
  // A manifest of this very name whose project is not live yet gets no suggestion of itself.
  const others = (names: string[]) => names.filter((name) => name !== wanted);
  const hint = didYouMean(wanted, others(documents.map((d) => d.metadata.name))) ?? didYouMean(wanted, others(projects.flatMap((p) => [p.name, p.ref])));
  throw new ProjectLookupError(`no live project with the ref or name \`${wanted}\`${hint === undefined ? '' : `; ${hint}`}`);
}

export async function run(context: ContextOf<'branch'>): Promise<number> {
  const [action, name, ...rest] = context.positionals;
  if (!action || !(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`branch: expected \`push\` or \`reset\`, got \`${action ?? ''}\``);
  }
  if (!name) throw new UsageError(`branch ${action}: the branch NAME is missing`);
  if (rest.length) throw new UsageError(`branch ${action}: unexpected argument \`${rest[0]}\``);
  const projectOption = context.settings.project;
  if (!projectOption) throw new UsageError(`branch ${action}: --project P is required (a Project manifest name or a project ref)`);
  const output = context.settings.output;
  if (output !== 'text' && output !== 'json') throw new UsageError(`branch: --output must be text or json, got \`${output}\``);

  const session = context.settings.sandbox ? await openSandboxSession(context.settings) : await openApiSession(context.settings, context.env);
  try {
    const api = session.client.api;
    const ref = await resolveProjectRef(api, projectOption, await manifestProjects(context), context.signal);
    const branches = await api.listAllBranches(ref, { priority: 'write', project: ref, signal: context.signal });
    const branch = branches.find((b) => b.name === name);
    if (!branch) {
      const known = branches.map((b) => b.name).sort();
      throw new BranchNotFoundError(`no branch \`${name}\` in project ${ref}${known.length ? ` (branches: ${known.join(', ')})` : ' (it has no branches)'}`);
    }
    const call = { priority: 'write' as const, project: ref, signal: context.signal };
    const answer = (action as BranchAction) === 'push' ? await api.pushABranch(branch.id, {}, call) : await api.resetABranch(branch.id, {}, call);
    if (output === 'json') {
      context.stdout.write(`${JSON.stringify({ action, project: ref, branch: name, branch_id: branch.id, workflow_run_id: answer.workflow_run_id, message: answer.message })}\n`);
    } else {
      context.stdout.write(`branch ${name} of project ${ref}: ${action} started, workflow run ${answer.workflow_run_id}\n`);
    }
    return 0;
  } catch (error) {
    if (error instanceof ProjectLookupError || error instanceof BranchNotFoundError || isApiError(error)) {
      context.stderr.write(`reconcile: branch ${action}: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await session.close();
  }
}
