import { describe, expect, it } from 'vitest';
import { parseListenAddress, startHttpServer } from '../../src/daemon/http-server.js';
import { ApiHealth } from '../../src/daemon/api-health.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

describe('parseListenAddress', () => {
  it('accepts HOST:PORT, [IPv6]:PORT and :PORT', () => {
    expect(parseListenAddress('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseListenAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListenAddress(':9464')).toEqual({ host: '0.0.0.0', port: 9464 });
  });

  it('rejects anything else with a message naming the option', () => {
    expect(() => parseListenAddress('9464')).toThrow('Expected --metrics-addr as HOST:PORT such as `0.0.0.0:9464` or `[::1]:9464` (port 0 to 65535), got `9464`');
    expect(() => parseListenAddress('localhost:70000')).toThrow(/got `localhost:70000`/);
  });
});

describe('ApiHealth', () => {
  it('takes no answer of the OAuth endpoints as proof of a token, and a refused refresh as its absence', async () => {
    const clock = new ManualClock();
    const health = new ApiHealth(clock);
    health.observe('400', '/v1/oauth/token');
    expect(health.problem(60_000)).toBe('the API rejected the token (401)');
    health.observe('201', '/v1/oauth/token');
    expect(health.problem(60_000)).toBe('the API rejected the token (401)');
    await clock.advance(1);
    health.observe('200', '/v1/projects');
    expect(health.problem(60_000)).toBeUndefined();
    await clock.advance(1);
    health.observe('401', '/v1/oauth/token');
    expect(health.problem(60_000)).toBe('the API rejected the token (401) since its last valid answer');
  });

  it('is healthy after a valid answer, until a 401 or until the answer is too old', async () => {
    const clock = new ManualClock();
    const health = new ApiHealth(clock);
    expect(health.problem(60_000)).toBe('the API has not answered yet');
    const metrics = createMetrics(undefined, { processMetrics: false });
    const telemetry = health.wrap(metrics);
    telemetry.requestFinished({ method: 'GET', route: '/v1/projects', code: '200', durationSeconds: 0.1 });
    expect(health.problem(60_000)).toBeUndefined();
    // 429 and 403 still prove the token; a transport error says nothing.
    telemetry.requestFinished({ method: 'GET', route: '/v1/projects', code: '429', durationSeconds: 0.1 });
    telemetry.requestFinished({ method: 'GET', route: '/v1/projects', code: 'error', durationSeconds: 0.1 });
    await clock.advance(61_000);
    expect(health.problem(60_000)).toBe('no answer from the API with a valid token in the last 60 s');
    telemetry.requestFinished({ method: 'GET', route: '/v1/projects', code: '200', durationSeconds: 0.1 });
    await clock.advance(1);
    telemetry.requestFinished({ method: 'GET', route: '/v1/projects', code: '401', durationSeconds: 0.1 });
    expect(health.problem(60_000)).toBe('the API rejected the token (401) since its last valid answer');
    expect(await metrics.render()).toContain('reconciler_api_requests_total{method="GET",route="/v1/projects",code="401"} 1');
  });
});

describe('startHttpServer', () => {
  it('serves /metrics, /healthz and /readyz (503 with reasons when not ready)', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    let readiness = { ready: false, reasons: ['no manifests loaded yet'] };
    const server = await startHttpServer(
      { host: '127.0.0.1', port: 0 },
      { metrics: async () => ({ contentType: metrics.contentType, body: await metrics.render() }), readiness: () => readiness },
      silentLogger,
    );
    try {
      const m = await fetch(`${server.url}/metrics`);
      expect(m.status).toBe(200);
      expect(m.headers.get('content-type')).toContain('text/plain');
      expect(await m.text()).toContain('# TYPE reconciler_reconcile_total counter');
      const h = await fetch(`${server.url}/healthz`);
      expect([h.status, await h.json()]).toEqual([200, { status: 'alive' }]);
      const notReady = await fetch(`${server.url}/readyz`);
      expect([notReady.status, await notReady.json()]).toEqual([503, { status: 'not ready', reasons: ['no manifests loaded yet'] }]);
      readiness = { ready: true, reasons: [] };
      const ready = await fetch(`${server.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
      expect((await fetch(`${server.url}/nope`)).status).toBe(404);
      expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });
});
