// `reconcile status [DIR]`: the recorded view of the fleet, read from a running daemon
// (`--daemon-url`, `GET /status`) or from the state directory, with no API call and no secret.
// `--live` (and `--sandbox`) observe instead: a dry pass (reads only) plus the observed-only
// reads of every live project. Drift is not an error: exit 0 unless the manifests are invalid,
// a read failed, or there is no view to show.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { colorWanted } from '../../util/log-options.js';
import { systemClock } from '../../util/clock.js';
import { readFreshness } from '../../daemon/freshness-file.js';
import { UsageError, type CommandContext, type ContextOf } from '../context.js';
import type { Settings } from '../settings.js';
import { didYouMean } from '../../manifests/suggest.js';
import { stateDirOf } from '../process-scope.js';
import { buildFleetView, type FleetView } from '../../status/fleet-view.js';
import { renderFleetViewText } from '../../status/fleet-view-text.js';
import { readStatusRecord } from '../../status/status-file.js';

/** The daemon answers from memory; a slow answer means something is wrong. */
const DAEMON_TIMEOUT_MS = 10_000;

export async function run(context: ContextOf<'status'>): Promise<number> {
  if (context.positionals.length > 1) throw new UsageError(`status: unexpected argument \`${context.positionals[1]}\``);
  const output = context.settings.output;
  if (output !== 'text' && output !== 'json') throw new UsageError(`status: --output must be text or json, got \`${output}\``);
  // The observing path loads the API client and the engine: only when asked for.
  if (context.settings.live || context.settings.sandbox) return (await import('./status-live.js')).runLive(context, output);
  // The daemon's view only when asked for: the option's default address is for `trigger`.
  const fromDaemon = context.settings.daemonUrlGiven;
  const view = fromDaemon ? await daemonView(context) : await stateDirView(context);
  if (typeof view === 'string') {
    context.stderr.write(`reconcile: status: ${view}\n`);
    return 1;
  }
  const only = context.settings.project;
  if (only !== undefined) {
    const known = view.view.projects.map((project) => project.name);
    if (!known.includes(only)) {
      const hint = didYouMean(only, known);
      throw new UsageError(`status: --project \`${only}\` names no project in ${view.from}${hint === undefined ? '' : `; ${hint}`}`);
    }
    view.view.projects = view.view.projects.filter((project) => project.name === only);
  }
  const stdoutIsTty = (context.stdout as { isTTY?: boolean }).isTTY === true;
  context.stdout.write(output === 'json' ? `${JSON.stringify(view.view, null, 2)}\n` : renderFleetViewText(view.view, { color: colorWanted(context.env, stdoutIsTty), from: view.from }));
  return 0;
}

type HttpModule = typeof import('node:http');

/**
 * node:http (node:https for an https URL) through require, not `fetch` nor an import: the first
 * `fetch` loads Node's own fetch implementation, and an import of node:http reads every export,
 * whose WebSocket getters load it too: most of the command's start, for one GET.
 */
const httpFor = (url: URL): HttpModule => createRequire(import.meta.url)(url.protocol === 'https:' ? 'node:https' : 'node:http') as HttpModule;

/** One GET, its answer read whole; redirects are not followed (the token goes to the daemon only). */
function get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<{ status: number; text: string }> {
  return new Promise((resolvePromise, reject) => {
    const request = httpFor(url).get(url, { headers, signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolvePromise({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

const parseJson = (text: string): unknown => JSON.parse(text) as unknown;

/** `GET /status` of a running daemon, with the bearer token of --status-token-file when given. */
export async function daemonView(context: CommandContext<Pick<Settings, 'daemonUrl' | 'statusTokenFile'>>): Promise<{ view: FleetView; from: string } | string> {
  const base = context.settings.daemonUrl;
  let url: URL;
  try {
    url = new URL('/status', base);
  } catch {
    throw new UsageError(`status: --daemon-url must be a URL such as http://127.0.0.1:9464, got \`${base}\``);
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  const tokenFile = context.settings.statusTokenFile;
  if (tokenFile) {
    let token: string;
    try {
      token = (await readFile(resolve(context.cwd, tokenFile), 'utf8')).trim();
    } catch (error) {
      return `cannot read the token file ${tokenFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    if (token === '') return `the token file ${tokenFile} is empty`;
    headers.authorization = `Bearer ${token}`;
  }
  let response: { status: number; text: string };
  const signal = AbortSignal.any([context.signal, AbortSignal.timeout(DAEMON_TIMEOUT_MS)]);
  try {
    response = await get(url, headers, signal);
  } catch (error) {
    const cause = signal.aborted ? (signal.reason as Error).name : ((error as { code?: string }).code ?? (error as Error).name);
    return `no answer from the daemon at ${url.origin} (${cause})`;
  }
  if (response.status === 401) return `the daemon at ${url.origin} wants a bearer token: set --status-token-file PATH (RECONCILE_STATUS_TOKEN_FILE) to the token it was started with`;
  if (response.status === 404) return `${url.origin} has no /status endpoint (is it the daemon's --metrics-addr?)`;
  if (response.status < 200 || response.status > 299) {
    let message: string | undefined;
    try {
      message = (parseJson(response.text) as { message?: string } | null)?.message;
    } catch {
      message = undefined;
    }
    return `the daemon at ${url.origin} answered ${response.status}${message ? `: ${message}` : ''}`;
  }
  try {
    return { view: parseJson(response.text) as FleetView, from: `the daemon at ${url.origin}` };
  } catch {
    return `the daemon at ${url.origin} answered with something that is not JSON`;
  }
}

/** What passes recorded in the state directory (`status.json`), and the daemon's freshness file. */
async function stateDirView(context: ContextOf<'status'>): Promise<{ view: FleetView; from: string } | string> {
  const stateDir = stateDirOf(context.settings, context.settings.shard);
  const record = await readStatusRecord(stateDir);
  if (!record) {
    return `no status recorded in ${stateDir}: run an apply (\`reconcile DIR\`) or the daemon with this --state-dir, ask a running daemon with --daemon-url URL, or observe now with --live`;
  }
  const now = systemClock.now();
  const freshness = await readFreshness(stateDir, now);
  const view = buildFleetView(record, {
    now,
    source: 'state-dir',
    freshness: {
      ...(freshness ? { resync: freshness.resync } : {}),
      ...(freshness?.boundSeconds !== undefined ? { boundSeconds: freshness.boundSeconds } : {}),
      ...(freshness?.maxObservationAgeSeconds !== undefined ? { maxObservationAgeSeconds: freshness.maxObservationAgeSeconds } : {}),
    },
    ...(context.settings.shard !== undefined ? { shard: context.settings.shard! } : {}),
  });
  return { view, from: `the state directory ${stateDir}` };
}
