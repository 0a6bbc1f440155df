// On-demand passes over the daemon's HTTP server: `POST /reconcile` (a bearer token),
// `POST /approve` and `POST /resume` (the same token: a rollout's approvals and resumes),
// `POST /reconcile/webhook` (git host push webhooks, signed) and `POST /reconcile/source`
// (git-sync's --webhook-url: re-read the checkout now). Tokens and signatures are compared
// in constant time; bodies are bounded; nothing from a request reaches a log but its shape.
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Logger } from '../reconcile/types.js';
import { listUnknown } from '../manifests/suggest.js';
import type { ApproveAnswer, ApproveRequest, PassRequest, PassRequestAnswer } from './controller.js';
import type { ResumeAnswer } from '../reconcile/rollout/records.js';
import type { BodySink, PostAnswer, PostRequest, PostRoute } from './http-server.js';

const RECONCILE_PATH = '/reconcile';
const WEBHOOK_PATH = '/reconcile/webhook';
const SOURCE_PATH = '/reconcile/source';
const APPROVE_PATH = '/approve';
const RESUME_PATH = '/resume';

const MAX_REQUEST_BYTES = 16 * 1024;
/** GitHub caps push payloads at 25 MB; the reconciler reads only `after`, and big pushes list many commits. */
const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;
/** What is kept of a webhook body (the rest is only hashed): the fields read sit at its start. */
const WEBHOOK_KEEP_BYTES = 128 * 1024;
/** Webhook bodies read at once; more answer 503 unread (a git host retries). */
const MAX_CONCURRENT_WEBHOOKS = 4;
/** Unauthenticated `/reconcile/source` requests handled at once. */
const MAX_CONCURRENT_SOURCE = 4;
/** A generic webhook's signed timestamp may differ from the daemon's clock by this much. */
export const WEBHOOK_TOLERANCE_MS = 5 * 60_000;
/** How long a delivery is remembered to recognise it replayed (GitHub, GitLab: no signed time). */
const DELIVERY_MEMORY_MS = 24 * 60 * 60_000;
const MAX_DELIVERIES = 10_000;
const MAX_PROJECTS = 1_000;
const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const COMMIT = /^[0-9a-f]{7,64}$/i;
const NO_COMMIT = /^0+$/;

interface TriggerTarget {
  requestPass(request: PassRequest): Promise<PassRequestAnswer>;
  /** Reads the checkout now (no debounce). */
  reload(): Promise<void>;
  approve?(request: ApproveRequest): Promise<ApproveAnswer>;
  resume?(request: { rollout?: string; revision?: string; by: string }): Promise<ResumeAnswer | { status: 'not-ready' }>;
}

export interface TriggerSettings {
  /** ms since the epoch, for the generic webhook's timestamp (default Date.now). */
  now?: () => number;
  /** Enables `POST /reconcile` (and `/reconcile/source`): the bearer token's file, re-read per request. */
  tokenFile?: string;
  /** Enables `POST /reconcile/webhook`: the file with the webhook secret, re-read per request. */
  webhookSecretFile?: string;
}

/** Equal strings, in time that does not depend on where they differ (nor on the expected length). */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

export async function readSecretFile(path: string): Promise<string | undefined> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? undefined : text;
  } catch {
    return undefined;
  }
}

function header(request: PostRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(status: number, body: unknown, headers?: Record<string, string>): PostAnswer {
  return { status, body, ...(headers ? { headers } : {}) };
}

function answerFor(answer: PassRequestAnswer): PostAnswer {
  switch (answer.status) {
    case 'started':
    case 'waiting':
      return json(202, answer);
    case 'current':
      return json(200, answer);
    case 'recent':
      // The pass that answers it; nothing started. Retry-After: when the next may start.
      return json(200, answer, { 'retry-after': String(answer.retryAfterSeconds) });
    case 'unknown-projects':
      return json(404, { status: answer.status, message: `no Project manifest named ${listUnknown(answer.projects, answer.known)}`, projects: answer.projects });
    case 'not-ready':
      return json(503, { status: answer.status, message: 'no manifests loaded yet, or shutting down' });
  }
}

/** Project names from `?project=a&project=b` or a JSON body `{"projects": [...]}`; a message when malformed. */
function requestedProjects(request: PostRequest): string[] | undefined | { error: string } {
  const fromQuery = request.query.getAll('project').flatMap((value) => value.split(',')).filter(Boolean);
  let fromBody: unknown[] = [];
  if (request.body.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body.toString('utf8'));
    } catch {
      return { error: 'the body is not JSON' };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'the body must be a JSON object such as {"projects": ["shop"]}' };
    const projects = (parsed as { projects?: unknown }).projects;
    if (projects !== undefined) {
      if (!Array.isArray(projects)) return { error: '`projects` must be an array of Project manifest names' };
      fromBody = projects;
    }
  }
  const all = [...fromQuery, ...fromBody];
  if (all.length === 0) return undefined;
  if (all.length > MAX_PROJECTS) return { error: `at most ${MAX_PROJECTS} projects per request` };
  const bad = all.find((name) => typeof name !== 'string' || !PROJECT_NAME.test(name));
  if (bad !== undefined) return { error: 'a project name must be a Project manifest name (letters, digits, `.`, `_`, `-`)' };
  return [...new Set(all as string[])];
}

type Provider = 'github' | 'gitlab' | 'generic';

/** The webhook body's digests, computed as it streams in. */
class WebhookSink implements BodySink {
  readonly hmac: Hmac;
  readonly hash: Hash = createHash('sha256');
  constructor(
    readonly provider: Provider,
    readonly given: string,
    secret: string,
    prefix: string,
  ) {
    this.hmac = createHmac('sha256', secret).update(prefix);
  }
  update(chunk: Buffer): void {
    this.hmac.update(chunk);
    this.hash.update(chunk);
  }
}

/**
 * Checks what can be checked before the body is read: a signature header is present, GitLab's
 * token, the generic form's timestamp. GitHub: `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the
 * body>`; GitLab: `X-Gitlab-Token` equal to the secret; anything else:
 * `X-Reconciler-Signature-256: sha256=<HMAC-SHA256 of "<timestamp>.<body>">` with
 * `X-Reconciler-Timestamp: <unix seconds>` within WEBHOOK_TOLERANCE_MS of the daemon's clock.
 */
function openWebhook(headers: PostRequest['headers'], secret: string, now: number): WebhookSink | { status: 401 | 403; message: string } {
  const get = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const github = get('x-hub-signature-256');
  if (github !== undefined) return new WebhookSink('github', github, secret, '');
  const gitlab = get('x-gitlab-token');
  if (gitlab !== undefined) {
    return constantTimeEqual(gitlab, secret) ? new WebhookSink('gitlab', '', secret, '') : { status: 403, message: 'the token does not match' };
  }
  const generic = get('x-reconciler-signature-256');
  if (generic !== undefined) {
    const timestamp = get('x-reconciler-timestamp');
    if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp.trim())) {
      return { status: 401, message: 'a signed timestamp is required: X-Reconciler-Timestamp (unix seconds), signed as "<timestamp>.<body>"' };
    }
    const at = Number(timestamp.trim()) * 1000;
    if (Math.abs(now - at) > WEBHOOK_TOLERANCE_MS) {
      return { status: 403, message: `the timestamp is more than ${WEBHOOK_TOLERANCE_MS / 60_000} minutes away from the daemon's clock` };
    }
    return new WebhookSink('generic', generic, secret, `${timestamp.trim()}.`);
  }
  return { status: 401, message: 'a signature is required (X-Hub-Signature-256, X-Gitlab-Token or X-Reconciler-Signature-256)' };
}

/** Verified deliveries recently seen, by delivery id and by signed content: a replay is recognised. */
class DeliveryMemory {
  readonly #seen = new Map<string, number>();
  /** True when any of the keys was seen (and not forgotten); records them all. */
  check(keys: string[], now: number): boolean {
    for (const [key, until] of this.#seen) {
      if (until > now) break;
      this.#seen.delete(key);
    }
    const seen = keys.some((key) => (this.#seen.get(key) ?? 0) > now);
    for (const key of keys) {
      this.#seen.delete(key);
      this.#seen.set(key, now + DELIVERY_MEMORY_MS);
    }
    while (this.#seen.size > MAX_DELIVERIES) this.#seen.delete(this.#seen.keys().next().value!);
    return seen;
  }
}

/** Delivery ids the git hosts send (and the generic form may): GitHub, GitLab, and common names. */
const DELIVERY_HEADERS = ['x-github-delivery', 'x-gitlab-event-uuid', 'x-gitlab-webhook-uuid', 'idempotency-key', 'x-reconciler-delivery'];

/** A push's commit from the head of a body too long to keep: top-level `after` or `revision` before any nested value. */
function commitFromHead(head: string): string | undefined {
  const match = /^\s*\{(?:\s*"(?:[^"\\]|\\.)*"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-\w.+]+)\s*,)*?\s*"(?:after|revision)"\s*:\s*"([0-9a-fA-F]{7,64})"/.exec(head);
  return match?.[1];
}

/** The JSON body as an object (empty body: `{}`), or a message. */
function bodyObject(request: PostRequest): Record<string, unknown> | { error: string } {
  if (request.body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.body.toString('utf8'));
  } catch {
    return { error: 'the body is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'the body must be a JSON object' };
  return parsed as Record<string, unknown>;
}

function approveAnswer(answer: ApproveAnswer): PostAnswer {
  switch (answer.status) {
    case 'approved':
      return json(202, answer);
    case 'stale-revision':
      return json(409, { ...answer, message: `revision ${answer.revision} is not the current revision ${answer.current.slice(0, 12)}: an approval expires with its revision, nothing was approved` });
    case 'unknown-projects':
      return json(404, { status: answer.status, message: `no Project manifest named ${listUnknown(answer.projects, answer.known)}`, projects: answer.projects });
    case 'no-rollout':
      return json(409, { status: answer.status, message: 'the manifests have no Rollout document: nothing waits for an approval' });
    case 'not-ready':
      return json(503, { status: answer.status, message: 'no manifests loaded yet, or shutting down' });
  }
}

function resumeAnswer(answer: ResumeAnswer | { status: 'not-ready' }): PostAnswer {
  switch (answer.status) {
    case 'resumed':
      return json(202, answer);
    case 'not-halted':
      return json(409, { ...answer, message: `rollout ${answer.rollout} is not halted` });
    case 'stale-revision':
      return json(409, { ...answer, message: `rollout ${answer.rollout} is halted at revision ${answer.halted.startsWith('content-') ? answer.halted : answer.halted.slice(0, 12)}, not ${answer.revision}: nothing was resumed` });
    case 'unknown-rollout':
      return json(404, { ...answer, message: answer.rollout ? `no Rollout document named ${answer.rollout}` : 'the manifests have no Rollout document' });
    case 'not-ready':
      return json(503, { status: answer.status, message: 'no manifests loaded yet, or shutting down' });
  }
}

export function triggerRoutes(target: TriggerTarget, settings: TriggerSettings, log: Logger): Record<string, PostRoute> {
  const routes: Record<string, PostRoute> = {};
  const { tokenFile, webhookSecretFile } = settings;
  if (tokenFile) {
    const refused = bearerCheck(tokenFile, log);
    // The token's name, recorded with an approval or a resume: the token file's name.
    const by = basename(tokenFile);
    if (target.approve) routes[APPROVE_PATH] = approveRoute(target.approve.bind(target), refused, by, log);
    if (target.resume) routes[RESUME_PATH] = resumeRoute(target.resume.bind(target), refused, by, log);
    routes[RECONCILE_PATH] = reconcileRoute(target, refused, log);
    routes[SOURCE_PATH] = sourceRoute(target, log);
  }
  if (webhookSecretFile) routes[WEBHOOK_PATH] = webhookRoute(target, webhookSecretFile, settings.now ?? Date.now, log);
  return routes;
}

/** The bearer check of `POST /reconcile`, `/approve` and `/resume`: an answer when refused. */
type BearerCheck = (request: Pick<PostRequest, 'headers'>, path: string) => Promise<PostAnswer | undefined>;

/** Checks a request's bearer token against the token file, read again for each request. */
function bearerCheck(tokenFile: string, log: Logger): BearerCheck {
  return async (request, path) => {
    const token = await readSecretFile(tokenFile);
    if (token === undefined) {
      log.error({ file: tokenFile }, `the trigger token file cannot be read or is empty; refusing POST ${path}`);
      return json(503, { message: 'the trigger token is not available' });
    }
    const value = request.headers.authorization;
    const given = /^Bearer\s+(\S+)\s*$/i.exec((Array.isArray(value) ? value[0] : value) ?? '')?.[1];
    if (given === undefined || !constantTimeEqual(given, token)) {
      log.warn({ path, bearer: given !== undefined }, path === RECONCILE_PATH ? 'on-demand reconcile refused: no valid token' : `POST ${path} refused: no valid token`);
      return json(401, { message: 'a valid bearer token is required' }, { 'www-authenticate': 'Bearer realm="reconcile"' });
    }
    return undefined;
  };
}

/** `POST /approve`: approves a named revision for the projects asked (all without a list). */
function approveRoute(approve: NonNullable<TriggerTarget['approve']>, refused: BearerCheck, by: string, log: Logger): PostRoute {
  return {
    maxBodyBytes: MAX_REQUEST_BYTES,
    // The token is checked before the body is read.
    open: (request) => refused(request, APPROVE_PATH),
    async handle(request) {
      const body = bodyObject(request);
      if ('error' in body) return json(400, { message: body.error });
      const revision = body.revision ?? request.query.get('revision') ?? undefined;
      // An approval names the revision its reviewer saw: without one it would approve
      // whatever is current when the request arrives, a commit landed since included.
      if (revision === undefined) return json(400, { message: '`revision` is required: an approval names the revision it approves (the one the plan, `reconcile status` or the approval_needed notification shows)' });
      if (typeof revision !== 'string' || !/^[A-Za-z0-9._-]{1,80}$/.test(revision)) return json(400, { message: '`revision` must be a commit id (or the revision a plan shows)' });
      const projects = requestedProjects(request);
      if (projects && !Array.isArray(projects)) return json(400, { message: projects.error });
      const answer = await approve({ ...(revision !== undefined ? { revision: revision as string } : {}), ...(projects ? { projects } : {}), by });
      log.info({ source: 'request', revision, projects: projects ?? 'all', status: answer.status, by }, 'approval request');
      return approveAnswer(answer);
    },
  };
}

/** `POST /resume`: resumes a halted rollout, optionally named, at a named revision. */
function resumeRoute(resume: NonNullable<TriggerTarget['resume']>, refused: BearerCheck, by: string, log: Logger): PostRoute {
  return {
    maxBodyBytes: MAX_REQUEST_BYTES,
    // The token is checked before the body is read.
    open: (request) => refused(request, RESUME_PATH),
    async handle(request) {
      const body = bodyObject(request);
      if ('error' in body) return json(400, { message: body.error });
      const rollout = body.rollout ?? request.query.get('rollout') ?? undefined;
      if (rollout !== undefined && (typeof rollout !== 'string' || rollout === '' || rollout.length > 256)) return json(400, { message: '`rollout` must be the metadata.name of the Rollout document' });
      const revision = body.revision ?? request.query.get('revision') ?? undefined;
      if (revision !== undefined && (typeof revision !== 'string' || !/^[A-Za-z0-9._-]{1,80}$/.test(revision))) return json(400, { message: '`revision` must be a commit id (or the revision a plan shows)' });
      const answer = await resume({ ...(rollout !== undefined ? { rollout: rollout as string } : {}), ...(revision !== undefined ? { revision: revision as string } : {}), by });
      log.info({ source: 'request', rollout, revision, status: answer.status, by }, 'resume request');
      return resumeAnswer(answer);
    },
  };
}

/** `POST /reconcile`: asks for a pass over the projects named (all without a list). */
function reconcileRoute(target: TriggerTarget, refused: BearerCheck, log: Logger): PostRoute {
  return {
    maxBodyBytes: MAX_REQUEST_BYTES,
    // The token is checked before the body is read.
    open: (request) => refused(request, RECONCILE_PATH),
    async handle(request) {
      const projects = requestedProjects(request);
      if (projects && !Array.isArray(projects)) return json(400, { message: projects.error });
      const answer = await target.requestPass(projects ? { projects } : {});
      log.info({ trigger: 'manual', source: 'request', projects: projects ?? 'all', status: answer.status }, 'on-demand reconcile');
      return answerFor(answer);
    },
  };
}

/** `POST /reconcile/source`: git-sync's webhook, a pass for the commit it names or a read of the checkout now. */
function sourceRoute(target: TriggerTarget, log: Logger): PostRoute {
  return {
    maxBodyBytes: MAX_REQUEST_BYTES,
    keepBytes: 0,
    maxConcurrent: MAX_CONCURRENT_SOURCE,
    // No credentials: git-sync's webhook cannot send any. It takes no input but a commit id and
    // can only make the daemon read its own checkout sooner, as a file event would.
    async handle(request) {
      const hash = header(request, 'gitsync-hash');
      if (hash !== undefined && COMMIT.test(hash) && !NO_COMMIT.test(hash)) {
        const answer = await target.requestPass({ revision: hash.toLowerCase() });
        log.info({ trigger: 'revision', source: 'git-sync', revision: hash, status: answer.status }, 'checkout read on request');
        return answerFor(answer);
      }
      await target.reload();
      log.info({ trigger: 'revision', source: 'git-sync' }, 'checkout read on request');
      return json(202, { status: 'read' });
    },
  };
}

/** `POST /reconcile/webhook`: a git host's push (or a generic signed request), verified, once per delivery. */
function webhookRoute(target: TriggerTarget, webhookSecretFile: string, now: () => number, log: Logger): PostRoute {
  const deliveries = new DeliveryMemory();
  return {
    maxBodyBytes: MAX_WEBHOOK_BYTES,
    keepBytes: WEBHOOK_KEEP_BYTES,
    maxConcurrent: MAX_CONCURRENT_WEBHOOKS,
    // Nothing is read from an unauthenticated body but its digest: refusals come before it is read.
    async open(request) {
      const secret = await readSecretFile(webhookSecretFile);
      if (secret === undefined) {
        log.error({ file: webhookSecretFile }, 'the webhook secret file cannot be read or is empty; refusing webhooks');
        return json(503, { message: 'the webhook secret is not available' });
      }
      const opened = openWebhook(request.headers, secret, now());
      if (opened instanceof WebhookSink) return opened;
      log.warn({ path: WEBHOOK_PATH, status: opened.status }, 'webhook refused: bad or missing signature or timestamp');
      return json(opened.status, { message: opened.message });
    },
    async handle(request) {
      const sink = request.sink as WebhookSink;
      const refusal = webhookRefusal(request, sink, deliveries, now(), log);
      if (refusal) return refusal;
      const read = webhookPayload(request, sink);
      if ('answer' in read) return read.answer;
      return webhookPass(target, request, sink, read.payload, log);
    },
  };
}

/** What a webhook's verified body carries: a push's commit, or a generic request's projects. */
type WebhookPayload = { after?: unknown; revision?: unknown; projects?: unknown };

/** Refuses a webhook whose signature does not match, a delivery seen before, and events other than a push. */
function webhookRefusal(request: PostRequest, sink: WebhookSink, deliveries: DeliveryMemory, now: number, log: Logger): PostAnswer | undefined {
  const digest = sink.hash.digest('hex');
  if (sink.provider !== 'gitlab') {
    const expected = `sha256=${sink.hmac.digest('hex')}`;
    if (!constantTimeEqual(sink.given.trim().toLowerCase(), expected)) {
      log.warn({ path: WEBHOOK_PATH, status: 403 }, 'webhook refused: bad or missing signature');
      return json(403, { message: 'the signature does not match' });
    }
  }
  const ids = DELIVERY_HEADERS.map((name) => header(request, name)).filter((id): id is string => id !== undefined && id !== '');
  const keys = [...ids.map((id) => `id:${id}`), `body:${sink.provider}:${sink.provider === 'generic' ? sink.given.trim().toLowerCase() : digest}`];
  if (deliveries.check(keys, now)) {
    log.warn({ path: WEBHOOK_PATH, provider: sink.provider, delivery: ids[0] }, 'webhook replayed: a delivery already received; nothing runs');
    return json(200, { status: 'duplicate', message: 'this delivery was already received' });
  }
  const event = header(request, 'x-github-event') ?? header(request, 'x-gitlab-event');
  if (event === 'ping') return json(200, { status: 'pong' });
  if (event !== undefined && event !== 'push' && event !== 'Push Hook') return json(200, { status: 'ignored', event });
  return undefined;
}

/** The webhook's body as a payload (a long push's commit from its head), or the answer refusing it. */
function webhookPayload(request: PostRequest, sink: WebhookSink): { payload: WebhookPayload } | { answer: PostAnswer } {
  let payload: WebhookPayload;
  if (request.truncated && sink.provider === 'generic') {
    return { answer: json(413, { message: `a generic webhook body is read whole up to ${WEBHOOK_KEEP_BYTES / 1024} KiB` }) };
  }
  if (request.truncated) {
    // A long push (many commits): its commit comes first in the body.
    payload = { after: commitFromHead(request.body.toString('utf8')) };
  } else {
    try {
      payload = JSON.parse(request.body.toString('utf8')) as WebhookPayload;
    } catch {
      return { answer: json(400, { message: 'the body is not JSON' }) };
    }
  }
  if (typeof payload !== 'object' || payload === null) return { answer: json(400, { message: 'the body must be a JSON object' }) };
  return { payload };
}

/** The pass a verified webhook asks for: a generic request's projects, or a push's revision (a deleted ref: none). */
async function webhookPass(target: TriggerTarget, request: PostRequest, sink: WebhookSink, payload: WebhookPayload, log: Logger): Promise<PostAnswer> {
  if (sink.provider === 'generic' && payload.projects !== undefined) {
    const projects = requestedProjects({ ...request, query: new URLSearchParams() });
    if (projects && !Array.isArray(projects)) return json(400, { message: projects.error });
    const answer = await target.requestPass(projects ? { projects } : {});
    log.info({ trigger: 'manual', source: 'webhook', provider: sink.provider, projects: projects ?? 'all', status: answer.status }, 'on-demand reconcile');
    return answerFor(answer);
  }
  const commit = payload.after ?? payload.revision;
  if (typeof commit === 'string' && NO_COMMIT.test(commit)) return json(200, { status: 'ignored', reason: 'a deleted ref' });
  const revision = typeof commit === 'string' && COMMIT.test(commit) ? commit.toLowerCase() : undefined;
  const answer = await target.requestPass(revision ? { revision } : {});
  log.info({ trigger: 'revision', source: 'webhook', provider: sink.provider, revision, status: answer.status }, 'push received');
  return answerFor(answer);
}
