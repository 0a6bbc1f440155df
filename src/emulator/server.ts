import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../util/clock.js';
import { buildMultipart, mediaType, parseFormBody, parseJsonBody, parseMultipart, readBody, type MultipartPart } from './body.js';
import { EmulatorHttpError } from './errors.js';
import { FaultInjector } from './faults.js';
import type { ProjectDatabases } from './databases.js';
import { componentSchema, describeErrors, validatorFor, type SpecOperation } from './openapi.js';
import { parseQuery } from './query.js';
import { RateLimiter, RouteLimiter, rateLimitHeaders, type RateBucket, type RateDecision } from './rate-limiter.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { parseRequestTarget, type RequestTarget } from './request-target.js';
import { Router, type RouteMatch } from './router.js';
import type { LifecycleDurations } from './durations.js';
import type { EmulatorState, UserRecord } from './state.js';
import type { Handler, HandlerContext, HandlerResult } from './handlers/context.js';

/** Operations that authenticate an OAuth client themselves (no bearer token). */
const CLIENT_AUTHENTICATED = new Set(['v1-exchange-oauth-token', 'v1-revoke-token']);
/** Operations where a bearer token is optional: without one, the default user approves. */
const OPTIONAL_AUTH = new Set(['v1-authorize-user']);

export interface EmulatorCore {
  state: EmulatorState;
  durations: LifecycleDurations;
  limiter: RateLimiter;
  routeLimiter: RouteLimiter;
  faults: FaultInjector;
  databases: ProjectDatabases;
  log: RequestLog;
  router: Router;
  /** Emulator (lifecycle) time. */
  now(): number;
  wallClock: Clock;
  bodyLimitBytes: number;
  deployBodyLimitBytes: number;
  admin(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<void>;
  /** One handler per operationId. */
  handlers: Record<string, Handler>;
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  entry: Omit<RequestLogEntry, 'seq'>;
  rate?: RateDecision;
}

function send(exchange: Exchange, core: EmulatorCore, result: HandlerResult): void {
  const { res } = exchange;
  const rate = exchange.rate ?? core.limiter.peek(exchange.entry.user, core.wallClock.now());
  const headers: Record<string, string> = { ...rateLimitHeaders(rate), ...(result.headers ?? {}) };
  let payload: Buffer | undefined;
  if (result.raw) {
    headers['content-type'] = result.raw.contentType;
    payload = result.raw.bytes;
  } else if (result.body !== undefined && result.status !== 204 && result.status !== 304) {
    headers['content-type'] = 'application/json; charset=utf-8';
    payload = Buffer.from(JSON.stringify(result.body), 'utf8');
  }
  if (payload) headers['content-length'] = String(payload.length);
  else headers['content-length'] = '0';
  exchange.entry.status = result.status;
  core.log.add(exchange.entry);
  if (res.destroyed) return;
  res.writeHead(result.status, headers);
  res.end(payload);
}

function errorResult(error: EmulatorHttpError): HandlerResult {
  return { status: error.status, body: { message: error.message }, headers: error.headers };
}

function authenticate(core: EmulatorCore, header: string | undefined): UserRecord | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const token = core.state.tokens.get(match[1]!);
  if (!token) return undefined;
  if (token.expiresAt !== undefined && token.expiresAt <= core.wallClock.now()) return undefined;
  if (token.grantId && core.state.oauthGrants.get(token.grantId)?.revoked) return undefined;
  return core.state.users.get(token.userId);
}

async function parseRequestBody(operation: SpecOperation, req: IncomingMessage, bytes: Buffer): Promise<{ body: unknown; parts?: MultipartPart[] }> {
  const requestBody = operation.operation.requestBody;
  if (!requestBody) return { body: undefined };
  const accepted = Object.keys(requestBody.content);
  const contentType = req.headers['content-type'];
  const media = mediaType(contentType);
  const primary = accepted[0]!;
  const schema = requestBody.content[primary]!.schema;
  const resolved = resolveRef(schema);
  if (bytes.length === 0) {
    if (primary === 'multipart/form-data') throw new EmulatorHttpError(400, 'Request body is required: expected multipart/form-data with a `metadata` part');
    if (resolved.type === 'array') throw new EmulatorHttpError(400, 'Request body is required: expected a JSON array');
    return { body: validateBody(schema, {}) };
  }
  if (!accepted.includes(media)) {
    throw new EmulatorHttpError(415, `Unsupported Content-Type \`${media || '(none)'}\`: this endpoint takes ${accepted.join(' or ')}`);
  }
  if (media === 'application/json') return { body: validateBody(schema, parseJsonBody(bytes)) };
  if (media === 'application/x-www-form-urlencoded') return { body: validateBody(schema, parseFormBody(bytes)) };
  const parts = await parseMultipart(bytes, contentType!);
  const metadataPart = parts.find((p) => p.name === 'metadata');
  if (!metadataPart) throw new EmulatorHttpError(400, 'Invalid request body: the `metadata` part is required');
  let metadata: unknown;
  try {
    metadata = JSON.parse(metadataPart.content.toString('utf8'));
  } catch (error) {
    throw new EmulatorHttpError(400, `Malformed JSON in the \`metadata\` part: ${(error as Error).message}`);
  }
  const metadataSchema = (resolved.properties as Record<string, Record<string, unknown>>).metadata!;
  const validate = validatorFor(metadataSchema);
  if (!validate(metadata)) throw new EmulatorHttpError(400, describeErrors(validate.errors, 'metadata').replace('Invalid metadata: `', 'Invalid metadata: `metadata.'));
  return { body: metadata, parts: parts.filter((p) => p.name !== 'metadata') };
}

function resolveRef(schema: Record<string, unknown>): Record<string, unknown> {
  const ref = schema.$ref;
  return typeof ref === 'string' ? componentSchema(ref.split('/').pop()!) : schema;
}

function validateBody(schema: Record<string, unknown>, value: unknown): unknown {
  const validate = validatorFor(schema);
  if (!validate(value)) throw new EmulatorHttpError(400, describeErrors(validate.errors, 'request body'));
  return value;
}

/** Serves one request: admin, routing, body limit, auth, rate limit, faults, validation, handler. */
async function handleRequest(core: EmulatorCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const arrived = core.wallClock.now();
  const method = (req.method ?? 'GET').toUpperCase();
  let url: RequestTarget;
  let refused: EmulatorHttpError | undefined;
  try {
    url = parseRequestTarget(req.url ?? '/');
  } catch (error) {
    if (!(error instanceof EmulatorHttpError)) throw error;
    refused = error;
    url = { pathname: req.url ?? '/', searchParams: new URLSearchParams(), admin: false };
  }
  if (url.admin) {
    await core.admin(req, res, url);
    return;
  }
  const match: RouteMatch = refused ? { kind: 'not-found' } : core.router.match(method, url.pathname);
  const route = match.kind === 'operation' ? match.operation.route : match.kind === 'method-not-allowed' ? match.route : '(unmatched)';
  const exchange: Exchange = { req, res, entry: { time: arrived, method, path: url.pathname, route, status: 0 } };
  const isDeploy = match.kind === 'operation' && match.operation.operationId === 'v1-deploy-a-function';
  const limit = isDeploy ? core.deployBodyLimitBytes : core.bodyLimitBytes;
  const read = await readBody(req, limit);
  if (read.aborted && !read.tooLarge) {
    core.log.add(exchange.entry);
    return;
  }
  try {
    if (refused) throw refused;
    if (match.kind === 'not-found') throw new EmulatorHttpError(404, `Not found: no endpoint matches ${method} ${url.pathname}`);
    if (match.kind === 'method-not-allowed') {
      throw new EmulatorHttpError(405, `Method ${method} is not allowed on ${match.route}; allowed: ${match.allowed.join(', ')}`, { allow: match.allowed.join(', ') });
    }
    if (read.tooLarge) {
      throw new EmulatorHttpError(413, `Request body too large: the limit for ${match.operation.route} is ${limit} bytes`, { connection: 'close' });
    }
    const { operation, params } = match;
    let user: UserRecord | undefined;
    let bucket: RateBucket | undefined;
    if (!CLIENT_AUTHENTICATED.has(operation.operationId)) {
      user = authenticate(core, req.headers.authorization);
      if (!user && OPTIONAL_AUTH.has(operation.operationId) && !req.headers.authorization) user = core.state.users.get(core.state.defaultUserId);
      if (!user) throw new EmulatorHttpError(401, 'Unauthorized');
      exchange.entry.user = user.id;
      const wallNow = core.wallClock.now();
      bucket = core.limiter.bucket(user.id, method, operation.route, params);
      exchange.rate = core.limiter.take(user.id, wallNow, bucket);
      if (!exchange.rate.allowed) throw new EmulatorHttpError(429, 'Too many requests: the rate limit of this user is exceeded; retry after the reset');
      // The scoped model's counts already hold the stricter routes' limits.
      if (core.limiter.model === 'user' && !core.routeLimiter.take(user.id, method, operation.route, wallNow)) {
        throw new EmulatorHttpError(429, `Too many requests: ${method} ${operation.route} has a stricter limit of its own; retry later`);
      }
    }

    const fault = core.faults.decide(method, operation.route);
    if (fault.latencyMs > 0) await core.wallClock.sleep(fault.latencyMs);
    if (fault.outcome) exchange.entry.fault = fault.outcome;
    switch (fault.outcome) {
      case 'reset':
        core.log.add(exchange.entry);
        destroySocket(req.socket);
        return;
      case 'timeout':
        // Hold the socket: the client sees no answer until it gives up (or the emulator closes).
        core.log.add(exchange.entry);
        return;
      case 'error':
        throw new EmulatorHttpError(fault.errorStatus, 'Internal server error');
      case 'rate-limit':
        if (user) {
          core.limiter.block(user.id, core.wallClock.now());
          exchange.rate = core.limiter.peek(user.id, core.wallClock.now(), bucket);
        }
        throw new EmulatorHttpError(429, 'Too many requests: the rate limit of this user is exceeded; retry after the reset');
      default:
        break;
    }

    const now = core.now();
    core.state.settle(now);
    // As in the service, access is checked before the input: a stranger learns 403/404, not 400.
    if (user) guardAccess(core.state, user, params);
    const query = parseQuery(operation.operation.parameters, url.searchParams);
    const { body, parts } = await parseRequestBody(operation, req, read.bytes);
    const handler = core.handlers[operation.operationId];
    if (!handler) throw new EmulatorHttpError(501, `The emulator does not implement ${operation.operationId}`);
    const context: HandlerContext = {
      state: core.state, durations: core.durations, now, wallNow: core.wallClock.now(), method, route: operation.route,
      params, query, body, parts, headers: req.headers, user, faults: core.faults, databases: core.databases,
      annotate: (fields) => Object.assign(exchange.entry, fields),
    };
    const result = await handler(context);
    if (fault.outcome === 'lost-answer') {
      // The write is applied; the client only sees its connection reset.
      exchange.entry.status = result.status;
      core.log.add(exchange.entry);
      destroySocket(req.socket);
      return;
    }
    send(exchange, core, result);
  } catch (error) {
    if (error instanceof EmulatorHttpError) {
      send(exchange, core, errorResult(error));
      if (error.status === 413) res.once('finish', () => req.socket.destroySoon?.());
      return;
    }
    send(exchange, core, { status: 500, body: { message: `Internal emulator error: ${(error as Error).message}` } });
  }
}

/** 404 for an unknown project, branch or organization in the path; 403 when the user is not a member. */
function guardAccess(state: EmulatorState, user: UserRecord, params: Record<string, string>): void {
  let orgSlug: string | undefined;
  if (params.branch_id !== undefined) {
    const branch = state.branches.get(params.branch_id);
    if (!branch) throw new EmulatorHttpError(404, `Branch ${params.branch_id} not found`);
    orgSlug = state.projects.get(branch.parentRef)?.orgSlug;
  } else if (params.ref !== undefined) {
    const project = state.projects.get(params.ref);
    if (!project) throw new EmulatorHttpError(404, `Project ${params.ref} not found`);
    orgSlug = project.orgSlug;
  } else if (params.slug !== undefined) {
    if (!state.organizations.has(params.slug)) throw new EmulatorHttpError(404, `Organization ${params.slug} not found`);
    orgSlug = params.slug;
  } else {
    return;
  }
  const org = orgSlug === undefined ? undefined : state.organizations.get(orgSlug);
  if (!org || !state.memberRole(org, user.id)) throw new EmulatorHttpError(403, 'Forbidden: you are not a member of the organization that owns this resource');
}

function destroySocket(socket: Socket): void {
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

export { buildMultipart };

export function createHttpServer(core: EmulatorCore): Server {
  const server = createServer({ keepAliveTimeout: 5_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
    handleRequest(core, req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ message: `Internal emulator error: ${(error as Error).message}` }));
      }
    });
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"message":"Malformed HTTP request"}');
    else socket.destroy();
  });
  return server;
}
