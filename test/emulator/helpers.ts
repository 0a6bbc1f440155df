import { connect } from 'node:net';
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

export interface RawResult {
  status: number;
  body: string;
}

/**
 * One request with the request target sent byte for byte over a socket: fetch and URL would
 * resolve `..`, `%2e` and backslashes before sending, which is exactly what must be tested.
 */
export function rawRequest(emulator: RunningEmulator, method: string, target: string, body = ''): Promise<RawResult> {
  const { hostname, port } = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      const head = [`${method} ${target} HTTP/1.1`, `host: ${hostname}:${port}`, 'connection: close', `content-length: ${Buffer.byteLength(body)}`];
      if (body) head.push('content-type: application/json');
      socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}
