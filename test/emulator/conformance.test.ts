// Calls every operation of schemas/api/openapi.json over real HTTP and checks the status and
// the body against the operation's response schema (ajv, OpenAPI 3.0 nullable handled).
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specOperations, responseSchema, validatorFor } from '../../src/emulator/openapi.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { call, startWithManualClock, type CallOptions, type CallResult, type Harness } from './helpers.js';

const ORG = 'conformanceorg';
const REF = 'conformanceprojectaa';
const OTHER = 'conformanceprojectbb';
const SAML_XML = '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.org/saml"><md:IDPSSODescriptor/></md:EntityDescriptor>';

let h: Harness;
let emulator: RunningEmulator;
const covered = new Map<string, number>();
const operations = specOperations();

function operationOf(method: string, route: string) {
  const op = operations.find((o) => o.method === method && o.route === route);
  if (!op) throw new Error(`no operation ${method} ${route}`);
  return op;
}

/** Calls an operation, asserts the status, validates the body against the spec and records coverage. */
async function op(method: string, route: string, params: Record<string, string>, expected: number, options: CallOptions & { query?: string } = {}): Promise<CallResult> {
  const operation = operationOf(method, route);
  const path = route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!)) + (options.query ? `?${options.query}` : '');
  const result = await call(emulator, method, path, options);
  expect(result.status, `${method} ${path}: ${result.text}`).toBe(expected);
  expect(result.headers.get('x-ratelimit-limit')).not.toBeNull();
  const schema = responseSchema(operation.operation, expected);
  if (schema && (result.headers.get('content-type') ?? '').includes('json')) {
    const validate = validatorFor(schema);
    expect(validate(result.body), `${method} ${route} response: ${JSON.stringify(validate.errors)}`).toBe(true);
  } else if (expected === 204) {
    expect(result.text).toBe('');
  } else if (expected !== 303 && (result.headers.get('content-type') ?? '').includes('json')) {
    expect(typeof result.body).toBe('object');
  }
  covered.set(operation.operationId, (covered.get(operation.operationId) ?? 0) + 1);
  return result;
}

beforeAll(async () => {
  h = await startWithManualClock({
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    seed: {
      users: [
        { id: 'user-one', name: 'One', email: 'one@example.org', tokens: ['pat_conformance_token'] },
        { id: 'outsider', name: 'Outsider', tokens: ['pat_outsider_token'] },
      ],
      organizations: [
        { slug: ORG, name: 'Conformance', plan: 'pro', members: [{ user: 'user-one', role: 'Owner' }] },
        { slug: 'outsider-org', name: 'Outsider org', members: [{ user: 'outsider', role: 'Owner' }] },
      ],
      projects: [
        {
          ref: REF, name: 'main', organization: ORG, region: 'eu-central-1', pitr_enabled: true,
          config: { auth: { saml_enabled: true, smtp_pass: 'smtp-secret' }, network_bans: ['198.51.100.7', '198.51.100.8'], readonly: true },
          secrets: { EXISTING: 'value' },
          functions: [{ slug: 'hello', files: { 'index.ts': 'export default () => new Response("hi")' }, entrypoint_path: 'index.ts' }],
          buckets: [{ name: 'avatars', public: true }],
        },
        { ref: OTHER, name: 'other', organization: ORG, status: 'INACTIVE' },
      ],
      snippets: [{ id: 'snippet-1', name: 'Count users', project: REF, sql: 'select count(*) from users', owner: 'user-one' }],
      oauth_apps: [{ client_id: '5a3c1b1e-0000-4000-8000-000000000001', client_secret: 'app-secret-123', redirect_uris: ['https://app.example.org/callback'] }],
    },
  });
  emulator = h.emulator;
  h.emulator.advanceClock(2 * 86_400_000);
});

afterAll(async () => {
  await emulator.close();
});

describe('conformance: every operation of the spec, over HTTP, against its response schema', () => {
  it('organizations', async () => {
    await op('GET', '/v1/organizations', {}, 200);
    const created = await op('POST', '/v1/organizations', {}, 201, { body: { name: 'Second org' } });
    await op('GET', '/v1/organizations/{slug}', { slug: created.body.slug }, 200);
    await op('GET', '/v1/organizations/{slug}/members', { slug: ORG }, 200);
  });

  it('projects and lifecycle', async () => {
    await op('GET', '/v1/projects', {}, 200);
    const created = await op('POST', '/v1/projects', {}, 201, { body: { name: 'temp', organization_id: ORG, region: 'us-east-1', db_pass: 'pw-123456' } });
    await op('GET', '/v1/projects/{ref}', { ref: created.body.ref }, 200);
    await op('GET', '/v1/projects/{ref}/health', { ref: REF }, 200, { query: 'services=auth,db,realtime,rest,storage,pooler,bouncer,db_postgres_user' });
    await op('GET', '/v1/projects/{ref}/restore', { ref: OTHER }, 200);
    await op('POST', '/v1/projects/{ref}/restore', { ref: OTHER }, 200);
    await op('POST', '/v1/projects/{ref}/restore/cancel', { ref: OTHER }, 200);
    h.emulator.advanceClock(10 * 60_000);
    await op('POST', '/v1/projects/{ref}/pause', { ref: created.body.ref }, 200);
    await op('DELETE', '/v1/projects/{ref}', { ref: created.body.ref }, 200);
  });

  it('database: types, query, webhooks, backups, read-only, replicas', async () => {
    const types = await op('GET', '/v1/projects/{ref}/types/typescript', { ref: REF }, 200, { query: 'included_schemas=public,api' });
    expect(types.body.types).toContain('"api"');
    const rows = await op('POST', '/v1/projects/{ref}/database/query', { ref: REF }, 201, { body: { query: 'select 1 as one' } });
    expect(rows.body).toEqual([{ one: 1 }]);
    await op('POST', '/v1/projects/{ref}/database/webhooks/enable', { ref: REF }, 201);
    const backups = await op('GET', '/v1/projects/{ref}/database/backups', { ref: REF }, 200);
    await op('POST', '/v1/projects/{ref}/database/backups/restore-pitr', { ref: REF }, 201, {
      body: { recovery_time_target_unix: backups.body.physical_backup_data.latest_physical_backup_date_unix - 60 },
    });
    h.emulator.advanceClock(10 * 60_000);
    await op('GET', '/v1/projects/{ref}/readonly', { ref: REF }, 200);
    await op('POST', '/v1/projects/{ref}/readonly/temporary-disable', { ref: REF }, 201);
    await op('POST', '/v1/projects/{ref}/read-replicas/setup', { ref: REF }, 201, { body: { read_replica_region: 'us-west-1' } });
    const pooler = await op('GET', '/v1/projects/{ref}/config/database/pooler', { ref: REF }, 200);
    const replica = pooler.body.find((p: { database_type: string }) => p.database_type === 'READ_REPLICA');
    await op('POST', '/v1/projects/{ref}/read-replicas/remove', { ref: REF }, 201, { body: { database_identifier: replica.identifier } });
  });

  it('configuration sections', async () => {
    const auth = await op('GET', '/v1/projects/{ref}/config/auth', { ref: REF }, 200);
    expect(auth.body.smtp_pass).toBe(createHmac('sha256', REF).update('smtp-secret').digest('hex'));
    await op('PATCH', '/v1/projects/{ref}/config/auth', { ref: REF }, 200, { body: { site_url: 'https://example.org', jwt_exp: 7200, sms_provider: null } });
    await op('GET', '/v1/projects/{ref}/config/database/postgres', { ref: REF }, 200);
    await op('PUT', '/v1/projects/{ref}/config/database/postgres', { ref: REF }, 200, { body: { max_connections: 120, statement_timeout: '30s', restart_database: false } });
    await op('GET', '/v1/projects/{ref}/config/database/bouncer', { ref: REF }, 200);
    await op('PATCH', '/v1/projects/{ref}/config/database/pooler', { ref: REF }, 200, { body: { default_pool_size: 30 } });
    await op('GET', '/v1/projects/{ref}/ssl-enforcement', { ref: REF }, 200);
    await op('PUT', '/v1/projects/{ref}/ssl-enforcement', { ref: REF }, 200, { body: { requestedConfig: { database: true } } });
    await op('GET', '/v1/projects/{ref}/restapi', { ref: REF }, 200);
    await op('PATCH', '/v1/projects/{ref}/restapi', { ref: REF }, 200, { body: { max_rows: 500, db_pool: 20 } });
    await op('GET', '/v1/projects/{ref}/cryptoext', { ref: REF }, 200);
    await op('PUT', '/v1/projects/{ref}/cryptoext', { ref: REF }, 200, { body: { root_key: 'a'.repeat(64) } });
    await op('GET', '/v1/projects/{ref}/config/storage', { ref: REF }, 200);
    await op('PATCH', '/v1/projects/{ref}/config/storage', { ref: REF }, 200, { body: { fileSizeLimit: 1_000_000, features: { imageTransformation: { enabled: true } } } });
    await op('GET', '/v1/projects/{ref}/storage/buckets', { ref: REF }, 200);
    await op('GET', '/v1/projects/{ref}/network-restrictions', { ref: REF }, 200);
    await op('POST', '/v1/projects/{ref}/network-restrictions/apply', { ref: REF }, 201, { body: { dbAllowedCidrs: ['10.0.0.0/8'], dbAllowedCidrsV6: [] } });
    await op('POST', '/v1/projects/{ref}/network-bans/retrieve', { ref: REF }, 201);
    await op('DELETE', '/v1/projects/{ref}/network-bans', { ref: REF }, 200, { body: { ipv4_addresses: ['198.51.100.7'] } });
  });

  it('custom hostname and vanity subdomain', async () => {
    await op('GET', '/v1/projects/{ref}/custom-hostname', { ref: REF }, 200);
    await op('POST', '/v1/projects/{ref}/custom-hostname/initialize', { ref: REF }, 201, { body: { custom_hostname: 'api.example.org' } });
    h.emulator.advanceClock(60 * 60_000);
    await op('POST', '/v1/projects/{ref}/custom-hostname/reverify', { ref: REF }, 201);
    h.emulator.advanceClock(60 * 60_000);
    const activated = await op('POST', '/v1/projects/{ref}/custom-hostname/activate', { ref: REF }, 201);
    expect(activated.body.status).toBe('5_services_reconfigured');
    await op('GET', '/v1/projects/{ref}/vanity-subdomain', { ref: OTHER }, 200);
    await op('POST', '/v1/projects/{ref}/vanity-subdomain/check-availability', { ref: REF }, 201, { body: { vanity_subdomain: 'my-company' } });
    await op('POST', '/v1/projects/{ref}/restore', { ref: OTHER }, 200);
    h.emulator.advanceClock(60 * 60_000);
    await op('POST', '/v1/projects/{ref}/vanity-subdomain/activate', { ref: OTHER }, 201, { body: { vanity_subdomain: 'my-company' } });
    await op('DELETE', '/v1/projects/{ref}/vanity-subdomain', { ref: OTHER }, 200);
  });

  it('functions', async () => {
    await op('GET', '/v1/projects/{ref}/functions', { ref: REF }, 200);
    const form = new FormData();
    form.set('metadata', JSON.stringify({ entrypoint_path: 'index.ts', name: 'Greeter', verify_jwt: false }));
    form.append('file', new Blob(['export default () => new Response("hello")']), 'index.ts');
    form.append('file', new Blob(['export const x = 1']), 'lib/util.ts');
    const deployed = await op('POST', '/v1/projects/{ref}/functions/deploy', { ref: REF }, 201, { rawBody: form, query: 'slug=greeter' });
    expect(deployed.body.version).toBe(1);
    await op('GET', '/v1/projects/{ref}/functions/{function_slug}', { ref: REF, function_slug: 'greeter' }, 200);
    await op('GET', '/v1/projects/{ref}/functions/{function_slug}/body', { ref: REF, function_slug: 'greeter' }, 200);
    await op('PATCH', '/v1/projects/{ref}/functions/{function_slug}', { ref: REF, function_slug: 'greeter' }, 200, { body: { verify_jwt: true } });
    await op('POST', '/v1/projects/{ref}/functions', { ref: REF }, 201, { body: { slug: 'legacy', name: 'Legacy', body: 'export default 1' } });
    const list = await call(emulator, 'GET', `/v1/projects/${REF}/functions`);
    const bulk = list.body.map((f: Record<string, unknown>) => ({ id: f.id, slug: f.slug, name: `${f.name} v`, status: f.status, version: f.version }));
    await op('PUT', '/v1/projects/{ref}/functions', { ref: REF }, 200, { body: bulk });
    await op('DELETE', '/v1/projects/{ref}/functions/{function_slug}', { ref: REF, function_slug: 'legacy' }, 200);
  });

  it('secrets and API keys', async () => {
    await op('GET', '/v1/projects/{ref}/secrets', { ref: REF }, 200);
    await op('POST', '/v1/projects/{ref}/secrets', { ref: REF }, 201, { body: [{ name: 'A_KEY', value: 'alpha' }] });
    await op('DELETE', '/v1/projects/{ref}/secrets', { ref: REF }, 200, { body: ['A_KEY'] });
    await op('GET', '/v1/projects/{ref}/api-keys', { ref: REF }, 200, { query: 'reveal=false' });
  });

  it('SSO providers', async () => {
    await op('GET', '/v1/projects/{ref}/config/auth/sso/providers', { ref: REF }, 200);
    const created = await op('POST', '/v1/projects/{ref}/config/auth/sso/providers', { ref: REF }, 201, {
      body: { type: 'saml', metadata_xml: SAML_XML, domains: ['example.org'], attribute_mapping: { keys: { email: { name: 'mail' } } } },
    });
    const params = { ref: REF, provider_id: created.body.id };
    await op('GET', '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}', params, 200);
    await op('PUT', '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}', params, 200, { body: { domains: ['example.org', 'example.net'] } });
    await op('DELETE', '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}', params, 200);
  });

  it('branches', async () => {
    const created = await op('POST', '/v1/projects/{ref}/branches', { ref: REF }, 201, { body: { branch_name: 'feature-x', git_branch: 'feature/x' } });
    await op('GET', '/v1/projects/{ref}/branches', { ref: REF }, 200);
    const id = { branch_id: created.body.id };
    await op('GET', '/v1/branches/{branch_id}', id, 200);
    h.emulator.advanceClock(10 * 60_000);
    await op('PATCH', '/v1/branches/{branch_id}', id, 200, { body: { persistent: true } });
    await op('POST', '/v1/branches/{branch_id}/push', id, 201, { body: {} });
    await op('POST', '/v1/branches/{branch_id}/reset', id, 201, { body: {} });
    await op('DELETE', '/v1/branches/{branch_id}', id, 200);
    await op('DELETE', '/v1/projects/{ref}/branches', { ref: REF }, 200);
  });

  it('snippets', async () => {
    await op('GET', '/v1/snippets', {}, 200, { query: `project_ref=${REF}&sort_by=name&sort_order=asc&limit=10` });
    await op('GET', '/v1/snippets/{id}', { id: 'snippet-1' }, 200);
  });

  it('upgrades', async () => {
    await op('GET', '/v1/projects/{ref}/upgrade/eligibility', { ref: REF }, 200);
    await op('GET', '/v1/projects/{ref}/upgrade/status', { ref: REF }, 200);
    const started = await op('POST', '/v1/projects/{ref}/upgrade', { ref: REF }, 201, { body: { target_version: '17' } });
    h.emulator.advanceClock(60_000);
    await op('GET', '/v1/projects/{ref}/upgrade/status', { ref: REF }, 200, { query: `tracking_id=${started.body.tracking_id}` });
  });

  it('OAuth2', async () => {
    const verifier = 'v'.repeat(64);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
      client_id: '5a3c1b1e-0000-4000-8000-000000000001', response_type: 'code', redirect_uri: 'https://app.example.org/callback',
      state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256',
    });
    const authorized = await op('GET', '/v1/oauth/authorize', {}, 303, { query: query.toString() });
    const code = new URL(authorized.headers.get('location')!).searchParams.get('code')!;
    const form = new URLSearchParams({
      grant_type: 'authorization_code', client_id: '5a3c1b1e-0000-4000-8000-000000000001', client_secret: 'app-secret-123',
      code, code_verifier: verifier, redirect_uri: 'https://app.example.org/callback',
    });
    const token = await op('POST', '/v1/oauth/token', {}, 201, { token: null, rawBody: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await op('POST', '/v1/oauth/revoke', {}, 204, {
      token: null, body: { client_id: '5a3c1b1e-0000-4000-8000-000000000001', client_secret: 'app-secret-123', refresh_token: token.body.refresh_token },
    });
  });

  it('the response validator rejects bodies that break the schema (so the checks above can fail)', () => {
    const project = responseSchema(operationOf('GET', '/v1/projects/{ref}').operation, 200)!;
    expect(validatorFor(project)({ ref: REF })).toBe(false);
    const auth = responseSchema(operationOf('GET', '/v1/projects/{ref}/config/auth').operation, 200)!;
    expect(validatorFor(auth)({})).toBe(false);
  });

  it('every operation answers 401 {"message":"Unauthorized"} to an unknown token', async () => {
    for (const operation of operations) {
      if (operation.operationId === 'v1-exchange-oauth-token' || operation.operationId === 'v1-revoke-token') continue;
      const path = operation.route.replace(/\{(\w+)\}/g, 'abcdefghijklmnopqrst');
      const answer = await call(emulator, operation.method, path, { token: 'pat_unknown_token_value' });
      expect(answer.status, `${operation.method} ${operation.route}`).toBe(401);
      expect(answer.body).toEqual({ message: 'Unauthorized' });
    }
  });

  it('every operation on a project, branch or organization answers 403 to a non-member and 404 to an unknown id', async () => {
    h.emulator.advanceClock(60 * 60_000);
    const branch = await call(emulator, 'POST', `/v1/projects/${REF}/branches`, { body: { branch_name: 'sweep' } });
    expect(branch.status, branch.text).toBe(201);
    const existing: Record<string, string> = { ref: REF, branch_id: branch.body.id, slug: ORG, function_slug: 'hello', provider_id: 'x' };
    const scoped = operations.filter((o) => /\{(ref|branch_id|slug)\}/.test(o.route));
    expect(scoped.length).toBeGreaterThan(60);
    for (const operation of scoped) {
      const path = operation.route.replace(/\{(\w+)\}/g, (_, name: string) => existing[name]!);
      const stranger = await call(emulator, operation.method, path, { token: 'pat_outsider_token' });
      expect(stranger.status, `${operation.method} ${operation.route} as a non-member`).toBe(403);
      expect(typeof stranger.body.message).toBe('string');
      const unknownPath = operation.route.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === 'ref' || name === 'branch_id' || name === 'slug' ? (name === 'branch_id' ? '00000000-0000-4000-8000-000000000000' : 'zzzzzzzzzzzzzzzzzzzz') : existing[name]!);
      const unknown = await call(emulator, operation.method, unknownPath);
      expect(unknown.status, `${operation.method} ${operation.route} unknown id`).toBe(404);
    }
  });

  it('covers every operation of the spec', () => {
    const missing = operations.filter((o) => !covered.has(o.operationId)).map((o) => `${o.method} ${o.route}`);
    expect(missing).toEqual([]);
    expect(covered.size).toBe(83);
  });
});
