// The notifications file (`--notifications FILE`, `RECONCILE_NOTIFICATIONS`) and `--notify URL`:
// receivers, their delivery limits, and references to their secrets (resolved when sending,
// never stored in the file, never logged).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { parseYamlFile } from '../manifests/yaml-source.js';
import { parseDuration, parseRate, type RateSpec } from '../util/rate.js';
import type { NotificationEventType } from './events.js';

/** `inline` only comes from the command line (`--notify` with a Slack URL); the file's schema refuses it. */
export type SecretRef = { env: string } | { file: string } | { inline: string };

interface ReceiverBase {
  /** Unique; the `receiver` metric label (never the URL: a Slack URL is a credential). */
  name: string;
  /** Event types it gets; undefined: all. */
  events?: ReadonlySet<NotificationEventType>;
  rate: RateSpec;
  timeoutMs: number;
  retries: number;
  queueSize: number;
}

interface WebhookReceiverSpec extends ReceiverBase {
  type: 'webhook';
  url: string;
  secret: SecretRef;
}

interface SlackReceiverSpec extends ReceiverBase {
  type: 'slack';
  url: SecretRef;
}

export interface GithubReceiverSpec extends ReceiverBase {
  type: 'github';
  repository: string;
  apiUrl: string;
  token: SecretRef;
  context: string;
  targetUrl?: string;
}

export type ReceiverSpec = WebhookReceiverSpec | SlackReceiverSpec | GithubReceiverSpec;

export interface NotificationSettings {
  dedupWindowMs: number;
  receivers: ReceiverSpec[];
}

export const DEFAULT_DEDUP_WINDOW_MS = 3_600_000;
export const DEFAULT_RATE: RateSpec = { limit: 30, windowMs: 60_000 };
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_QUEUE_SIZE = 100;
const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
const DEFAULT_GITHUB_CONTEXT = 'fleet-reconciler';
/** Environment variables holding the signing secret of `--notify` webhooks (a value, or a file's path). */
const NOTIFY_SECRET_ENV = 'RECONCILE_NOTIFY_SECRET';
const NOTIFY_SECRET_FILE_ENV = 'RECONCILE_NOTIFY_SECRET_FILE';

/** A problem with the notifications settings, located in the file when it comes from one. */
export class NotificationsConfigError extends Error {
  constructor(
    message: string,
    readonly location?: { file: string; line: number; column: number; field: string },
  ) {
    super(location ? `${location.file}:${location.line}:${location.column}: ${location.field ? `${location.field}: ` : ''}${message}` : message);
    this.name = 'NotificationsConfigError';
  }
}

/** A secret reference that does not resolve; names the variable or file, never a value. */
class SecretUnavailableError extends Error {
  constructor(readonly ref: SecretRef, detail: string) {
    super('env' in ref ? `environment variable ${ref.env} ${detail}` : 'file' in ref ? `file ${ref.file} ${detail}` : `the --notify URL ${detail}`);
    this.name = 'SecretUnavailableError';
  }
}

/** Resolves a reference. Files are read each time, so a rotated secret is picked up. */
export async function readSecret(ref: SecretRef, env: NodeJS.ProcessEnv): Promise<string> {
  if ('inline' in ref) return ref.inline;
  if ('env' in ref) {
    const value = env[ref.env];
    if (value === undefined || value.trim() === '') throw new SecretUnavailableError(ref, 'is not set');
    return value.trim();
  }
  let text: string;
  try {
    text = await readFile(ref.file, 'utf8');
  } catch (error) {
    throw new SecretUnavailableError(ref, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text.trim() === '') throw new SecretUnavailableError(ref, 'is empty');
  return text.trim();
}

let validator: ReturnType<Ajv2020['compile']> | undefined;

function validate(value: unknown): ErrorObject[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(new URL('../../schemas/notifications.schema.json', import.meta.url), 'utf8')) as object;
    validator = new Ajv2020({ strict: true, allErrors: true, discriminator: true }).compile(schema);
  }
  return validator(value) ? [] : (validator.errors ?? []);
}

/** The error a person should fix first: the deepest one, ignoring the "no branch matched" wrappers. */
function mainError(errors: ErrorObject[]): ErrorObject {
  const concrete = errors.filter((error) => error.keyword !== 'oneOf' && error.keyword !== 'if');
  const pool = concrete.length > 0 ? concrete : errors;
  return pool.reduce((best, error) => (error.instancePath.length > best.instancePath.length ? error : best), pool[0]!);
}

function describe(error: ErrorObject): { pointer: string; message: string; atKey?: boolean } {
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { pointer: `${error.instancePath}/${extra}`, message: `unknown field \`${extra}\``, atKey: true };
  }
  if (error.keyword === 'required') {
    return { pointer: error.instancePath, message: `missing field \`${(error.params as { missingProperty: string }).missingProperty}\`` };
  }
  if (error.keyword === 'enum' || error.keyword === 'const') {
    const allowed = (error.params as { allowedValues?: unknown[]; allowedValue?: unknown }).allowedValues ?? [(error.params as { allowedValue?: unknown }).allowedValue];
    return { pointer: error.instancePath, message: `must be one of ${allowed.map((v) => `\`${String(v)}\``).join(', ')}` };
  }
  if (/\/(secret|token|url)$/.test(error.instancePath) && (error.keyword === 'type' || error.keyword === 'oneOf')) {
    return { pointer: error.instancePath, message: 'must be a reference `{env: NAME}` or `{file: PATH}`: secrets are never written in this file' };
  }
  return { pointer: error.instancePath, message: error.message ?? 'is invalid' };
}

interface RawReceiver {
  name: string;
  type: 'webhook' | 'slack' | 'github';
  url?: string | SecretRef;
  secret?: SecretRef;
  token?: SecretRef;
  repository?: string;
  apiUrl?: string;
  context?: string;
  targetUrl?: string;
  events?: NotificationEventType[];
  rateLimit?: string;
  timeout?: string;
  retries?: number;
  queueSize?: number;
}

function receiverFrom(raw: RawReceiver): ReceiverSpec {
  const base = {
    name: raw.name,
    ...(raw.events ? { events: new Set(raw.events) } : {}),
    rate: raw.rateLimit ? parseRate(raw.rateLimit) : DEFAULT_RATE,
    timeoutMs: raw.timeout ? parseDuration(raw.timeout) : DEFAULT_TIMEOUT_MS,
    retries: raw.retries ?? DEFAULT_RETRIES,
    queueSize: raw.queueSize ?? DEFAULT_QUEUE_SIZE,
  };
  switch (raw.type) {
    case 'webhook':
      return { ...base, type: 'webhook', url: raw.url as string, secret: raw.secret! };
    case 'slack':
      return { ...base, type: 'slack', url: raw.url as SecretRef };
    case 'github':
      return {
        ...base,
        type: 'github',
        repository: raw.repository!,
        apiUrl: (raw.apiUrl ?? DEFAULT_GITHUB_API_URL).replace(/\/+$/, ''),
        token: raw.token!,
        context: raw.context ?? DEFAULT_GITHUB_CONTEXT,
        ...(raw.targetUrl ? { targetUrl: raw.targetUrl } : {}),
      };
  }
}

/** Parses and checks a notifications file (YAML or JSON); errors name the file, line and field. */
export function parseNotifications(text: string, file: string): NotificationSettings {
  const parsed = parseYamlFile(text);
  const problem = parsed.problems[0];
  if (problem) throw new NotificationsConfigError(problem.message, { file, line: problem.line, column: problem.column, field: problem.path ?? '' });
  if (parsed.documents.length !== 1) {
    throw new NotificationsConfigError(`expected exactly one YAML document, got ${parsed.documents.length}`, { file, line: 1, column: 1, field: '' });
  }
  const document = parsed.documents[0]!;
  const errors = validate(document.value);
  if (errors.length > 0) {
    const { pointer, message, atKey } = describe(mainError(errors));
    const at = document.locate(pointer, { key: atKey ?? false });
    throw new NotificationsConfigError(message, { file, line: at.line, column: at.column, field: pointer.replace(/^\//, '').replaceAll('/', '.') });
  }
  const value = document.value as { dedupWindow?: string; receivers: RawReceiver[] };
  const seen = new Set<string>();
  value.receivers.forEach((receiver, index) => {
    if (seen.has(receiver.name)) {
      const at = document.locate(`/receivers/${index}/name`);
      throw new NotificationsConfigError(`receiver name \`${receiver.name}\` is used twice`, { file, line: at.line, column: at.column, field: `receivers.${index}.name` });
    }
    seen.add(receiver.name);
  });
  parsed.release();
  return {
    dedupWindowMs: value.dedupWindow ? parseDuration(value.dedupWindow) : DEFAULT_DEDUP_WINDOW_MS,
    receivers: value.receivers.map(receiverFrom),
  };
}

export async function loadNotificationsFile(path: string): Promise<NotificationSettings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new NotificationsConfigError(`cannot read the notifications file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseNotifications(text, path);
}

/**
 * Receivers of `--notify URL`: a Slack incoming webhook (host `hooks.slack.com`) or a generic
 * webhook signed with the secret of RECONCILE_NOTIFY_SECRET_FILE or RECONCILE_NOTIFY_SECRET.
 */
export function receiversFromUrls(urls: readonly string[], env: NodeJS.ProcessEnv, taken: ReadonlySet<string> = new Set()): ReceiverSpec[] {
  const base = { rate: DEFAULT_RATE, timeoutMs: DEFAULT_TIMEOUT_MS, retries: DEFAULT_RETRIES, queueSize: DEFAULT_QUEUE_SIZE };
  return urls.map((text, index) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new NotificationsConfigError(`--notify expects an http(s) URL, got a value that is not one (argument ${index + 1})`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new NotificationsConfigError(`--notify expects an http(s) URL, got the scheme \`${url.protocol}\` (argument ${index + 1})`);
    }
    let name = url.hostname === 'hooks.slack.com' ? `slack-${index + 1}` : `webhook-${index + 1}`;
    while (taken.has(name)) name = `${name}-notify`;
    if (url.hostname === 'hooks.slack.com') {
      // The URL itself is the credential: kept in memory only, never in a label or a log line.
      return { ...base, name, type: 'slack', url: { inline: text } };
    }
    const secret: SecretRef | undefined = env[NOTIFY_SECRET_FILE_ENV] ? { file: env[NOTIFY_SECRET_FILE_ENV]! } : env[NOTIFY_SECRET_ENV] ? { env: NOTIFY_SECRET_ENV } : undefined;
    if (!secret) {
      throw new NotificationsConfigError(`--notify ${url.origin}: a webhook is signed; set ${NOTIFY_SECRET_FILE_ENV} (a file) or ${NOTIFY_SECRET_ENV} to its HMAC key`);
    }
    return { ...base, name, type: 'webhook', url: text, secret };
  });
}
