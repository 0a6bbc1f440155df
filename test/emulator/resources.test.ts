import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { call, healthyProject, startWithManualClock, type Harness } from './helpers.js';

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function harness(options: Parameters<typeof startWithManualClock>[0] = {}): Promise<Harness> {
  const h = await startWithManualClock({ rateLimit: { limit: 10_000, windowMs: 60_000 }, ...options });
  running.push(h.emulator);
  return h;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function deployForm(metadata: Record<string, unknown>, files: Record<string, string>): FormData {
  const form = new FormData();
  form.set('metadata', JSON.stringify(metadata));
  for (const [path, text] of Object.entries(files)) form.append('file', new Blob([text]), path);
  return form;
}

describe('emulator secrets', () => {
  it('answers values as lowercase hex SHA-256 digests; bulk upsert and bulk delete', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const path = `/v1/projects/${ref}/secrets`;
    expect((await call(h.emulator, 'POST', path, { body: [{ name: 'API_KEY', value: 'one' }, { name: 'OTHER', value: 'two' }] })).status).toBe(201);
    expect((await call(h.emulator, 'POST', path, { body: [{ name: 'API_KEY', value: 'uno' }] })).status).toBe(201);
    const listed = (await call(h.emulator, 'GET', path)).body as Array<{ name: string; value: string }>;
    const mine = Object.fromEntries(listed.filter((s) => !s.name.startsWith('PLATFORM_')).map((s) => [s.name, s.value]));
    expect(mine).toEqual({ API_KEY: sha256('uno'), OTHER: sha256('two') });
    expect(listed.filter((s) => s.name.startsWith('PLATFORM_')).map((s) => s.name)).toEqual(['PLATFORM_URL', 'PLATFORM_ANON_KEY', 'PLATFORM_SERVICE_ROLE_KEY', 'PLATFORM_DB_URL']);
    expect((await call(h.emulator, 'DELETE', path, { body: ['API_KEY', 'NEVER_EXISTED'] })).status).toBe(200);
    const after = (await call(h.emulator, 'GET', path)).body as Array<{ name: string }>;
    expect(after.map((s) => s.name).filter((n) => !n.startsWith('PLATFORM_'))).toEqual(['OTHER']);
  });

  it('refuses a bulk write with one bad name as a whole (no partial change)', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const path = `/v1/projects/${ref}/secrets`;
    const bad = await call(h.emulator, 'POST', path, { body: [{ name: 'GOOD', value: 'x' }, { name: 'PLATFORM_URL', value: 'y' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('[1].name');
    const invalid = await call(h.emulator, 'POST', path, { body: [{ name: 'GOOD', value: 'x' }, { name: '1bad', value: 'y' }] });
    expect(invalid.status).toBe(400);
    const names = ((await call(h.emulator, 'GET', path)).body as Array<{ name: string }>).map((s) => s.name);
    expect(names).not.toContain('GOOD');
    expect((await call(h.emulator, 'DELETE', path, { body: ['PLATFORM_URL'] })).status).toBe(400);
  });
});

describe('emulator functions', () => {
  it('deploys multipart sources, bumps the version on each deploy and gives the files back', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const files = { 'index.ts': 'import { x } from "./lib/x.ts"; export default x;', 'lib/x.ts': 'export const x = 1;', 'deno.json': '{"imports":{}}' };
    const first = await call(h.emulator, 'POST', `/v1/projects/${ref}/functions/deploy?slug=hello`, {
      rawBody: deployForm({ entrypoint_path: 'index.ts', import_map_path: 'deno.json', verify_jwt: false, name: 'Hello', static_patterns: ['assets/*'] }, files),
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ slug: 'hello', name: 'Hello', version: 1, status: 'ACTIVE', verify_jwt: false, import_map: true, entrypoint_path: 'index.ts' });
    const second = await call(h.emulator, 'POST', `/v1/projects/${ref}/functions/deploy?slug=hello`, {
      rawBody: deployForm({ entrypoint_path: 'index.ts', import_map_path: 'deno.json', name: 'Hello' }, { ...files, 'lib/x.ts': 'export const x = 2;' }),
    });
    expect(second.body.version).toBe(2);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.ezbr_sha256).not.toBe(first.body.ezbr_sha256);

    const multipart = await fetch(`${h.emulator.url}/v1/projects/${ref}/functions/hello/body`, {
      headers: { authorization: `Bearer ${h.emulator.token}`, accept: 'multipart/form-data' },
    });
    expect(multipart.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/);
    const bytes = Buffer.from(await multipart.clone().arrayBuffer());
    // No random boundary: the same function body is the same bytes on every download.
    const again = await fetch(`${h.emulator.url}/v1/projects/${ref}/functions/hello/body`, {
      headers: { authorization: `Bearer ${h.emulator.token}`, accept: 'multipart/form-data' },
    });
    expect(again.headers.get('content-type')).toBe(multipart.headers.get('content-type'));
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    const form = await multipart.formData();
    expect(JSON.parse(String(form.get('metadata')))).toMatchObject({ entrypoint_path: 'index.ts', import_map_path: 'deno.json', static_patterns: [] });
    const got: Record<string, string> = {};
    for (const value of form.getAll('file')) got[(value as File).name] = await (value as File).text();
    expect(got).toEqual({ ...files, 'lib/x.ts': 'export const x = 2;' });

    const opaque = await fetch(`${h.emulator.url}/v1/projects/${ref}/functions/hello/body`, { headers: { authorization: `Bearer ${h.emulator.token}` } });
    expect(opaque.headers.get('content-type')).toBe('application/octet-stream');
    expect(createHash('sha256').update(Buffer.from(await opaque.arrayBuffer())).digest('hex')).toBe(second.body.ezbr_sha256);
  });

  it('refuses a deploy whose entrypoint is not uploaded, without creating anything', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const bad = await call(h.emulator, 'POST', `/v1/projects/${ref}/functions/deploy?slug=broken`, {
      rawBody: deployForm({ entrypoint_path: 'main.ts' }, { 'index.ts': 'x' }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('entrypoint_path');
    const noMetadata = new FormData();
    noMetadata.append('file', new Blob(['x']), 'index.ts');
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/functions/deploy?slug=broken`, { rawBody: noMetadata })).body.message).toMatch(/metadata/);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/functions/broken`)).status).toBe(404);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/functions`)).body).toEqual([]);
  });

  it('bulk PUT updates metadata without bumping the version; the deprecated create still works; delete answers ok', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const created = await call(h.emulator, 'POST', `/v1/projects/${ref}/functions`, { body: { slug: 'old', name: 'Old', body: 'export default 1' } });
    expect(created.status).toBe(201);
    expect(created.body.version).toBe(1);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/functions`, { body: { slug: 'old', name: 'Old', body: 'x' } })).status).toBe(409);
    const bulk = await call(h.emulator, 'PUT', `/v1/projects/${ref}/functions`, {
      body: [{ id: created.body.id, slug: 'old', name: 'Renamed', status: 'ACTIVE', version: 1, verify_jwt: false }],
    });
    expect(bulk.body.functions[0]).toMatchObject({ name: 'Renamed', version: 1, verify_jwt: false });
    const patched = await call(h.emulator, 'PATCH', `/v1/projects/${ref}/functions/old`, { body: { body: 'export default 2' } });
    expect(patched.body.version).toBe(2);
    const deleted = await call(h.emulator, 'DELETE', `/v1/projects/${ref}/functions/old`);
    expect(deleted.body).toEqual({ message: 'ok' });
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/functions/old`)).status).toBe(404);
  });
});

describe('emulator SSO providers', () => {
  const xml = '<EntityDescriptor entityID="https://idp.example.com/metadata"></EntityDescriptor>';

  it('answers 404 while SAML is disabled, then creates, updates by domains and deletes', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const path = `/v1/projects/${ref}/config/auth/sso/providers`;
    const disabled = await call(h.emulator, 'POST', path, { body: { type: 'saml', metadata_xml: xml } });
    expect(disabled.status).toBe(404);
    expect(disabled.body.message).toMatch(/SAML 2.0 is disabled/);
    await call(h.emulator, 'PATCH', `/v1/projects/${ref}/config/auth`, { body: { saml_enabled: true } });
    const created = await call(h.emulator, 'POST', path, { body: { type: 'saml', metadata_xml: xml, domains: ['Example.com'] } });
    expect(created.status).toBe(201);
    expect(created.body.saml.entity_id).toBe('https://idp.example.com/metadata');
    expect(created.body.domains.map((d: { domain: string }) => d.domain)).toEqual(['example.com']);
    const clash = await call(h.emulator, 'POST', path, { body: { type: 'saml', metadata_url: 'https://other.example.net/meta', domains: ['example.com'] } });
    expect(clash.status).toBe(400);
    const updated = await call(h.emulator, 'PUT', `${path}/${created.body.id}`, { body: { domains: ['example.com', 'example.org'] } });
    expect(updated.body.domains.map((d: { domain: string }) => d.domain)).toEqual(['example.com', 'example.org']);
    expect(updated.body.domains[0].id).toBe(created.body.domains[0].id);
    expect((await call(h.emulator, 'GET', path)).body.items).toHaveLength(1);
    expect((await call(h.emulator, 'DELETE', `${path}/${created.body.id}`)).body.id).toBe(created.body.id);
    expect((await call(h.emulator, 'GET', `${path}/${created.body.id}`)).status).toBe(404);
  });
});

describe('emulator branches', () => {
  it('creating the first branch enables branching with a default branch; statuses step on the clock', async () => {
    const h = await harness({ durations: { branchStep: 10_000 } });
    const ref = await healthyProject(h);
    const created = await call(h.emulator, 'POST', `/v1/projects/${ref}/branches`, { body: { branch_name: 'preview', git_branch: 'feature/a' } });
    expect(created.body).toMatchObject({ name: 'preview', status: 'CREATING_PROJECT', is_default: false, parent_project_ref: ref, preview_project_status: 'COMING_UP' });
    expect(created.body.project_ref).toMatch(/^[a-z]{20}$/);
    const list = (await call(h.emulator, 'GET', `/v1/projects/${ref}/branches`)).body;
    expect(list.map((b: { name: string; is_default: boolean }) => [b.name, b.is_default])).toEqual([['main', true], ['preview', false]]);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/branches`, { body: { branch_name: 'preview' } })).status).toBe(409);
    const statusAt = async () => (await call(h.emulator, 'GET', `/v1/projects/${ref}/branches`)).body[1].status;
    await h.clock.advance(10_000);
    expect(await statusAt()).toBe('RUNNING_MIGRATIONS');
    await h.clock.advance(10_000);
    expect(await statusAt()).toBe('MIGRATIONS_PASSED');
    await h.clock.advance(10_000);
    expect(await statusAt()).toBe('FUNCTIONS_DEPLOYED');
    const config = await call(h.emulator, 'GET', `/v1/branches/${created.body.id}`);
    expect(config.body).toMatchObject({ ref: created.body.project_ref, status: 'ACTIVE_HEALTHY', db_port: 5432 });
    const pushed = await call(h.emulator, 'POST', `/v1/branches/${created.body.id}/push`, { body: {} });
    expect(pushed.body.message).toBe('ok');
    expect(await statusAt()).toBe('RUNNING_MIGRATIONS');
    const mainId = list[0].id;
    expect((await call(h.emulator, 'DELETE', `/v1/branches/${mainId}`)).status).toBe(400);
    expect((await call(h.emulator, 'DELETE', `/v1/branches/${created.body.id}`)).body).toEqual({ message: 'ok' });
    expect((await call(h.emulator, 'GET', `/v1/branches/${created.body.id}`)).status).toBe(404);
    expect((await call(h.emulator, 'DELETE', `/v1/projects/${ref}/branches`)).status).toBe(200);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/branches`)).body).toEqual([]);
    expect((await call(h.emulator, 'DELETE', `/v1/projects/${ref}/branches`)).status).toBe(400);
  });

  it('a deleted project takes its sub-resources with it', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    await call(h.emulator, 'POST', `/v1/projects/${ref}/secrets`, { body: [{ name: 'A', value: 'b' }] });
    const branch = await call(h.emulator, 'POST', `/v1/projects/${ref}/branches`, { body: { branch_name: 'x' } });
    await call(h.emulator, 'DELETE', `/v1/projects/${ref}`);
    for (const path of [`/v1/projects/${ref}/secrets`, `/v1/projects/${ref}/functions`, `/v1/projects/${ref}/config/auth`, `/v1/projects/${ref}/branches`, `/v1/branches/${branch.body.id}`, `/v1/projects/${ref}/api-keys`]) {
      expect((await call(h.emulator, 'GET', path)).status, path).toBe(404);
    }
  });
});

describe('emulator API keys and snippets', () => {
  it('hides secret API keys unless reveal=true', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const hidden = (await call(h.emulator, 'GET', `/v1/projects/${ref}/api-keys`)).body;
    const shown = (await call(h.emulator, 'GET', `/v1/projects/${ref}/api-keys?reveal=true`)).body;
    const secret = (keys: Array<{ type: string; api_key: string }>) => keys.find((k) => k.type === 'secret')!.api_key;
    expect(secret(hidden)).toContain('•');
    expect(secret(shown)).toMatch(/^sec_[0-9a-f]{48}$/);
  });
});
