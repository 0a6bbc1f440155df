import { ManualClock } from '../../src/util/clock.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../src/emulator/index.js';

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  rawBody?: string | Buffer | FormData;
  headers?: Record<string, string>;
  redirect?: RequestRedirect;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One request over real HTTP; JSON bodies parsed. `token: null` sends no Authorization header. */
export async function call(emulator: RunningEmulator, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const token = options.token === undefined ? emulator.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | Buffer | FormData | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${emulator.url}${path}`, { method, headers, body, redirect: options.redirect ?? 'manual' });
  const text = await response.text();
  let parsed: unknown = undefined;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export interface Harness {
  emulator: RunningEmulator;
  clock: ManualClock;
}

export async function startWithManualClock(options: EmulatorOptions = {}): Promise<Harness> {
  const clock = new ManualClock();
  const emulator = await startEmulator({ port: 0, clock, ...options });
  return { emulator, clock };
}

export async function defaultOrg(emulator: RunningEmulator): Promise<string> {
  const orgs = await call(emulator, 'GET', '/v1/organizations');
  return orgs.body[0].slug as string;
}

/** Creates a project and brings it (and its services) to healthy on the manual clock. */
export async function healthyProject(harness: Harness, name = 'app'): Promise<string> {
  const org = await defaultOrg(harness.emulator);
  const created = await call(harness.emulator, 'POST', '/v1/projects', {
    body: { name, organization_id: org, region: 'eu-west-1', db_pass: 'correct-horse-battery' },
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  harness.emulator.advanceClock(10 * 60_000);
  return created.body.ref as string;
}
