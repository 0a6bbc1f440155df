import { badRequest, forbidden, notFound } from '../errors.js';
import { buildProject } from '../project-factory.js';
import { cancelRestore, startCreate, startPause, startRestore } from '../lifecycle.js';
import { PLATFORM_DOMAIN } from '../defaults.js';
import { SERVICES, type ProjectRecord, type ServiceName } from '../state.js';
import { created, iso, ok, projectFor, requireUser, serviceStatus, type Handler, type HandlerContext } from './context.js';

function projectSummary(project: ProjectRecord): Record<string, unknown> {
  return {
    id: project.ref,
    ref: project.ref,
    organization_id: project.orgSlug,
    organization_slug: project.orgSlug,
    name: project.name,
    region: project.region,
    created_at: iso(project.createdAt),
    status: project.status,
  };
}

function projectWithDatabase(project: ProjectRecord): Record<string, unknown> {
  return {
    ...projectSummary(project),
    database: {
      host: `db.${project.ref}.${PLATFORM_DOMAIN}`,
      version: project.database.version,
      postgres_engine: project.database.postgresEngine,
      release_channel: project.database.releaseChannel,
    },
  };
}

function visibleProjects(context: HandlerContext): ProjectRecord[] {
  const user = requireUser(context);
  const slugs = new Set(context.state.userOrganizations(user.id).map((org) => org.slug));
  return [...context.state.projects.values()].filter((p) => slugs.has(p.orgSlug));
}

export const listProjects: Handler = (context) => ok(visibleProjects(context).map(projectWithDatabase));

export const createProject: Handler = (context) => {
  const user = requireUser(context);
  const body = context.body as { db_pass: string; name: string; organization_id: string; region: string; desired_instance_size?: string };
  if (body.name.trim() === '') throw badRequest('`name` must not be empty');
  if (body.db_pass.length < 1) throw badRequest('`db_pass` must not be empty');
  const org = context.state.organizations.get(body.organization_id);
  if (!org) throw notFound(`Organization ${body.organization_id} not found`);
  const role = context.state.memberRole(org, user.id);
  if (!role) throw forbidden();
  if (role === 'Read-only') throw forbidden('Forbidden: your role in the organization (Read-only) cannot create projects');
  const project = buildProject(
    context.state,
    { name: body.name, orgSlug: org.slug, region: body.region, instanceSize: body.desired_instance_size, dbPass: body.db_pass },
    context.now,
    context.durations,
  );
  context.state.projects.set(project.ref, project);
  startCreate(context.state, project, context.now, context.durations, context.faults.lifecycleFails('create'));
  return created(projectSummary(project));
};

export const getProject: Handler = (context) => ok(projectWithDatabase(projectFor(context)));

export const deleteProject: Handler = (context) => {
  const project = projectFor(context);
  const role = context.state.memberRole(context.state.organizations.get(project.orgSlug)!, context.user!.id);
  if (role === 'Read-only' || role === 'Developer') throw forbidden(`Forbidden: your role in the organization (${role}) cannot delete projects`);
  project.generation++;
  context.state.projects.delete(project.ref);
  void context.databases.remove(project.ref);
  for (const [id, branch] of context.state.branches) if (branch.parentRef === project.ref) context.state.branches.delete(id);
  for (const [id, snippet] of context.state.snippets) if (snippet.projectRef === project.ref) context.state.snippets.delete(id);
  return ok({ id: project.numericId, ref: project.ref, name: project.name });
};

export const pauseProject: Handler = (context) => {
  const project = projectFor(context);
  guardRole(context, project);
  startPause(context.state, project, context.now, context.durations, context.faults.lifecycleFails('pause'));
  return ok({});
};

export const restoreProject: Handler = (context) => {
  const project = projectFor(context);
  guardRole(context, project);
  startRestore(context.state, project, context.now, context.durations, context.faults.lifecycleFails('restore'));
  return ok({});
};

export const cancelRestoration: Handler = (context) => {
  const project = projectFor(context);
  guardRole(context, project);
  cancelRestore(project);
  return ok({});
};

function guardRole(context: HandlerContext, project: ProjectRecord): void {
  const role = context.state.memberRole(context.state.organizations.get(project.orgSlug)!, context.user!.id);
  if (role === 'Read-only') throw forbidden('Forbidden: your role in the organization (Read-only) cannot change this project');
}

export const listRestoreVersions: Handler = (context) => {
  const project = projectFor(context);
  const engine = project.database.postgresEngine.startsWith('17') ? '17' : project.database.postgresEngine;
  const available_versions =
    project.status === 'INACTIVE' ? [{ version: project.database.version, release_channel: project.database.releaseChannel, postgres_engine: engine }] : [];
  return ok({ available_versions });
};

const SERVICE_INFO: Partial<Record<ServiceName, unknown>> = {
  auth: { name: 'auth', version: '2.170.0', description: 'Authentication service' },
  storage: { name: 'storage', version: '1.19.1', description: 'Object storage service' },
  rest: { db_schema: 'public' },
};

export const servicesHealth: Handler = (context) => {
  const project = projectFor(context);
  const requested = context.query.services as ServiceName[] | undefined;
  if (!requested || requested.length === 0) throw badRequest('`services` query parameter is required');
  const unique = [...new Set(requested)].filter((s) => (SERVICES as readonly string[]).includes(s));
  return ok(
    unique.map((name) => {
      const status = serviceStatus(project, name, context.now);
      const item: Record<string, unknown> = { name, healthy: status === 'ACTIVE_HEALTHY', status };
      if (status === 'ACTIVE_HEALTHY') {
        if (name === 'realtime') item.info = { healthy: true, db_connected: true, replication_connected: true, connected_cluster: 1 };
        else if (SERVICE_INFO[name]) item.info = SERVICE_INFO[name];
      } else if (status === 'UNHEALTHY') {
        item.error = `project is ${project.status}`;
      }
      return item;
    }),
  );
};
