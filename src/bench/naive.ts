// The baseline the figures are compared with: the way a straightforward tool talks to the
// API. One GET per resource (the project, each section, each function by slug, the secrets),
// no priorities (first come, first served), and a fixed-interval limiter that spaces requests
// evenly at the service's advertised limit, blind to anyone else spending the same budget.
import type { GeneratedFleet } from './fleet.js';

interface NaiveRequest {
  method: 'GET';
  path: string;
}

const SECTION_PATHS: Record<string, string> = {
  auth: '/config/auth',
  postgres: '/config/database/postgres',
  restapi: '/restapi',
  pooler: '/config/database/pooler',
  storage: '/config/storage',
  ssl_enforcement: '/ssl-enforcement',
  network_restrictions: '/network-restrictions',
};

/** The reads a naive tool makes to find out whether a fleet drifted. */
export function naiveObservation(fleet: GeneratedFleet, refs: Map<string, string>): NaiveRequest[] {
  const requests: NaiveRequest[] = [{ method: 'GET', path: '/v1/projects' }];
  for (const name of fleet.projectNames) {
    const ref = refs.get(name);
    if (!ref) continue;
    const base = `/v1/projects/${ref}`;
    requests.push({ method: 'GET', path: base });
    for (const section of fleet.shape.sections) requests.push({ method: 'GET', path: `${base}${SECTION_PATHS[section]}` });
    for (let f = 0; f < fleet.shape.functions; f++) requests.push({ method: 'GET', path: `${base}/functions/fn-${f}` });
    if (fleet.shape.secrets > 0) requests.push({ method: 'GET', path: `${base}/secrets` });
  }
  return requests;
}

/** Sends requests one after another, one every `intervalMs`, with no regard for the answers' headers. */
export async function sendAtFixedInterval(
  baseUrl: string,
  token: string,
  requests: readonly NaiveRequest[],
  intervalMs: number,
  signal?: AbortSignal,
): Promise<{ sent: number; statuses: Record<string, number> }> {
  const statuses: Record<string, number> = {};
  let next = performance.now();
  let sent = 0;
  for (const request of requests) {
    if (signal?.aborted) break;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    next += intervalMs;
    const response = await fetch(new URL(request.path, baseUrl), { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    sent++;
  }
  return { sent, statuses };
}
