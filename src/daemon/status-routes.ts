// `GET /status` (the fleet view as JSON) and `GET /` (the status page), optionally behind a
// bearer token read from a file on every request and compared in constant time, as
// `POST /reconcile` is (src/daemon/trigger.ts).
import type { Logger } from '../reconcile/types.js';
import type { FleetView } from '../status/fleet-view.js';
import { STATUS_PAGE_CSP, renderStatusPage, type StatusPageOptions } from '../status/status-page.js';
import { isLoopback, type GetAnswer, type GetRequest, type GetRoute } from './http-server.js';
import { constantTimeEqual, readSecretFile } from './trigger.js';

export interface StatusRouteSettings extends StatusPageOptions {
  /** `--status-token-file`: when set, both routes want `Authorization: Bearer <its content>`. */
  tokenFile?: string;
  /**
   * `--status-public true`: without a token, answer every client. Otherwise, without a token,
   * only loopback clients (the host itself, `kubectl port-forward`) are answered.
   */
  public?: boolean;
}

const PAGE_HEADERS = {
  'content-security-policy': STATUS_PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

async function refused(settings: StatusRouteSettings, request: GetRequest, path: string, log: Logger): Promise<GetAnswer | undefined> {
  if (!settings.tokenFile) {
    if (settings.public || isLoopback(request.remoteAddress)) return undefined;
    log.warn({ path }, 'status request refused: without --status-token-file only loopback clients are answered');
    return {
      status: 403,
      contentType: 'application/json',
      body: JSON.stringify({ message: 'without a status token (--status-token-file) the status is answered on loopback only; set a token, or --status-public true to answer every client' }),
    };
  }
  const token = await readSecretFile(settings.tokenFile);
  if (token === undefined) {
    log.error({ file: settings.tokenFile }, `the status token file cannot be read or is empty; refusing GET ${path}`);
    return { status: 503, contentType: 'application/json', body: JSON.stringify({ message: 'the status token is not available' }) };
  }
  const value = request.headers.authorization;
  const given = /^Bearer\s+(\S+)\s*$/i.exec(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''))?.[1];
  if (given !== undefined && constantTimeEqual(given, token)) return undefined;
  log.warn({ path, bearer: given !== undefined }, 'status request refused: no valid token');
  return {
    status: 401,
    contentType: 'application/json',
    body: JSON.stringify({ message: 'a valid bearer token is required' }),
    headers: { 'www-authenticate': 'Bearer realm="status"' },
  };
}

const PAGE_REFUSALS: Record<number, string> = {
  401: 'A valid bearer token is required (--status-token-file).\n',
  403: 'Without a status token (--status-token-file) the status page is served on loopback only (or with --status-public true).\n',
};

export function statusRoutes(source: { view(): FleetView }, settings: StatusRouteSettings, log: Logger): Record<string, GetRoute> {
  return {
    '/status': {
      async handle(request) {
        return (await refused(settings, request, '/status', log)) ?? { status: 200, contentType: 'application/json', body: `${JSON.stringify(source.view(), null, 2)}\n` };
      },
    },
    '/': {
      async handle(request) {
        const denied = await refused(settings, request, '/', log);
        if (denied) return { ...denied, contentType: 'text/plain; charset=utf-8', body: PAGE_REFUSALS[denied.status] ?? 'The status token is not available.\n' };
        return { status: 200, contentType: 'text/html; charset=utf-8', body: renderStatusPage(source.view(), settings), headers: PAGE_HEADERS };
      },
    },
  };
}
