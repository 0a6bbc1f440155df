// Callers for measuring the planner alone: `recordingCaller` answers from the emulator over
// plain fetch (no budget) and keeps every GET answer; `replayCaller` answers from such a
// recording without any I/O, so a dry pass over it times the planning work only.
import { ManagementApi } from '../api/endpoints.js';
import type { ApiClient } from '../api/client.js';
import { NotFoundError } from '../api/errors.js';
import { fillRoute, type ApiRequest, type ApiResponse, type RequestCaller } from '../api/request.js';

export type Recording = Record<string, unknown>;

interface RecordingCaller extends RequestCaller {
  send<T>(request: ApiRequest): Promise<ApiResponse<T>>;
}

function keyOf(request: ApiRequest): string {
  const query = Object.entries(request.query ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
    .sort()
    .join('&');
  return `${request.method} ${fillRoute(request.route, request.params)}${query ? `?${query}` : ''}`;
}

export function recordingCaller(baseUrl: string, token: string, recording: Recording, concurrency = 8): RecordingCaller {
  let active = 0;
  const waiting: Array<() => void> = [];
  const acquire = async () => {
    while (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
  };
  const release = () => {
    active--;
    waiting.shift()?.();
  };
  return {
    async call<T>(this: RecordingCaller, request: ApiRequest): Promise<ApiResponse<T>> {
      await acquire();
      try {
        return await this.send<T>(request);
      } finally {
        release();
      }
    },
    async send<T>(request: ApiRequest): Promise<ApiResponse<T>> {
      if (request.method !== 'GET') throw new TypeError(`the recording caller only reads; got ${request.method} ${request.route}`);
      const url = new URL(fillRoute(request.route, request.params), baseUrl);
      for (const [k, v] of Object.entries(request.query ?? {})) {
        if (v === undefined) continue;
        for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
      }
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...(request.headers ?? {}) } });
      const text = await response.text();
      if (response.status === 404) throw new NotFoundError({ method: request.method, route: request.route, status: 404 });
      if (!response.ok) throw new Error(`${request.method} ${request.route}: ${response.status}`);
      const body = text ? (JSON.parse(text) as T) : (undefined as T);
      recording[keyOf(request)] = body;
      return { status: response.status, headers: {}, body };
    },
  };
}

export function replayCaller(recording: Recording): RequestCaller {
  return {
    async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
      const key = keyOf(request);
      if (!(key in recording)) throw new NotFoundError({ method: request.method, route: request.route, status: 404 });
      return { status: 200, headers: {}, body: recording[key] as T };
    },
  };
}

/** An ApiClient over any caller, without budget or queue (bench only). */
export function clientOver(caller: RequestCaller): ApiClient {
  let sent = 0;
  const counting: RequestCaller = {
    call(request) {
      sent++;
      return caller.call(request);
    },
  };
  return {
    api: new ManagementApi(counting),
    stats: () => ({ sent, rateLimited: 0, retries: 0, byRoute: {} }),
    budget: () => ({ limit: Infinity, effectiveLimit: Infinity, remaining: Infinity, windowMs: 1 }),
    onIdle: async () => undefined,
    close: async () => undefined,
  };
}
