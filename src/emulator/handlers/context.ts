import type { IncomingHttpHeaders } from 'node:http';
import type { LifecycleDurations } from '../durations.js';
import { badRequest, EmulatorHttpError, forbidden, notFound, serverError } from '../errors.js';
import type { MultipartPart } from '../body.js';
import type { EmulatorState, OrganizationRecord, ProjectRecord, ServiceName, UserRecord } from '../state.js';
import type { FaultInjector } from '../faults.js';
import type { ProjectDatabases } from '../databases.js';
import type { RequestLogEntry } from '../request-log.js';

export interface HandlerContext {
  state: EmulatorState;
  durations: LifecycleDurations;
  /** Emulator-clock time of this request (lifecycles). */
  now: number;
  /** Wall-clock time of this request (token expiry). */
  wallNow: number;
  method: string;
  route: string;
  params: Record<string, string>;
  /** Query parameters coerced to their schema types. */
  query: Record<string, unknown>;
  /** Parsed and validated body (JSON, form fields or, for multipart, undefined). */
  body: unknown;
  parts?: MultipartPart[];
  headers: IncomingHttpHeaders;
  /** The caller (absent on the OAuth endpoints, which authenticate clients themselves). */
  user?: UserRecord;
  /** Lifecycle failures configured through /_emulator/faults. */
  faults: FaultInjector;
  /** Each project's Postgres (PGlite), created on its first query. */
  databases: ProjectDatabases;
  /** Adds what the handler knows to the request's log entry (a query's read-only transaction). */
  annotate?(fields: Pick<RequestLogEntry, 'sql'>): void;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A non-JSON body. */
  raw?: { contentType: string; bytes: Buffer };
}

export type Handler = (context: HandlerContext) => HandlerResult | Promise<HandlerResult>;

export const ok = (body: unknown = {}, status = 200): HandlerResult => ({ status, body });
export const created = (body: unknown = {}): HandlerResult => ({ status: 201, body });

export function requireUser(context: HandlerContext): UserRecord {
  if (!context.user) throw new EmulatorHttpError(401, 'Unauthorized');
  return context.user;
}

const WRITE_ROLES_DENIED = new Set(['Read-only']);

export function organizationFor(context: HandlerContext, slug: string): OrganizationRecord {
  const user = requireUser(context);
  const org = context.state.organizations.get(slug);
  if (!org) throw notFound(`Organization ${slug} not found`);
  if (!context.state.memberRole(org, user.id)) throw forbidden();
  return org;
}

/** States in which a project's configuration cannot be written at all: a client error. */
const WRITE_REFUSED: Partial<Record<string, string>> = {
  INACTIVE: 'is paused; restore it before changing its configuration',
  PAUSING: 'is pausing; restore it once paused before changing its configuration',
  PAUSE_FAILED: 'failed to pause; it cannot be configured in this state',
  UPGRADING: 'is being upgraded; wait until the upgrade completes',
  GOING_DOWN: 'is being removed',
  REMOVED: 'has been removed',
  INIT_FAILED: 'failed to initialize',
  RESTORE_FAILED: 'failed to restore',
};

interface ProjectAccess {
  /** The request changes the project: refused for read-only members and in states that forbid it. */
  write?: boolean;
  /** The backing service; while it is not healthy the service answers 500. */
  service?: ServiceName;
}

export function serviceStatus(project: ProjectRecord, service: ServiceName, now: number): 'COMING_UP' | 'ACTIVE_HEALTHY' | 'UNHEALTHY' {
  switch (project.status) {
    case 'ACTIVE_HEALTHY':
    case 'ACTIVE_UNHEALTHY':
      return now >= project.serviceReadyAt[service] ? 'ACTIVE_HEALTHY' : 'COMING_UP';
    case 'COMING_UP':
    case 'RESTORING':
    case 'RESTARTING':
    case 'RESIZING':
      return 'COMING_UP';
    default:
      return 'UNHEALTHY';
  }
}

/** Looks a project up for the caller: 404 when unknown or deleted, 403 when not a member. */
export function projectFor(context: HandlerContext, access: ProjectAccess = {}, ref = context.params.ref!): ProjectRecord {
  const user = requireUser(context);
  const project = context.state.projects.get(ref);
  if (!project) throw notFound(`Project ${ref} not found`);
  const org = context.state.organizations.get(project.orgSlug);
  const role = org ? context.state.memberRole(org, user.id) : undefined;
  if (!role) throw forbidden();
  if (access.write && WRITE_ROLES_DENIED.has(role)) throw forbidden('Forbidden: your role in the organization (Read-only) cannot change this project');
  if (access.write) {
    const refused = WRITE_REFUSED[project.status];
    if (refused) throw badRequest(`Project ${project.ref} ${refused}`);
  }
  if (access.service && project.status !== 'INACTIVE' && serviceStatus(project, access.service, context.now) !== 'ACTIVE_HEALTHY') {
    throw serverError(`Failed to reach the ${access.service} service of project ${project.ref}: it is not healthy yet`);
  }
  return project;
}

/** Whether the caller's role lets them change this project (every role but Read-only). */
export function canWrite(context: HandlerContext, project: ProjectRecord): boolean {
  const org = context.state.organizations.get(project.orgSlug);
  const role = org ? context.state.memberRole(org, requireUser(context).id) : undefined;
  return role !== undefined && !WRITE_ROLES_DENIED.has(role);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
