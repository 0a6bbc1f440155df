// `exportFleet` against the emulator over real HTTP: functions (documents plus their source
// files), SSO providers and branches, what each costs, and how paths from the service are
// checked before they name files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import type { ManagementApi } from '../../src/api/endpoints.js';
import type { FunctionResponse } from '../../src/api/types.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { exportFleet, FunctionExportError, type FleetExport } from '../../src/reconcile/export.js';
import { exportFunction, safeFunctionPath } from '../../src/reconcile/export-functions.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { BLOG_HELLO, CANARY_SECRET, CANARY_SMTP, completeFleet, exportSeed, HELLO_FILES, METADATA_XML } from './helpers/export-seed.js';

let emulator: RunningEmulator;
let client: ApiClient;
let clock: ManualClock;
let refs: Record<string, string>;

const apiRequests = (since: number) => emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));
const byKind = (result: FleetExport, kind: string) => result.documents.filter((d) => d.document.kind === kind).map((d) => d.document as Record<string, any>);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

beforeAll(async () => {
  clock = new ManualClock(Date.now());
  emulator = await startEmulator({ port: 0, clock, seed: exportSeed(), rateLimit: { limit: 100_000, windowMs: 60_000 } });
  client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
  refs = await completeFleet(client, clock);
});

afterAll(async () => {
  await client?.close();
  await emulator?.close();
});

describe('exportFleet: functions, SSO providers, branches', () => {
  it('exports each live function as a document plus its files, read from the body endpoint', async () => {
    const result = await exportFleet({ api: client.api, log: silentLogger });
    const functions = byKind(result, 'Function').filter((f) => f.spec.project === 'shop');
    expect(functions.map((f) => f.metadata.name)).toEqual(['hello', 'webhook']);
    expect(functions[0]).toEqual({
      apiVersion: 'reconciler/v1',
      kind: 'Function',
      metadata: { name: 'hello' },
      spec: {
        project: 'shop',
        source: 'functions/shop/hello',
        entrypoint: 'index.ts',
        import_map: 'import_map.json',
        static_patterns: ['static/*'],
        verify_jwt: false,
        name: 'Hello world',
      },
    });
    expect(functions[1]!.spec).toEqual({ project: 'shop', source: 'functions/shop/webhook', entrypoint: 'main.ts', verify_jwt: true, name: 'webhook' });
    // The documents sit in the project's file, next to the directory their `source` names.
    expect(result.documents.filter((d) => d.document.kind === 'Function').map((d) => d.file).sort()).toEqual(['blog.yaml', 'shop.yaml', 'shop.yaml']);
    // The same slug in another project: its own directory.
    expect(byKind(result, 'Function').find((f) => f.spec.project === 'blog')!.spec).toEqual({ project: 'blog', source: 'functions/blog/hello', entrypoint: 'index.ts', verify_jwt: true, name: 'hello' });
    const files = Object.fromEntries(result.files.map((f) => [f.path, text(f.content)]));
    expect(files).toEqual({
      ...Object.fromEntries(Object.entries(HELLO_FILES).map(([path, content]) => [`functions/shop/hello/${path}`, content])),
      'functions/shop/webhook/main.ts': 'Deno.serve(() => new Response("ok"));\n',
      'functions/blog/hello/index.ts': BLOG_HELLO,
    });
    expect(result.functionsLeftOut).toEqual([]);
  });

  it('exports one SsoProvider per provider, named after its first domain, and only where SAML is on', async () => {
    const result = await exportFleet({ api: client.api, log: silentLogger });
    const providers = byKind(result, 'SsoProvider');
    expect(providers).toEqual([
      {
        apiVersion: 'reconciler/v1',
        kind: 'SsoProvider',
        metadata: { name: 'acme.example' },
        spec: {
          project: 'shop',
          type: 'saml',
          metadata_url: 'https://idp.acme.example/saml/metadata',
          domains: ['acme.example', 'acme-corp.example'],
          attribute_mapping: { keys: { email: { name: 'mail' }, groups: { names: ['memberOf', 'groups'], array: true } } },
        },
      },
      {
        apiVersion: 'reconciler/v1',
        kind: 'SsoProvider',
        metadata: { name: 'partner.example' },
        spec: { project: 'shop', type: 'saml', metadata_xml: METADATA_XML, domains: ['partner.example'] },
      },
    ]);
    const shop = byKind(result, 'Project').find((p) => p.metadata.name === 'shop')!;
    expect(shop.spec.auth.saml_enabled).toBe(true);
  });

  it('exports non-default branches only: the default branch is the project itself', async () => {
    const result = await exportFleet({ api: client.api, log: silentLogger });
    expect(byKind(result, 'Branch')).toEqual([
      { apiVersion: 'reconciler/v1', kind: 'Branch', metadata: { name: 'preview-42' }, spec: { project: 'shop', branch_name: 'preview-42', persistent: false } },
      { apiVersion: 'reconciler/v1', kind: 'Branch', metadata: { name: 'staging' }, spec: { project: 'shop', branch_name: 'staging', git_branch: 'develop', persistent: true } },
    ]);
  });

  it('costs one list per kind per project plus one body read per live function (none for a removed one, no SSO list without SAML)', async () => {
    const since = emulator.requests().length;
    await exportFleet({ api: client.api, log: silentLogger });
    const sent = apiRequests(since);
    // Reads only: GETs, and one read of each project's migrations history in a read-only transaction.
    expect(sent.every((r) => r.method === 'GET' || (r.route === '/v1/projects/{ref}/database/query' && r.sql?.readOnly === true))).toBe(true);
    const count = (route: string) => sent.filter((r) => r.route === route).length;
    expect(count('/v1/projects/{ref}/database/query')).toBe(2);
    expect(count('/v1/projects/{ref}/functions')).toBe(2);
    expect(count('/v1/projects/{ref}/branches')).toBe(2);
    expect(count('/v1/projects/{ref}/config/auth/sso/providers')).toBe(1);
    expect(sent.filter((r) => r.route === '/v1/projects/{ref}/functions/{function_slug}/body').map((r) => r.path).sort()).toEqual([
      `/v1/projects/${refs.blog}/functions/hello/body`,
      `/v1/projects/${refs.shop}/functions/hello/body`,
      `/v1/projects/${refs.shop}/functions/webhook/body`,
    ].sort());
    expect(sent.some((r) => r.path.includes('/sso/') && r.path.includes(refs.blog!))).toBe(false);
  });

  it('with functions: false reads no body and names the functions it left out', async () => {
    const since = emulator.requests().length;
    const result = await exportFleet({ api: client.api, log: silentLogger, functions: false });
    expect(byKind(result, 'Function')).toEqual([]);
    expect(result.files).toEqual([]);
    expect(result.functionsLeftOut.sort()).toEqual(['blog/hello', 'shop/hello', 'shop/webhook']);
    expect(apiRequests(since).filter((r) => r.route.endsWith('/body'))).toEqual([]);
    // The other kinds are still there.
    expect(byKind(result, 'SsoProvider')).toHaveLength(2);
    expect(byKind(result, 'Branch')).toHaveLength(2);
  });

  it('never puts a secret value in a document', async () => {
    const result = await exportFleet({ api: client.api, log: silentLogger });
    const all = JSON.stringify(result.documents);
    expect(all).not.toContain(CANARY_SECRET);
    expect(all).not.toContain(CANARY_SMTP);
    expect(all).toContain('"env":"SHOP_STRIPE_KEY"');
  });
});

describe('paths from the service', () => {
  it('keeps a relative name inside the function directory', () => {
    expect(safeFunctionPath('shop', 'hello', 'lib/x.ts')).toBe('lib/x.ts');
    expect(safeFunctionPath('shop', 'hello', './index.ts')).toBe('index.ts');
    expect(safeFunctionPath('shop', 'hello', 'lib\\win.ts')).toBe('lib/win.ts');
    expect(safeFunctionPath('shop', 'hello', 'lib/../index.ts')).toBe('index.ts');
    expect(safeFunctionPath('shop', 'hello', 'notes:v2.md')).toBe('notes:v2.md');
  });

  it.each([
    ['../escape.ts', 'leaves the function directory'],
    ['lib/../../escape.ts', 'leaves the function directory'],
    ['..', 'leaves the function directory'],
    ['/etc/cron.d/job', 'is absolute'],
    ['\\\\server\\share\\x.ts', 'is absolute'],
    ['C:\\Windows\\x.ts', 'is absolute'],
    ['file:///src/index.ts', 'is absolute'],
    ['C:relative.ts', 'is absolute'],
    ['.', 'names no file'],
    ['bad\nname.ts', 'contains control characters'],
  ])('refuses %j (%s), naming the project and the function', (name, why) => {
    let error: unknown;
    try {
      safeFunctionPath('shop', 'hello', name);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FunctionExportError);
    expect((error as FunctionExportError).message).toMatch(/^project `shop`, function `hello`: file name `.*` from the service /);
    expect((error as FunctionExportError).message).toContain(why);
    expect((error as FunctionExportError).functionName).toBe('hello');
  });

  it('refuses the whole export when a live function has a file name leaving its directory', async () => {
    const bad = await startEmulator({
      port: 0,
      seed: {
        organizations: [{ slug: 'acme', name: 'acme' }],
        projects: [{ name: 'shop', organization: 'acme', functions: [{ slug: 'evil', entrypoint_path: 'index.ts', files: { 'index.ts': 'x', '../../outside.ts': 'y' } }] }],
      },
    });
    const badClient = await createClient({ baseUrl: bad.url, auth: staticToken(bad.token) });
    try {
      const error = await exportFleet({ api: badClient.api, log: silentLogger }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FunctionExportError);
      expect((error as Error).message).toBe('project `shop`, function `evil`: file name `../../outside.ts` from the service leaves the function directory; refusing to write it');
    } finally {
      await badClient.close();
      await bad.close();
    }
  });

  // The remaining refusals need answers the emulator never gives: a stand-in for the one read.
  const live: FunctionResponse = { id: 'f1', slug: 'hello', name: 'hello', status: 'ACTIVE', version: 1, created_at: 0, updated_at: 0, entrypoint_path: 'index.ts' };
  const multipart = async (parts: Array<[string, string]>, metadata: Record<string, unknown> = {}) => {
    const form = new FormData();
    form.append('metadata', JSON.stringify(metadata));
    for (const [name, content] of parts) form.append('file', new Blob([content]), name);
    const response = new Response(form);
    return { contentType: response.headers.get('content-type')!, bytes: new Uint8Array(await response.arrayBuffer()) };
  };
  const answering = (body: unknown) => ({ getAFunctionBody: async () => body }) as unknown as ManagementApi;
  const exportOne = (body: unknown, fn: FunctionResponse = live) =>
    exportFunction({ api: answering(body), ref: 'abc', project: 'shop', dir: 'functions/shop', live: fn, log: silentLogger });
  /** The error the export of one function fails with (the test fails when it succeeds). */
  const run = (body: unknown, fn: FunctionResponse = live): Promise<Error> =>
    exportOne(body, fn).then(
      () => {
        throw new Error('expected the export to be refused');
      },
      (error: unknown) => error as Error,
    );

  it('refuses an opaque bundle (no source files to write)', async () => {
    const error = await run({ contentType: 'application/octet-stream', bytes: new Uint8Array([1, 2, 3]) });
    expect(error).toBeInstanceOf(FunctionExportError);
    expect(error.message).toBe('project `shop`, function `hello`: the service answered an opaque bundle, not the source files (multipart/form-data)');
  });

  it('refuses an entrypoint that is not among the files, a file that is also a directory, a duplicate, and a static pattern leaving the directory', async () => {
    expect((await run(await multipart([['main.ts', 'x']]))).message).toBe("project `shop`, function `hello`: the entrypoint `index.ts` is not among the function's files");
    expect((await run(await multipart([['index.ts', 'x'], ['lib', 'y'], ['lib/a.ts', 'z']]))).message).toBe(
      'project `shop`, function `hello`: `lib` is both a file and a directory in the sources',
    );
    expect((await run(await multipart([['index.ts', 'x'], ['./index.ts', 'y']]))).message).toBe('project `shop`, function `hello`: the service sent the file `index.ts` twice');
    expect((await run(await multipart([['index.ts', 'x']], { static_patterns: ['../shared/*'] }))).message).toBe(
      'project `shop`, function `hello`: the static pattern `../shared/*` from the service points outside the function directory',
    );
    expect((await run(await multipart([['index.ts', 'x']]), { ...live, slug: '../x' })).message).toContain('the slug does not match');
  });

  it('writes a dot-file the service has, warning that the reconciler never uploads it', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const exported = await exportFunction({ api: answering(await multipart([['index.ts', 'x'], ['.env.example', 'A=1']])), ref: 'abc', project: 'shop', dir: 'functions/shop', live, log });
    expect(exported.files.map((f) => f.path)).toEqual(['functions/shop/hello/.env.example', 'functions/shop/hello/index.ts']);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ project: 'shop', function: 'hello', file: '.env.example', msg: expect.stringContaining('does not upload') });
  });

  it('finds the entrypoint the service reports as a URL or absolute path by its suffix', async () => {
    const exported = await exportOne(await multipart([['index.ts', 'x'], ['lib/deps.json', '{}']]), { ...live, entrypoint_path: 'file:///tmp/build/hello/index.ts', import_map_path: '/tmp/build/hello/lib/deps.json' });
    const spec = exported.document.spec as Record<string, unknown>;
    expect(spec.entrypoint).toBe('index.ts');
    expect(spec.import_map).toBe('lib/deps.json');
  });
});
