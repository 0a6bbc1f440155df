import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './body.js';
import { validateFaultConfig, type FaultConfig } from './faults.js';
import type { RequestLogEntry } from './request-log.js';
import { MEMBER_ROLES, type EmulatorState, type MemberRole } from './state.js';
import type { RequestTarget } from './request-target.js';
import type { SeedInput } from './seed.js';

/** What the administration API works on: the emulator (src/emulator/emulator.ts implements it). */
export interface AdminTarget {
  readonly state: EmulatorState;
  now(): number;
  advanceClock(ms: number): void;
  advanceUntilIdle(): void;
  requests(since?: number): RequestLogEntry[];
  clearRequests(): void;
  setFaults(config: FaultConfig): void;
  faultConfig(): FaultConfig;
  reset(): void;
  seed(seed: SeedInput): void;
  info(): Record<string, unknown>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(payload.length) });
  res.end(payload);
}

async function jsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const read = await readBody(req, limit);
  if (read.tooLarge) throw new AdminError(413, `Request body too large: the limit is ${limit} bytes`);
  if (read.bytes.length === 0) return {};
  try {
    return JSON.parse(read.bytes.toString('utf8'));
  } catch (error) {
    throw new AdminError(400, `Malformed JSON in request body: ${(error as Error).message}`);
  }
}

class AdminError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * The administration API under /_emulator/: no auth, no rate limit, not in the request log.
 * Documented in docs/emulator.md.
 */
export async function handleAdmin(emulator: AdminTarget, req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const path = url.pathname.replace(/\/+$/, '');
  const key = `${method} ${path}`;
  try {
    const membership = method === 'POST' ? /^\/_emulator\/organizations\/([^/]+)\/members$/.exec(path) : null;
    if (membership) return json(res, 200, addMember(emulator, decodeURIComponent(membership[1]!), await jsonBody(req, 1024)));
    switch (key) {
      case 'GET /_emulator/requests': {
        await readBody(req, 0);
        const since = url.searchParams.get('since');
        const sinceMs = since === null ? undefined : Number(since);
        if (sinceMs !== undefined && !Number.isFinite(sinceMs)) throw new AdminError(400, `Invalid \`since\`: expected milliseconds since the epoch, got \`${since}\``);
        return json(res, 200, emulator.requests(sinceMs));
      }
      case 'DELETE /_emulator/requests':
        await readBody(req, 0);
        emulator.clearRequests();
        return json(res, 200, {});
      case 'GET /_emulator/faults':
        await readBody(req, 0);
        return json(res, 200, emulator.faultConfig());
      case 'POST /_emulator/faults': {
        const body = await jsonBody(req, 1024 * 1024);
        let config;
        try {
          config = validateFaultConfig(body);
        } catch (error) {
          throw new AdminError(400, (error as Error).message);
        }
        emulator.setFaults(config);
        return json(res, 200, emulator.faultConfig());
      }
      case 'DELETE /_emulator/faults':
        await readBody(req, 0);
        emulator.setFaults({});
        return json(res, 200, {});
      case 'POST /_emulator/reset':
        await readBody(req, 1024);
        emulator.reset();
        return json(res, 200, emulator.info());
      case 'POST /_emulator/seed': {
        const body = await jsonBody(req, 64 * 1024 * 1024);
        try {
          emulator.seed(body as never);
        } catch (error) {
          throw new AdminError(400, (error as Error).message);
        }
        return json(res, 200, emulator.info());
      }
      case 'POST /_emulator/clock/advance': {
        const body = (await jsonBody(req, 1024)) as { ms?: unknown; untilIdle?: unknown };
        if (body.untilIdle === true) {
          emulator.advanceUntilIdle();
          return json(res, 200, { now: emulator.now() });
        }
        if (typeof body.ms !== 'number' || !Number.isFinite(body.ms) || body.ms < 0) {
          throw new AdminError(400, `Expected \`ms\` to be a number >= 0 (or \`untilIdle: true\`), got \`${String(body.ms)}\``);
        }
        emulator.advanceClock(body.ms);
        return json(res, 200, { now: emulator.now() });
      }
      case 'GET /_emulator/info':
        await readBody(req, 0);
        return json(res, 200, emulator.info());
      default:
        await readBody(req, 1024 * 1024);
        throw new AdminError(404, `Not found: no admin endpoint ${method} ${url.pathname}`);
    }
  } catch (error) {
    if (error instanceof AdminError) return json(res, error.status, { message: error.message });
    return json(res, 500, { message: `Internal emulator error: ${(error as Error).message}` });
  }
}

/**
 * Makes a user a member of an organization (or changes its role), as an invitation accepted in
 * the platform's dashboard does: the Management API has no call for it.
 */
function addMember(emulator: AdminTarget, slug: string, body: unknown): unknown {
  const { user, role = 'Owner' } = (body ?? {}) as { user?: unknown; role?: unknown };
  const org = emulator.state.organizations.get(slug);
  if (!org) throw new AdminError(404, `Not found: no organization with slug \`${slug}\``);
  if (typeof role !== 'string' || !MEMBER_ROLES.includes(role as MemberRole)) throw new AdminError(400, `Expected \`role\` to be one of ${MEMBER_ROLES.join(', ')}`);
  const found = typeof user === 'string' ? [...emulator.state.users.values()].find((u) => u.id === user || u.email === user) : undefined;
  if (!found) throw new AdminError(400, `Expected \`user\` to be the id or email of a user, got \`${String(user)}\``);
  const member = org.members.find((m) => m.userId === found.id);
  if (member) member.role = role as MemberRole;
  else org.members.push({ userId: found.id, role: role as MemberRole });
  return { slug: org.slug, members: org.members.map((m) => ({ user_id: m.userId, role_name: m.role })) };
}
