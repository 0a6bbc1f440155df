import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SeedError, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { ManualClock } from '../../src/util/clock.js';
import { call } from './helpers.js';

const running: RunningEmulator[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const YAML_SEED = `
users:
  - id: alice
    name: Alice
    email: alice@example.org
    tokens: [pat_alice_from_yaml]
organizations:
  - slug: fleet
    name: Fleet
    plan: team
    members:
      - { user: alice@example.org, role: Owner }
projects:
  - ref: yamlprojectyamlproje
    name: production
    organization: fleet
    region: eu-west-2
    config:
      auth: { site_url: "https://prod.example.org", smtp_pass: "s3cret" }
      postgres: { max_connections: 90 }
      vanity_subdomain: prodapp
    secrets: { STRIPE_KEY: sk_live }
    functions:
      - slug: hello
        verify_jwt: false
        files: { "index.ts": "export default () => 1" }
`;

describe('emulator seeds and admin API', () => {
  it('loads a YAML seed file: users, tokens, organizations, projects with configuration, secrets and functions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emulator-seed-'));
    dirs.push(dir);
    const file = join(dir, 'seed.yaml');
    await writeFile(file, YAML_SEED);
    const emulator = await startEmulator({ port: 0, seed: file });
    running.push(emulator);
    expect(emulator.token).toBe('pat_alice_from_yaml');
    const project = await call(emulator, 'GET', '/v1/projects/yamlprojectyamlproje');
    expect(project.body).toMatchObject({ name: 'production', organization_slug: 'fleet', status: 'ACTIVE_HEALTHY', region: 'eu-west-2' });
    expect((await call(emulator, 'GET', '/v1/projects/yamlprojectyamlproje/config/auth')).body.site_url).toBe('https://prod.example.org');
    expect((await call(emulator, 'GET', '/v1/projects/yamlprojectyamlproje/config/database/postgres')).body).toEqual({ max_connections: 90 });
    expect((await call(emulator, 'GET', '/v1/projects/yamlprojectyamlproje/vanity-subdomain')).body.status).toBe('active');
    expect((await call(emulator, 'GET', '/v1/projects/yamlprojectyamlproje/functions/hello')).body).toMatchObject({ version: 1, verify_jwt: false });
    expect((await call(emulator, 'GET', '/v1/organizations/fleet')).body.plan).toBe('team');
  });

  it('refuses an invalid seed with a message naming the field, and a missing file with its path', async () => {
    await expect(startEmulator({ port: 0, seed: { projects: [{ name: 'x', organization: 'Default Organization', region: 'moon-1' as never }] } })).rejects.toThrow(/projects\.0\.region/);
    await expect(startEmulator({ port: 0, seed: { organizations: [{ name: 'o', members: [{ user: 'nobody' }] }] } })).rejects.toThrow(SeedError);
    await expect(startEmulator({ port: 0, seed: '/nonexistent/seed.yaml' })).rejects.toThrow(/\/nonexistent\/seed.yaml/);
    await expect(startEmulator({ port: 0, seed: { projects: [{ name: 'x', organization: 'Default Organization', config: { auth: { jwt_exp: 'x' } } }] } as never })).rejects.toThrow(/jwt_exp/);
  });

  it('validates options up front', async () => {
    await expect(startEmulator({ port: 70000 })).rejects.toThrow('Expected `port` to be an integer between 0 and 65535, got `70000` (number)');
    await expect(startEmulator({ port: 0, speed: 0 })).rejects.toThrow(/speed/);
    await expect(startEmulator({ port: 0, durations: { projectCreat: 1 } as never })).rejects.toThrow(/projectCreat/);
    await expect(startEmulator({ port: 0, rateLimit: { limit: 0, windowMs: 1 } })).rejects.toThrow(/rateLimit.limit/);
  });

  it('POST /_emulator/seed replaces the state; POST /_emulator/reset returns to it and clears the log', async () => {
    const emulator = await startEmulator({ port: 0, token: 'pat_stable_token_x' });
    running.push(emulator);
    const org = (await call(emulator, 'GET', '/v1/organizations')).body[0].slug;
    await call(emulator, 'POST', '/v1/projects', { body: { name: 'temp', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    const seeded = await fetch(`${emulator.url}/_emulator/seed`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ organizations: [{ slug: 'seeded', name: 'Seeded' }], projects: [{ ref: 'seededprojectseededp', name: 'one', organization: 'seeded' }] }),
    });
    expect(seeded.status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/projects')).body.map((p: { ref: string }) => p.ref)).toEqual(['seededprojectseededp']);
    await call(emulator, 'DELETE', '/v1/projects/seededprojectseededp');
    expect((await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' })).status).toBe(200);
    expect(emulator.requests()).toEqual([]);
    expect((await call(emulator, 'GET', '/v1/projects')).body.map((p: { ref: string }) => p.ref)).toEqual(['seededprojectseededp']);
    const invalid = await fetch(`${emulator.url}/_emulator/seed`, { method: 'POST', body: JSON.stringify({ projects: [{ name: 1 }] }) });
    expect(invalid.status).toBe(400);
    expect((await call(emulator, 'GET', '/v1/projects')).body).toHaveLength(1);
  });

  it('keeps the token printed at start, the default user, organization and OAuth client across reset and seed', async () => {
    const emulator = await startEmulator({ port: 0 });
    running.push(emulator);
    const token = emulator.token;
    const client = emulator.oauthClient;
    const before = await fetch(`${emulator.url}/_emulator/info`).then((r) => r.json());
    const defaultUser = before.users.find((u: { default: boolean }) => u.default).id;
    const org = before.organizations[0].slug;
    const post = (path: string, body?: unknown) =>
      fetch(`${emulator.url}/_emulator/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

    expect((await post('reset')).status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/projects', { token })).status).toBe(200);
    const afterReset = await fetch(`${emulator.url}/_emulator/info`).then((r) => r.json());
    expect(afterReset.token).toBe(token);
    expect(afterReset.users.find((u: { default: boolean }) => u.default).id).toBe(defaultUser);
    expect(afterReset.organizations[0].slug).toBe(org);
    expect(emulator.oauthClient).toEqual(client);

    expect((await post('seed', { projects: [{ ref: 'keptprojectkeptproje', name: 'one', organization: 'Default Organization' }] })).status).toBe(200);
    const listed = await call(emulator, 'GET', '/v1/projects', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.map((p: { ref: string; organization_id: string }) => [p.ref, p.organization_id])).toEqual([['keptprojectkeptproje', org]]);
    expect(emulator.oauthClient).toEqual(client);
    expect(emulator.token).toBe(token);

    // A seed that lists its own users and tokens: the start token joins the first user's tokens.
    expect((await post('seed', { users: [{ id: 'carol', name: 'Carol', tokens: ['pat_carol_seeded'] }, { id: 'dave', name: 'Dave', tokens: ['pat_dave_seeded'] }] })).status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/organizations', { token })).status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_carol_seeded' })).status).toBe(200);
    expect((await post('reset')).status).toBe(200);
    expect((await call(emulator, 'GET', '/v1/projects', { token })).status).toBe(200);

    // Giving the start token to another user is refused, and the state is kept.
    const refused = await post('seed', { users: [{ name: 'Erin' }, { name: 'Frank', tokens: [token] }] });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/already belongs to another seeded user/);
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_carol_seeded' })).status).toBe(200);
  });

  it('keeps a --token across seed and reset too', async () => {
    const emulator = await startEmulator({ port: 0, token: 'pat_given_at_start' });
    running.push(emulator);
    await fetch(`${emulator.url}/_emulator/seed`, { method: 'POST', body: JSON.stringify({ users: [{ name: 'Gina', tokens: ['pat_gina_seeded'] }] }) });
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_given_at_start' })).status).toBe(200);
    await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
    expect((await call(emulator, 'GET', '/v1/projects', { token: 'pat_given_at_start' })).status).toBe(200);
    expect(emulator.token).toBe('pat_given_at_start');
  });

  it('GET /_emulator/requests?since= filters by time; POST /_emulator/clock/advance moves lifecycles', async () => {
    const wall = new ManualClock();
    const clock = new ManualClock();
    const emulator = await startEmulator({ port: 0, wallClock: wall, clock, durations: { projectCreate: 5_000 } });
    running.push(emulator);
    const org = (await call(emulator, 'GET', '/v1/organizations')).body[0].slug;
    await wall.advance(1_000);
    const created = await call(emulator, 'POST', '/v1/projects', { body: { name: 'p', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    const since = await fetch(`${emulator.url}/_emulator/requests?since=${wall.now()}`).then((r) => r.json());
    expect(since.map((e: { route: string }) => e.route)).toEqual(['/v1/projects']);
    const advanced = await fetch(`${emulator.url}/_emulator/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 5_000 }) });
    expect(advanced.status).toBe(200);
    expect((await call(emulator, 'GET', `/v1/projects/${created.body.ref}`)).body.status).toBe('ACTIVE_HEALTHY');
    const second = await call(emulator, 'POST', '/v1/projects', { body: { name: 'q', organization_id: org, region: 'us-east-1', db_pass: 'pw-123456' } });
    const pending = await fetch(`${emulator.url}/_emulator/info`).then((r) => r.json());
    expect(pending.pending_transitions).toBe(1);
    await fetch(`${emulator.url}/_emulator/clock/advance`, { method: 'POST', body: JSON.stringify({ untilIdle: true }) });
    expect((await call(emulator, 'GET', `/v1/projects/${second.body.ref}`)).body.status).toBe('ACTIVE_HEALTHY');
    const info = await fetch(`${emulator.url}/_emulator/info`).then((r) => r.json());
    expect(info.pending_transitions).toBe(0);
    expect(info.token).toBe(emulator.token);
    expect(info.oauth_apps[0].client_id).toBe(emulator.oauthClient.clientId);
  });
});

describe('seeded SSO providers', () => {
  const xml = '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example/acme"></md:EntityDescriptor>';
  const seedWith = (provider: Record<string, unknown>) => ({
    organizations: [{ name: 'acme', slug: 'acmeslug' }],
    projects: [{ name: 'shop', organization: 'acmeslug', status: 'ACTIVE_HEALTHY' as const, config: { auth: { saml_enabled: true } }, sso_providers: [provider] }],
  });

  it('take their entity id from the metadata, as providers created through the API do', async () => {
    const emulator = await startEmulator({ port: 0, seed: seedWith({ metadata_xml: xml, domains: ['acme.example'] }) });
    try {
      const headers = { authorization: `Bearer ${emulator.token}` };
      const [project] = (await (await fetch(`${emulator.url}/v1/projects`, { headers })).json()) as Array<{ ref: string }>;
      const list = (await (await fetch(`${emulator.url}/v1/projects/${project!.ref}/config/auth/sso/providers`, { headers })).json()) as {
        items: Array<{ saml: { entity_id: string } }>;
      };
      expect(list.items[0]!.saml.entity_id).toBe('https://idp.example/acme');
    } finally {
      await emulator.close();
    }
  });

  it('refuse metadata that is not SAML, naming the seed entry', async () => {
    await expect(startEmulator({ port: 0, seed: seedWith({ metadata_xml: '<x/>' }) })).rejects.toThrow(SeedError);
    await expect(startEmulator({ port: 0, seed: seedWith({ metadata_xml: '<x/>' }) })).rejects.toThrow(/projects\[0\]\.sso_providers\[0\]: `metadata_xml` is not SAML metadata/);
  });
});

describe('POST /_emulator/organizations/{slug}/members', () => {
  it('makes a user a member (the dashboard invitation the API has no call for), so that it sees the organization', async () => {
    const emulator = await startEmulator({
      port: 0,
      seed: { users: [{ name: 'Owner', email: 'owner@example.test', tokens: ['pat_owner_0123456789'] }, { name: 'Later', email: 'later@example.test', tokens: ['pat_later_0123456789'] }], organizations: [{ name: 'Shared', slug: 'sharedslug', members: [{ user: 'owner@example.test' }] }] },
    });
    running.push(emulator);
    const visible = async () => ((await (await fetch(`${emulator.url}/v1/organizations`, { headers: { authorization: 'Bearer pat_later_0123456789' } })).json()) as Array<{ name: string }>).map((o) => o.name);
    expect(await visible()).not.toContain('Shared');
    const add = (slug: string, body: unknown) => fetch(`${emulator.url}/_emulator/organizations/${slug}/members`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const added = await add('sharedslug', { user: 'later@example.test', role: 'Developer' });
    expect(added.status).toBe(200);
    expect(((await added.json()) as { members: Array<{ role_name: string }> }).members.map((m) => m.role_name)).toEqual(['Owner', 'Developer']);
    expect(await visible()).toContain('Shared');
    expect((await add('nosuchorg', { user: 'later@example.test' })).status).toBe(404);
    expect((await add('sharedslug', { user: 'nobody@example.test' })).status).toBe(400);
    expect((await add('sharedslug', { user: 'later@example.test', role: 'Boss' })).status).toBe(400);
  });
});
