import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/daemon/http-server.js';
import { statusRoutes } from '../../src/daemon/status-routes.js';
import { buildFleetView, type FleetView } from '../../src/status/fleet-view.js';
import { renderStatusPage } from '../../src/status/status-page.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import { silentLogger } from '../../src/util/logger.js';
import { passResult } from '../daemon/fixtures.js';

const HOSTILE = '<script>alert("x")</script>&"\'';

function view(overrides: Partial<FleetView> = {}): FleetView {
  const record = foldPass(emptyStatusRecord(), passResult(), {}, Date.UTC(2026, 0, 1, 0, 1));
  return { ...buildFleetView(record, { now: Date.UTC(2026, 0, 1, 0, 2), source: 'daemon', freshness: { resync: 'continuous', boundSeconds: 300 } }), ...overrides };
}

let server: RunningHttpServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('status page', () => {
  it('escapes every text from the view', () => {
    const base = view();
    const hostile = view({
      revision: HOSTILE,
      projects: base.projects.map((p) => ({ ...p, name: HOSTILE, status: HOSTILE, lastError: { at: '2026-01-01T00:00:00.000Z', message: HOSTILE } })),
      recentErrors: [{ at: '2026-01-01T00:00:00.000Z', project: HOSTILE, message: HOSTILE }],
    });
    const html = renderStatusPage(hostile, { refreshSeconds: 15, runbookUrl: 'https://example.com/runbook.md?a=1&b="2"' });
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#39;');
    expect(html).toContain('href="https://example.com/runbook.md?a=1&amp;b=&quot;2&quot;#reconcilerdriftpersists"');
    // The one script is the page's own.
    expect(html.match(/<script>/g)).toHaveLength(1);
  });

  it('escapes every value of a broken revision and of held changes: the html tag escapes by default', async () => {
    const { html, trusted } = await import('../../src/status/html.js');
    expect(html`<td title="${HOSTILE}">${HOSTILE}</td>${trusted('<br>')}${[HOSTILE, html`<b>${1}</b>`]}${undefined}`.text).toBe(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#39;</td><br>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#39;<b>1</b>',
    );
    const page = renderStatusPage(
      view({
        condition: { state: 'broken-revision', message: HOSTILE },
        brokenRevision: { revision: HOSTILE, since: '2026-01-01T00:00:00.000Z', errorCount: 1, errors: [{ file: HOSTILE, line: 3, field: HOSTILE, message: HOSTILE }], lastGoodRevision: HOSTILE },
        rollouts: [{ name: HOSTILE, waves: [{ name: HOSTILE, state: 'halted', projects: [HOSTILE], detail: HOSTILE }] }],
        projects: view().projects.map((p) => ({ ...p, pending: [{ id: HOSTILE, project: HOSTILE, kind: 'ProjectAuth', name: HOSTILE, action: 'update', state: 'held', waitingFor: 'approval', reason: HOSTILE, since: '2026-01-01T00:00:00.000Z', waitingSeconds: 60 }] })),
      }),
      { refreshSeconds: 0 },
    );
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('id="broken"');
    expect(page.match(/&lt;script&gt;alert/g)!.length).toBeGreaterThan(8);
  });

  it('shows rollout waves and held changes only when there are some', () => {
    const none = renderStatusPage(view(), { refreshSeconds: 0 });
    expect(none).not.toContain('id="rollouts"');
    expect(none).not.toContain('id="waiting"');
    expect(none).not.toContain('<script>');
    const held = renderStatusPage(
      view({
        rollouts: [{ name: 'tenants', waves: [{ name: 'canary', state: 'soaking', projects: ['shop'], detail: 'soak ends 10:00' }, { name: 'rest', state: 'waiting', projects: ['blog'] }] }],
        projects: view().projects.map((p) => ({ ...p, pending: [{ id: 'ProjectAuth/blog/auth', project: 'blog', kind: 'ProjectAuth', name: 'auth', action: 'update', state: 'held', waitingFor: 'window', reason: 'outside the window sat 02:00-04:00', since: '2026-01-01T00:00:00.000Z', waitingSeconds: 60 }] })),
      }),
      { refreshSeconds: 0 },
    );
    expect(held).toContain('id="rollouts"');
    expect(held).toContain('Rollout tenants: waves in order');
    expect(held).toContain('soaking');
    expect(held).toContain('Changes not made yet: held by the rollout, or pending, and why');
    expect(held).toContain('outside the window sat 02:00-04:00');
  });

  it('serves GET / and GET /status behind the bearer token of --status-token-file, re-read on every request', async () => {
    dir = await mkdtemp(join(tmpdir(), 'status-routes-'));
    const tokenFile = join(dir, 'token');
    const routes = statusRoutes({ view: () => view() }, { refreshSeconds: 15, tokenFile }, silentLogger);
    server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { metrics: async () => ({ contentType: 'text/plain', body: '' }), readiness: () => ({ ready: true, reasons: [] }), get: routes }, silentLogger);
    // No token file yet: refused, not opened.
    expect((await fetch(`${server.url}/status`)).status).toBe(503);
    await writeFile(tokenFile, 'first-token\n');
    expect((await fetch(`${server.url}/status`)).status).toBe(401);
    expect((await fetch(`${server.url}/`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const json = await fetch(`${server.url}/status`, { headers: { authorization: 'Bearer first-token' } });
    expect(json.status).toBe(200);
    expect(((await json.json()) as FleetView).projects.map((p) => p.name)).toEqual(['blog', 'shop']);
    const page = await fetch(`${server.url}/`, { headers: { authorization: 'Bearer first-token' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('<main id="main">');
    await writeFile(tokenFile, 'rotated-token\n');
    expect((await fetch(`${server.url}/status`, { headers: { authorization: 'Bearer first-token' } })).status).toBe(401);
    expect((await fetch(`${server.url}/status`, { headers: { authorization: 'Bearer rotated-token' } })).status).toBe(200);
    expect((await fetch(`${server.url}/status`, { method: 'POST' })).status).toBe(405);
  });

  it('without --status-token-file the routes answer loopback clients', async () => {
    server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { metrics: async () => ({ contentType: 'text/plain', body: '' }), readiness: () => ({ ready: true, reasons: [] }), get: statusRoutes({ view: () => view() }, { refreshSeconds: 15 }, silentLogger) }, silentLogger);
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect((await fetch(`${server.url}/status`)).status).toBe(200);
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
  });

  it('without --status-token-file a client from another host is refused, unless --status-public true', async () => {
    // Servers in tests bind to loopback only: the client's address is given to the routes as the connection would show it.
    const from = (remoteAddress: string) => ({ headers: {}, query: new URLSearchParams(), remoteAddress });
    const closed = statusRoutes({ view: () => view() }, { refreshSeconds: 15 }, silentLogger);
    for (const address of ['10.0.0.5', '::ffff:192.168.1.20', '2001:db8::1', '128.0.0.1']) {
      const json = await closed['/status']!.handle(from(address));
      expect(json.status, address).toBe(403);
      expect(json.body).toContain('loopback only');
      expect(json.body).not.toContain('blog');
      const page = await closed['/']!.handle(from(address));
      expect(page.status, address).toBe(403);
      expect(page.body).not.toContain('<main');
    }
    for (const address of ['127.0.0.1', '127.5.0.9', '::1', '::ffff:127.0.0.1']) expect((await closed['/status']!.handle(from(address))).status, address).toBe(200);
    expect((await closed['/status']!.handle({ headers: {}, query: new URLSearchParams() })).status).toBe(403);
    const open = statusRoutes({ view: () => view() }, { refreshSeconds: 15, public: true }, silentLogger);
    expect((await open['/status']!.handle(from('10.0.0.5'))).status).toBe(200);
    expect((await open['/']!.handle(from('10.0.0.5'))).status).toBe(200);
  });
});
