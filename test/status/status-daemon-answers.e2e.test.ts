// `reconcile status --daemon-url` (the built command) against a server that answers as a daemon
// can, and as something else at that address can: the view, each refusal said plainly, the
// bearer token sent to the daemon alone and never after a redirect.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFleetView } from '../../src/status/fleet-view.js';
import { emptyStatusRecord, foldPass } from '../../src/status/status-record.js';
import { assertBuilt, expectExit, runCli } from '../e2e/helpers/cli.js';
import { passResult } from '../daemon/fixtures.js';

const TOKEN = 'status-token-for-the-daemon-0123456789';
const VIEW = buildFleetView(foldPass(emptyStatusRecord(), passResult(), {}, 1_000), { now: 2_000, source: 'daemon', freshness: {} });

interface Seen {
  path: string | undefined;
  headers: IncomingHttpHeaders;
}

/** A server whose answer to every request is `answer`'s; what it was asked is kept in `seen`. */
async function serve(answer: (respond: (status: number, body: string, headers?: Record<string, string>) => void) => void): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    seen.push({ path: request.url, headers: request.headers });
    answer((status, body, headers = {}) => response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, server };
}

const servers: Server[] = [];
let work: string | undefined;
let tokenFile: string;
beforeAll(async () => {
  assertBuilt();
  work = await mkdtemp(join(tmpdir(), 'status-daemon-'));
  tokenFile = join(work, 'token');
  await writeFile(tokenFile, `${TOKEN}\n`);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  if (work) await rm(work, { recursive: true, force: true });
});

async function daemon(answer: Parameters<typeof serve>[0]) {
  const running = await serve(answer);
  servers.push(running.server);
  return running;
}

describe('reconcile status --daemon-url (built command)', () => {
  it("prints the daemon's view, having sent GET /status with the bearer token of --status-token-file", async () => {
    const { url, seen } = await daemon((respond) => respond(200, JSON.stringify(VIEW)));
    const run = await runCli(['status', '--daemon-url', url, '--status-token-file', tokenFile, '--output', 'json'], {});
    expectExit(run, 0);
    expect(JSON.parse(run.stdout)).toEqual(VIEW);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/status');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]!.headers.accept).toBe('application/json');
  });

  it('says what each refusal means: a token wanted, no /status endpoint, an error with its message, an answer that is not JSON', async () => {
    const cases: Array<[number, string, string]> = [
      [401, '{"message":"unauthorized"}', 'wants a bearer token: set --status-token-file PATH (RECONCILE_STATUS_TOKEN_FILE)'],
      [404, 'not found', 'has no /status endpoint (is it the daemon\'s --metrics-addr?)'],
      [503, '{"message":"no pass yet"}', 'answered 503: no pass yet'],
      [500, '<html>', 'answered 500'],
      [200, '<html>not json</html>', 'answered with something that is not JSON'],
    ];
    for (const [status, body, message] of cases) {
      const { url } = await daemon((respond) => respond(status, body));
      const run = await runCli(['status', '--daemon-url', url], {});
      expectExit(run, 1);
      expect(run.stderr, `${status} ${body}`).toContain(`reconcile: status: `);
      expect(run.stderr, `${status} ${body}`).toContain(message);
      expect(run.stdout).toBe('');
    }
  });

  it('does not follow a redirect: the token is sent to the daemon alone', async () => {
    const elsewhere = await daemon((respond) => respond(200, JSON.stringify(VIEW)));
    const { url } = await daemon((respond) => respond(302, '', { location: `${elsewhere.url}/status` }));
    const run = await runCli(['status', '--daemon-url', url, '--status-token-file', tokenFile], {});
    expectExit(run, 1);
    expect(run.stderr).toContain(`the daemon at ${url} answered 302`);
    expect(elsewhere.seen).toEqual([]);
  });
});
