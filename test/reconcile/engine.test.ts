import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

const CANARY_DB = 'canary-db-pass-7f3a91';
const CANARY_SMTP = 'canary-smtp-pass-c44e02';

const AUTH = `  auth:
    site_url: https://shop.example
    smtp_pass:
      valueFrom:
        env: SMTP_PASS
  restapi:
    max_rows: 500
`;

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ DB_PASS: CANARY_DB, SMTP_PASS: CANARY_SMTP });
});
afterEach(async () => {
  await h.close();
});

const writes = (h: Harness, since = 0) => h.emulator.requests(since).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

describe('runPass', () => {
  it('creates the organization and project once, then configures it only after it is healthy', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    const result = await h.pass();
    expect(result.result).toBe('success');
    expect(result.outcomes.filter((o) => o.result !== 'success')).toEqual([]);
    const log = h.emulator.requests();
    expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(1);
    expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/organizations')).toHaveLength(1);
    const firstConfigWrite = log.findIndex((r) => r.method !== 'GET' && r.route.startsWith('/v1/projects/{ref}/'));
    const lastHealth = log.map((r) => r.route).lastIndexOf('/v1/projects/{ref}/health');
    expect(lastHealth).toBeGreaterThan(-1);
    expect(firstConfigWrite).toBeGreaterThan(lastHealth);
    expect(log.filter((r) => r.status >= 400)).toEqual([]);
    const projects = await h.client.api.listAllProjects();
    expect(projects.map((p) => p.name)).toEqual(['shop']);
    const auth = await h.client.api.getAuthServiceConfig(projects[0]!.ref);
    expect(auth.site_url).toBe('https://shop.example');
  });

  it('plans nothing on the next dry run, with GET requests only: one project list and one GET per managed section', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH), 'web.yaml': project('web', '  restapi:\n    max_rows: 100\n') });
    expect((await h.pass()).result).toBe('success');
    const since = h.emulator.requests().length;
    const before = h.emulator.requests();
    const lastTime = before[before.length - 1]!.time;
    const dry = await h.pass({ dryRun: true });
    expect(dry.result).toBe('success');
    expect(dry.plan.hasChanges).toBe(false);
    const sent = h.emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));
    expect(lastTime).toBeGreaterThan(0);
    expect(sent.every((r) => r.method === 'GET')).toBe(true);
    const routes = sent.map((r) => r.route).sort();
    expect(routes).toEqual(
      [
        '/v1/projects',
        '/v1/projects/{ref}/config/auth',
        '/v1/projects/{ref}/restapi',
        '/v1/projects/{ref}/restapi',
      ].sort(),
    );
    expect(dry.requests).toBe(4);
  });

  it('shows exactly the drift made out of band, then repairs it', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    await h.pass();
    const [shop] = await h.client.api.listAllProjects();
    await h.client.api.updateAuthServiceConfig(shop!.ref, { site_url: 'https://evil.example', jwt_exp: 60 });
    await h.client.api.updateAuthServiceConfig(shop!.ref, { smtp_pass: 'changed-out-of-band' });
    const dry = await h.pass({ dryRun: true });
    const changed = dry.plan.entries.filter((e) => e.action !== 'noop');
    expect(changed.map((e) => e.id)).toEqual(['ProjectAuth/shop/auth']);
    expect(changed[0]!.changes).toEqual([
      { path: 'auth.site_url', before: 'https://evil.example', after: 'https://shop.example' },
      { path: 'auth.smtp_pass', sensitive: true },
    ]);
    const applied = await h.pass();
    expect(applied.result).toBe('success');
    const after = await h.pass({ dryRun: true });
    expect(after.plan.hasChanges).toBe(false);
    // jwt_exp is not in the manifest: not managed, left as it is.
    expect((await h.client.api.getAuthServiceConfig(shop!.ref)).jwt_exp).toBe(60);
  });

  it('never writes a canary secret value into the state directory', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    const result = await h.pass();
    await h.pass({ dryRun: true });
    const text = JSON.stringify(result);
    expect(text).not.toContain(CANARY_DB);
    expect(text).not.toContain(CANARY_SMTP);
    for (const file of await readdir(h.stateDir, { recursive: true })) {
      const content = await readFile(join(h.stateDir, file)).catch(() => Buffer.alloc(0));
      expect(content.toString('utf8')).not.toContain(CANARY_DB);
      expect(content.toString('utf8')).not.toContain(CANARY_SMTP);
    }
  });

  it('applies nothing when the manifests have errors', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  auth:\n    site_ur: x\n') });
    const result = await h.pass();
    expect(result.result).toBe('invalid');
    expect(result.manifestErrors.length).toBeGreaterThan(0);
    expect(h.emulator.requests().filter((r) => !r.path.startsWith('/_emulator'))).toEqual([]);
  });

  it('makes the pass invalid when a secret reference does not resolve, naming it and no value', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH).replace('env: SMTP_PASS', 'env: NOT_SET_ANYWHERE') });
    const result = await h.pass();
    expect(result.result).toBe('invalid');
    expect(result.manifestErrors[0]).toMatchObject({ file: 'shop.yaml', path: '/spec/auth/smtp_pass' });
    expect(result.manifestErrors[0]!.message).toContain('env:NOT_SET_ANYWHERE');
    expect(h.emulator.requests().filter((r) => !r.path.startsWith('/_emulator'))).toEqual([]);
  });

  it('uses a placeholder for an unresolved reference in sandbox mode only', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH).replace('env: SMTP_PASS', 'env: NOT_SET_ANYWHERE') });
    const result = await h.pass({ sandbox: true });
    expect(result.result).toBe('success');
    expect((await h.pass({ sandbox: true, dryRun: true })).plan.hasChanges).toBe(false);
  });
});

describe('deletion', () => {
  it('deletes nothing when a manifest is removed under the default policy, and stops managing it', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop'), 'web.yaml': project('web') });
    await h.pass();
    await h.remove('web.yaml');
    const result = await h.pass();
    expect(result.result).toBe('success');
    expect(h.emulator.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await h.client.api.listAllProjects()).map((p) => p.name).sort()).toEqual(['shop', 'web']);
    const inventory = JSON.parse(await readFile(join(h.stateDir, 'inventory.json'), 'utf8'));
    expect(Object.keys(inventory.projects)).toEqual(['shop']);
  });

  it('deletes a removed project only under deletion: delete, and never on an empty manifest set', async () => {
    const policy = '  policy:\n    deletion: delete\n';
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', policy) });
    await h.pass();
    await h.remove('shop.yaml');
    await h.remove('org.yaml');
    const empty = await h.pass();
    expect(empty.result).toBe('failed');
    expect(empty.plan.entries.find((e) => e.id === 'Project/shop')?.action).toBe('blocked');
    expect(h.emulator.requests().filter((r) => r.method === 'DELETE')).toEqual([]);

    await h.write({ 'org.yaml': ORG });
    const dry = await h.pass({ dryRun: true });
    expect(dry.plan.entries.find((e) => e.id === 'Project/shop')?.action).toBe('delete');
    expect(h.emulator.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    const applied = await h.pass();
    expect(applied.result).toBe('success');
    expect(h.emulator.requests().filter((r) => r.method === 'DELETE' && r.route === '/v1/projects/{ref}')).toHaveLength(1);
    expect(await h.client.api.listAllProjects()).toEqual([]);
  });

  it('never deletes a project it does not manage', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  policy:\n    deletion: delete\n') });
    await h.pass();
    const [shop] = await h.client.api.listAllProjects();
    await h.client.api.createAProject({ name: 'hand-made', organization_id: shop!.organization_id, region: 'eu-west-1', db_pass: 'x-very-long-password' });
    const result = await h.pass({ dryRun: true });
    expect(result.plan.entries.some((e) => e.name === 'hand-made')).toBe(false);
  });
});

describe('policies', () => {
  it('reports drift under observe and never writes', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    await h.pass();
    await h.write({ 'shop.yaml': project('shop', `${AUTH.replace('https://shop.example', 'https://other.example')}  policy:\n    management: observe\n`) });
    const since = h.emulator.requests().length;
    const result = await h.pass();
    expect(result.result).toBe('success');
    const auth = result.plan.entries.find((e) => e.id === 'ProjectAuth/shop/auth')!;
    expect(auth.observeOnly).toBe(true);
    expect(auth.changes.map((c) => c.path)).toEqual(['auth.site_url']);
    expect(result.plan.hasChanges).toBe(false);
    expect(writes(h).slice(0).filter((r) => h.emulator.requests().indexOf(r) >= since)).toEqual([]);
    expect(result.resources.find((r) => r.id === 'ProjectAuth/shop/auth')?.state).toBe('drifted');
  });

  it('skips a suspended project entirely', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', `${AUTH}  policy:\n    suspend: true\n`) });
    const result = await h.pass();
    expect(result.plan.entries.some((e) => e.id.includes('shop'))).toBe(false);
    expect(h.emulator.requests().filter((r) => r.route.startsWith('/v1/projects/{ref}'))).toEqual([]);
  });

  it('pauses a project from `paused: true`, and restores it from `paused: false`', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  restapi:\n    max_rows: 10\n') });
    await h.pass();
    await h.write({ 'shop.yaml': project('shop', '  paused: true\n  restapi:\n    max_rows: 10\n') });
    const paused = await h.pass();
    expect(paused.result).toBe('success');
    expect(paused.outcomes.map((o) => o.entryId)).toEqual(['ProjectLifecycle/shop/paused']);
    for (let i = 0; i < 5; i++) await h.clock.advance(60_000);
    expect((await h.client.api.listAllProjects())[0]!.status).toBe('INACTIVE');
    const stays = await h.pass({ dryRun: true });
    expect(stays.plan.hasChanges).toBe(false);

    await h.write({ 'shop.yaml': project('shop', '  paused: false\n  restapi:\n    max_rows: 20\n') });
    const restored = await h.pass();
    expect(restored.result).toBe('success');
    expect((await h.client.api.listAllProjects())[0]!.status).toBe('ACTIVE_HEALTHY');
    const ref = (await h.client.api.listAllProjects())[0]!.ref;
    expect((await h.client.api.getRestapiServiceConfig(ref)).max_rows).toBe(20);
  });
});

describe('partial failure', () => {
  it('goes on with the other resources when one fails, and reports the pass as failed', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    await h.pass();
    await h.write({ 'shop.yaml': project('shop', AUTH.replace('https://shop.example', 'https://new.example').replace('500', '700')) });
    h.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/config/auth', method: 'PATCH', errorRate: 1, errorStatus: 500 }] });
    const result = await h.pass();
    expect(result.result).toBe('failed');
    const byId = Object.fromEntries(result.outcomes.map((o) => [o.entryId, o.result]));
    expect(byId['ProjectAuth/shop/auth']).toBe('failed');
    expect(byId['ProjectRestapi/shop/restapi']).toBe('success');
  });
});

describe('creation without duplicates', () => {
  it('creates a project exactly once under lost answers, 5xx and a slow COMING_UP, and configures it only once healthy', async () => {
    await h.close();
    h = await startHarness({ DB_PASS: CANARY_DB, SMTP_PASS: CANARY_SMTP }, { durations: { projectCreate: 300_000, servicesHealthy: 120_000 } });
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    h.emulator.setFaults({
      seed: 7,
      rules: [
        { route: '/v1/projects', method: 'POST', lostAnswerRate: 1, maxFaults: 1 },
        { route: '/v1/organizations', method: 'POST', lostAnswerRate: 1, maxFaults: 1 },
        { route: '/v1/projects/{ref}', method: 'GET', errorRate: 0.5, maxFaults: 4 },
        { route: '/v1/projects/{ref}/health', method: 'GET', errorRate: 0.5, maxFaults: 4 },
      ],
    });
    const result = await h.pass();
    expect(result.outcomes.filter((o) => o.entryId.startsWith('Project/') || o.entryId.startsWith('Organization/'))).toMatchObject([
      { entryId: 'Organization/acme', result: 'success' },
      { entryId: 'Project/shop', action: 'create', result: 'success' },
      // The wait is a step of its own, not a change: never an `update` of the project.
      { entryId: 'Project/shop#ready', kind: 'Project', action: 'wait', result: 'success' },
      // So is the read-back of what was written: it confirms the writes, it plans nothing.
      { entryId: 'Project/shop#verify', kind: 'Project', action: 'verify', result: 'success' },
    ]);
    const log = h.emulator.requests();
    expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(1);
    expect(log.filter((r) => r.method === 'POST' && r.route === '/v1/organizations')).toHaveLength(1);
    expect((await h.client.api.listAllProjects()).map((p) => p.name)).toEqual(['shop']);
    expect((await h.client.api.listAllOrganizations()).filter((o) => o.name === 'acme')).toHaveLength(1);
    const firstConfigWrite = log.findIndex((r) => r.method !== 'GET' && r.route.startsWith('/v1/projects/{ref}/'));
    const healthyAt = log.map((r) => `${r.route} ${r.status}`).lastIndexOf('/v1/projects/{ref}/health 200');
    expect(firstConfigWrite).toBeGreaterThan(healthyAt);
    expect(log.filter((r) => r.route === '/v1/projects/{ref}/config/auth' && r.method === 'PATCH').map((r) => r.status)).toEqual([200]);
    const intents = JSON.parse(await readFile(join(h.stateDir, 'intents.json'), 'utf8'));
    expect(intents.projects).toEqual({});
  });

  it('adopts the project a crashed pass created (found through its intent) instead of creating another', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop') });
    const org = await h.client.api.createAnOrganization({ name: 'acme' });
    // The crashed pass: intent written, create sent and applied, answer never recorded.
    await mkdir(h.stateDir, { recursive: true });
    await writeFile(
      join(h.stateDir, 'intents.json'),
      JSON.stringify({ projects: { shop: { name: 'shop', organizationId: org.id, region: 'eu-west-1', sentAt: 1 } }, organizations: {} }),
    );
    await h.client.api.createAProject({ name: 'shop', organization_id: org.id, region: 'eu-west-1', db_pass: 'a-long-db-password-1' });
    const result = await h.pass();
    expect(result.result).toBe('success');
    expect(h.emulator.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(1);
    const inventory = JSON.parse(await readFile(join(h.stateDir, 'inventory.json'), 'utf8'));
    expect(inventory.projects.shop.origin).toBe('created');
    expect(JSON.parse(await readFile(join(h.stateDir, 'intents.json'), 'utf8')).projects).toEqual({});
  });

  it('skips the dependants of a project whose creation failed, and goes on with the other projects', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    await h.pass();
    await h.write({ 'web.yaml': project('web', AUTH) });
    h.emulator.setFaults({ rules: [{ route: '/v1/projects', method: 'POST', errorRate: 1, errorStatus: 503 }] });
    const result = await h.pass();
    expect(result.result).toBe('failed');
    const byId = Object.fromEntries(result.outcomes.map((o) => [o.entryId, o.result]));
    expect(byId['Project/web']).toBe('failed');
    expect(byId['ProjectAuth/web/auth']).toBe('skipped');
    expect((await h.client.api.listAllProjects()).map((p) => p.name)).toEqual(['shop']);
  });
});

describe('observation', () => {
  it('notices a managed project deleted out of band and plans to create it again, saying so', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop') });
    await h.pass();
    const [shop] = await h.client.api.listAllProjects();
    await h.client.api.deleteAProject(shop!.ref);
    const dry = await h.pass({ dryRun: true });
    const entry = dry.plan.entries.find((e) => e.id === 'Project/shop')!;
    expect(entry.action).toBe('create');
    expect(entry.reason).toContain(shop!.ref);
    expect(dry.plan.hasChanges).toBe(true);
  });

  it('reads nothing but the project list for a paused project that stays paused', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  paused: true\n  restapi:\n    max_rows: 10\n') });
    const first = await h.pass();
    expect(first.result).toBe('success');
    for (let i = 0; i < 5; i++) await h.clock.advance(60_000);
    const since = h.emulator.requests().length;
    const dry = await h.pass({ dryRun: true });
    expect(dry.plan.hasChanges).toBe(false);
    expect(h.emulator.requests().slice(since).map((r) => r.route)).toEqual(['/v1/projects']);
  });

  it('fails the pass without applying anything when the token is refused', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop') });
    const { createClient } = await import('../../src/api/client.js');
    const { staticToken } = await import('../../src/api/auth.js');
    const bad = await createClient({ baseUrl: h.emulator.url, auth: staticToken('not-a-valid-token') });
    try {
      const result = await h.pass({ client: bad });
      expect(result.result).toBe('failed');
      expect(result.outcomes[0]!.error!.type).toBe('UnauthorizedError');
      expect(h.emulator.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'))).toEqual([]);
    } finally {
      await bad.close();
    }
  });
});

describe('organizations and adoption', () => {
  const SEED = {
    organizations: [{ slug: 'acme-inc-slug', name: 'Acme Inc' }],
    projects: [
      { ref: 'aaaaaaaaaaaaaaaaaaaa', name: 'legacy', organization: 'acme-inc-slug', region: 'eu-west-1' },
      { ref: 'bbbbbbbbbbbbbbbbbbbb', name: 'twin', organization: 'acme-inc-slug', region: 'eu-west-1' },
      { ref: 'cccccccccccccccccccc', name: 'twin', organization: 'acme-inc-slug', region: 'eu-west-1' },
      { ref: 'dddddddddddddddddddd', name: 'elsewhere', organization: 'acme-inc-slug', region: 'us-east-1' },
    ],
  };
  const ORG_BY_SLUG = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec:
  slug: acme-inc-slug
`;
  const seeded = async () => {
    await h.close();
    h = await startHarness({ DB_PASS: CANARY_DB, SMTP_PASS: CANARY_SMTP }, { seed: SEED });
  };
  const postsTo = (route: string) => h.emulator.requests().filter((r) => r.method === 'POST' && r.route === route);

  it('finds an organization by slug and adopts a project by spec.ref without creating anything', async () => {
    await seeded();
    await h.write({ 'org.yaml': ORG_BY_SLUG, 'legacy.yaml': project('legacy', '  ref: aaaaaaaaaaaaaaaaaaaa\n  restapi:\n    max_rows: 42\n') });
    const result = await h.pass();
    expect(result.result).toBe('success');
    expect(postsTo('/v1/projects')).toEqual([]);
    expect(postsTo('/v1/organizations')).toEqual([]);
    expect(result.plan.entries.find((e) => e.id === 'Project/legacy')).toMatchObject({ action: 'noop', reason: 'found by ref (aaaaaaaaaaaaaaaaaaaa)' });
    expect((await h.client.api.getRestapiServiceConfig('aaaaaaaaaaaaaaaaaaaa')).max_rows).toBe(42);
    const inventory = JSON.parse(await readFile(join(h.stateDir, 'inventory.json'), 'utf8'));
    expect(inventory.projects.legacy).toMatchObject({ ref: 'aaaaaaaaaaaaaaaaaaaa', origin: 'adopted', deletion: 'orphan' });
    expect(inventory.organizations.acme.id).toBeDefined();
    // Next pass: the cached organization id is confirmed by the project list; no organization list.
    const since = h.emulator.requests().length;
    await h.pass({ dryRun: true });
    expect(h.emulator.requests().slice(since).map((r) => r.route)).not.toContain('/v1/organizations');
  });

  it('blocks (never creates) a project whose spec.ref does not exist, and an organization slug that is not visible', async () => {
    await seeded();
    await h.write({ 'org.yaml': ORG_BY_SLUG, 'ghost.yaml': project('ghost', '  ref: zzzzzzzzzzzzzzzzzzzz\n') });
    const result = await h.pass();
    expect(result.result).toBe('failed');
    expect(result.plan.entries.find((e) => e.id === 'Project/ghost')).toMatchObject({ action: 'blocked' });
    expect(postsTo('/v1/projects')).toEqual([]);

    await h.write({ 'org.yaml': ORG_BY_SLUG.replace('acme-inc-slug', 'no-such-slug'), 'ghost.yaml': project('fresh') });
    const missingOrg = await h.pass();
    expect(missingOrg.plan.entries.find((e) => e.id === 'Organization/acme')).toMatchObject({ action: 'blocked' });
    expect(missingOrg.plan.entries.find((e) => e.id === 'Project/fresh')).toMatchObject({ action: 'blocked' });
    expect(postsTo('/v1/projects')).toEqual([]);
    expect(postsTo('/v1/organizations')).toEqual([]);
  });

  it('blocks a name that matches two live projects, and a project in another region, writing nothing to them', async () => {
    await seeded();
    await h.write({
      'org.yaml': ORG_BY_SLUG,
      'twin.yaml': project('twin', '  restapi:\n    max_rows: 7\n'),
      'elsewhere.yaml': project('elsewhere', '  restapi:\n    max_rows: 7\n'),
    });
    const result = await h.pass();
    expect(result.result).toBe('failed');
    expect(result.plan.entries.find((e) => e.id === 'Project/twin')!.reason).toContain('2 live projects are named `twin`');
    expect(result.plan.entries.find((e) => e.id === 'Project/elsewhere')).toMatchObject({
      action: 'blocked',
      changes: [{ path: 'region', before: 'us-east-1', after: 'eu-west-1' }],
    });
    expect(h.emulator.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'))).toEqual([]);
    expect(result.outcomes.find((o) => o.entryId === 'ProjectRestapi/elsewhere/restapi')?.result).toBe('skipped');
  });

  it('does not create a missing project under the observe policy', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  policy:\n    management: observe\n') });
    const result = await h.pass();
    expect(result.result).toBe('success');
    expect(result.plan.drift).toBe(1);
    expect(result.plan.entries.find((e) => e.id === 'Project/shop')).toMatchObject({ action: 'create', observeOnly: true });
    expect(result.outcomes.map((o) => o.entryId)).toEqual(['Organization/acme']);
    expect(postsTo('/v1/projects')).toEqual([]);
  });

  it('limits a pass to the selected projects', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop'), 'web.yaml': project('web') });
    const result = await h.pass({ projects: ['web'] });
    expect(result.result).toBe('success');
    expect((await h.client.api.listAllProjects()).map((p) => p.name)).toEqual(['web']);
    expect(result.plan.entries.some((e) => e.id === 'Project/shop')).toBe(false);
  });
});

describe('conflicting manifests', () => {
  it('blocks two documents that would create one project name twice, creating neither (also when the loader is bypassed)', async () => {
    await h.write({ 'org.yaml': ORG, 'a.yaml': project('a', '  name: same\n') });
    const { loadManifests } = await import('../../src/reconcile/load-manifests.js');
    const { runPassDriven } = await import('./helpers/fleet.js');
    const { silentLogger } = await import('../../src/util/logger.js');
    const manifests = await loadManifests(h.dir);
    expect(manifests.errors).toEqual([]);
    const a = manifests.documents.find((d) => d.metadata.name === 'a')!;
    // The loader refuses such a pair; the engine must not rely on that alone.
    manifests.documents.push({ ...a, metadata: { name: 'b' } } as typeof a);
    const result = await runPassDriven(h.clock, { manifests, client: h.client, stateDir: h.stateDir, dryRun: false, env: h.env, log: silentLogger, clock: h.clock });
    expect(result.result).toBe('failed');
    expect(result.plan.entries.find((e) => e.id === 'Project/a')!.reason).toBe('a and b both claim the project name `same` in organization `acme`');
    expect(result.plan.entries.find((e) => e.id === 'Project/b')!.action).toBe('blocked');
    expect(h.emulator.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toEqual([]);
  });
});

describe('deletion edge cases', () => {
  it('deletes on an empty manifest set only with allowEmpty, and never under the observe policy', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', '  policy:\n    deletion: delete\n'), 'web.yaml': project('web', '  policy:\n    deletion: delete\n    management: observe\n') });
    await h.pass();
    expect((await h.client.api.listAllProjects()).map((p) => p.name).sort()).toEqual(['shop']);
    await h.client.api.createAProject({ name: 'web', organization_id: (await h.client.api.listAllProjects())[0]!.organization_id, region: 'eu-west-1', db_pass: 'a-long-db-password-2' });
    await h.pass();
    const inventory = JSON.parse(await readFile(join(h.stateDir, 'inventory.json'), 'utf8'));
    expect(inventory.projects.web).toMatchObject({ management: 'observe', deletion: 'delete' });

    await h.remove('shop.yaml');
    await h.remove('web.yaml');
    await h.remove('org.yaml');
    const result = await h.pass({ allowEmpty: true });
    expect(result.plan.entries.find((e) => e.id === 'Project/shop')).toMatchObject({ action: 'delete' });
    expect(result.plan.entries.find((e) => e.id === 'Project/web')).toMatchObject({ action: 'delete', observeOnly: true });
    expect(h.emulator.requests().filter((r) => r.method === 'DELETE').length).toBe(1);
    expect((await h.client.api.listAllProjects()).map((p) => p.name)).toEqual(['web']);
  });

  it('changes nothing once the pass is aborted', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop') });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const result = await h.pass({ signal: controller.signal });
    expect(result.result).toBe('failed');
    expect(h.emulator.requests().filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'))).toEqual([]);
  });
});

describe('a project that does not become ready in time', () => {
  it('is created once, its configuration waits (skipped, pass failed), and the next pass configures it', async () => {
    await h.close();
    h = await startHarness({ DB_PASS: CANARY_DB, SMTP_PASS: CANARY_SMTP }, { durations: { projectCreate: 600_000 } });
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', AUTH) });
    const first = await h.pass({ wait: { initialDelayMs: 1000, maxDelayMs: 5000, timeoutMs: 60_000 } });
    expect(first.result).toBe('failed');
    const byId = Object.fromEntries(first.outcomes.map((o) => [o.entryId, o]));
    expect(byId['Project/shop']!.result).toBe('success');
    expect(byId['Project/shop#ready']).toMatchObject({ action: 'wait', result: 'failed', error: { type: 'ProjectNotReadyError' } });
    expect(byId['ProjectAuth/shop/auth']!.result).toBe('skipped');
    expect(h.emulator.requests().filter((r) => r.method === 'PATCH')).toEqual([]);

    const second = await h.pass();
    expect(second.result).toBe('success');
    expect(h.emulator.requests().filter((r) => r.method === 'POST' && r.route === '/v1/projects')).toHaveLength(1);
    const [shop] = await h.client.api.listAllProjects();
    expect((await h.client.api.getAuthServiceConfig(shop!.ref)).site_url).toBe('https://shop.example');
  });
});
