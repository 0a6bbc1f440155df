import { createHmac } from 'node:crypto';
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

describe('emulator configuration endpoints', () => {
  it('auth: full defaults; secret fields come back as HMAC-SHA256 keyed by the project ref; PATCH changes only what it names', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const before = await call(h.emulator, 'GET', `/v1/projects/${ref}/config/auth`);
    expect(Object.keys(before.body).length).toBe(189);
    expect(before.body.site_url).toBe('http://localhost:3000');
    expect(before.body.smtp_pass).toBeNull();
    const patched = await call(h.emulator, 'PATCH', `/v1/projects/${ref}/config/auth`, {
      body: { smtp_pass: 'hunter2', external_idp01_secret: 'idp-secret', site_url: 'https://app.example.org' },
    });
    expect(patched.status).toBe(200);
    const hmac = (value: string) => createHmac('sha256', ref).update(value).digest('hex');
    expect(patched.body.smtp_pass).toBe(hmac('hunter2'));
    expect(patched.body.external_idp01_secret).toBe(hmac('idp-secret'));
    expect(patched.text).not.toContain('hunter2');
    expect(patched.body.site_url).toBe('https://app.example.org');
    expect(patched.body.jwt_exp).toBe(before.body.jwt_exp);
    const unknown = await call(h.emulator, 'PATCH', `/v1/projects/${ref}/config/auth`, { body: { site_urll: 'x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('site_urll');
  });

  it('postgres: GET returns only the parameters that were set; restart_database is never stored', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/config/database/postgres`)).body).toEqual({});
    const put = await call(h.emulator, 'PUT', `/v1/projects/${ref}/config/database/postgres`, { body: { max_connections: 200, restart_database: true } });
    expect(put.body).toEqual({ max_connections: 200 });
    await call(h.emulator, 'PUT', `/v1/projects/${ref}/config/database/postgres`, { body: { work_mem: '8MB' } });
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/config/database/postgres`)).body).toEqual({ max_connections: 200, work_mem: '8MB' });
    const bad = await call(h.emulator, 'PUT', `/v1/projects/${ref}/config/database/postgres`, { body: { max_connections: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('max_connections');
  });

  it('read replicas appear in the pooler list as READ_REPLICA and are removed by identifier', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/read-replicas/setup`, { body: { read_replica_region: 'ap-south-1' } })).status).toBe(201);
    const pooler = (await call(h.emulator, 'GET', `/v1/projects/${ref}/config/database/pooler`)).body;
    expect(pooler.map((p: { database_type: string }) => p.database_type)).toEqual(['PRIMARY', 'READ_REPLICA']);
    const replica = pooler[1].identifier as string;
    expect(replica).toContain('ap-south-1');
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/read-replicas/remove`, { body: { database_identifier: 'nope' } })).status).toBe(404);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/read-replicas/remove`, { body: { database_identifier: replica } })).status).toBe(201);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/config/database/pooler`)).body).toHaveLength(1);
  });

  it('custom hostname moves 1_not_started .. 5_services_reconfigured; each action only in its state', async () => {
    const h = await harness({ durations: { customHostnameVerification: 60_000, customHostnameOriginSetup: 30_000 } });
    const ref = await healthyProject(h);
    const path = `/v1/projects/${ref}/custom-hostname`;
    expect((await call(h.emulator, 'GET', path)).body.status).toBe('1_not_started');
    expect((await call(h.emulator, 'POST', `${path}/reverify`)).status).toBe(400);
    expect((await call(h.emulator, 'POST', `${path}/activate`)).status).toBe(400);
    expect((await call(h.emulator, 'POST', `${path}/initialize`, { body: { custom_hostname: 'not a host' } })).status).toBe(400);
    const init = await call(h.emulator, 'POST', `${path}/initialize`, { body: { custom_hostname: 'api.example.org' } });
    expect(init.body.status).toBe('2_initiated');
    expect(init.body.data.result.ssl.validation_records[0].txt_name).toBe('_acme-challenge.api.example.org');
    expect((await call(h.emulator, 'POST', `${path}/reverify`)).body.status).toBe('2_initiated');
    expect((await call(h.emulator, 'POST', `${path}/activate`)).status).toBe(400);
    await h.clock.advance(60_000);
    expect((await call(h.emulator, 'POST', `${path}/reverify`)).body.status).toBe('3_challenge_verified');
    expect((await call(h.emulator, 'POST', `${path}/activate`)).status).toBe(400);
    await h.clock.advance(30_000);
    expect((await call(h.emulator, 'GET', path)).body.status).toBe('4_origin_setup_completed');
    expect((await call(h.emulator, 'POST', `${path}/activate`)).body.status).toBe('5_services_reconfigured');
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/vanity-subdomain`)).body.status).toBe('custom-domain-used');
  });

  it('custom hostname initialize and reverify have a stricter limit of their own (10 per window)', async () => {
    const h = await harness();
    const ref = await healthyProject(h);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await call(h.emulator, 'POST', `/v1/projects/${ref}/custom-hostname/initialize`, { body: { custom_hostname: `h${i}.example.org` } })).status);
    }
    expect(statuses).toEqual([...Array(10).fill(201), 429]);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/custom-hostname`)).body.custom_hostname).toBe('h9.example.org');
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/custom-hostname/reverify`)).status).toBe(201);
    expect((await call(h.emulator, 'GET', '/v1/projects')).status).toBe(200);
  });

  it('vanity subdomain: taken by another project means unavailable; activation and deactivation', async () => {
    const h = await harness();
    const a = await healthyProject(h, 'a');
    const b = await healthyProject(h, 'b');
    const check = (ref: string, name: string) => call(h.emulator, 'POST', `/v1/projects/${ref}/vanity-subdomain/check-availability`, { body: { vanity_subdomain: name } });
    expect((await check(a, 'acme')).body).toEqual({ available: true });
    expect((await check(a, 'www')).body).toEqual({ available: false });
    expect((await check(a, 'Bad_Name')).status).toBe(400);
    const activated = await call(h.emulator, 'POST', `/v1/projects/${a}/vanity-subdomain/activate`, { body: { vanity_subdomain: 'acme' } });
    expect(activated.status).toBe(201);
    expect(activated.body.custom_domain).toBe('acme.platform.test');
    expect((await call(h.emulator, 'GET', `/v1/projects/${a}/vanity-subdomain`)).body).toEqual({ status: 'active', custom_domain: 'acme.platform.test' });
    expect((await check(b, 'acme')).body).toEqual({ available: false });
    expect((await call(h.emulator, 'POST', `/v1/projects/${b}/vanity-subdomain/activate`, { body: { vanity_subdomain: 'acme' } })).status).toBe(400);
    expect((await call(h.emulator, 'DELETE', `/v1/projects/${a}/vanity-subdomain`)).status).toBe(200);
    expect((await call(h.emulator, 'DELETE', `/v1/projects/${a}/vanity-subdomain`)).status).toBe(400);
    expect((await check(b, 'acme')).body).toEqual({ available: true });
  });

  it('upgrade steps through its progress values with status UPGRADING; database.version changes at the end', async () => {
    const h = await harness({ durations: { upgradeStep: 1_000 } });
    const ref = await healthyProject(h);
    const eligibility = await call(h.emulator, 'GET', `/v1/projects/${ref}/upgrade/eligibility`);
    expect(eligibility.body.eligible).toBe(true);
    expect(eligibility.body.target_upgrade_versions.map((t: { postgres_version: string }) => t.postgres_version)).toEqual(['17']);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/upgrade`, { body: { target_version: '13' } })).status).toBe(400);
    const started = await call(h.emulator, 'POST', `/v1/projects/${ref}/upgrade`, { body: { target_version: '17' } });
    expect(started.status).toBe(201);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body.status).toBe('UPGRADING');
    expect((await call(h.emulator, 'PATCH', `/v1/projects/${ref}/config/auth`, { body: { site_url: 'https://x.test' } })).status).toBe(400);
    expect((await call(h.emulator, 'POST', `/v1/projects/${ref}/upgrade`, { body: { target_version: '17' } })).status).toBe(400);
    const seen: string[] = [];
    for (let i = 0; i <= 10; i++) {
      seen.push((await call(h.emulator, 'GET', `/v1/projects/${ref}/upgrade/status?tracking_id=${started.body.tracking_id}`)).body.databaseUpgradeStatus.progress);
      await h.clock.advance(1_000);
    }
    expect(seen).toEqual([
      '0_requested', '1_started', '2_launched_upgraded_instance', '3_detached_volume_from_upgraded_instance',
      '4_attached_volume_to_original_instance', '5_initiated_data_upgrade', '6_completed_data_upgrade',
      '7_detached_volume_from_original_instance', '8_attached_volume_to_upgraded_instance', '9_completed_upgrade',
      '10_completed_post_physical_backup',
    ]);
    const project = (await call(h.emulator, 'GET', `/v1/projects/${ref}`)).body;
    expect(project.status).toBe('ACTIVE_HEALTHY');
    expect(project.database.version).toMatch(/^17\./);
    expect(project.database.postgres_engine).toBe('17');
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/upgrade/status`)).body.databaseUpgradeStatus.status).toBe(2);
  });

  it('read-only mode: temporary-disable lifts it for 15 minutes', async () => {
    const h = await harness({ seed: { projects: [{ ref: 'readonlyreadonlyread', name: 'ro', organization: 'Default Organization', config: { readonly: true } }] } });
    const path = '/v1/projects/readonlyreadonlyread/readonly';
    expect((await call(h.emulator, 'GET', path)).body).toEqual({ enabled: true, override_enabled: false, override_active_until: '' });
    const write = () => call(h.emulator, 'POST', '/v1/projects/readonlyreadonlyread/database/query', { body: { query: 'create table t (id int)' } });
    expect((await write()).status).toBe(400);
    expect((await call(h.emulator, 'POST', `${path}/temporary-disable`)).status).toBe(201);
    const during = (await call(h.emulator, 'GET', path)).body;
    expect(during.override_enabled).toBe(true);
    expect(Date.parse(during.override_active_until) - h.emulator.now()).toBe(15 * 60_000);
    expect((await write()).status).toBe(201);
    await h.clock.advance(15 * 60_000);
    expect((await call(h.emulator, 'GET', path)).body.override_enabled).toBe(false);
    expect((await write()).status).toBe(400);
  });

  it('network restrictions are stored, then applied; invalid CIDRs are refused without change', async () => {
    const h = await harness({ durations: { networkRestrictionsApply: 5_000 } });
    const ref = await healthyProject(h);
    const bad = await call(h.emulator, 'POST', `/v1/projects/${ref}/network-restrictions/apply`, { body: { dbAllowedCidrs: ['10.0.0.0/8', '300.1.1.1/8'] } });
    expect(bad.status).toBe(400);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/network-restrictions`)).body.config.dbAllowedCidrs).toEqual(['0.0.0.0/0']);
    const applied = await call(h.emulator, 'POST', `/v1/projects/${ref}/network-restrictions/apply`, { body: { dbAllowedCidrs: ['10.0.0.0/8'], dbAllowedCidrsV6: ['2001:db8::/32'] } });
    expect(applied.body).toMatchObject({ status: 'stored', config: { dbAllowedCidrs: ['10.0.0.0/8'], dbAllowedCidrsV6: ['2001:db8::/32'] }, old_config: { dbAllowedCidrs: ['0.0.0.0/0'] } });
    await h.clock.advance(5_000);
    expect((await call(h.emulator, 'GET', `/v1/projects/${ref}/network-restrictions`)).body.status).toBe('applied');
  });

  it('refuses configuration writes to a paused project and answers reads from the stored configuration', async () => {
    const h = await harness({ seed: { projects: [{ ref: 'pausedprojectpausedp', name: 'p', organization: 'Default Organization', status: 'INACTIVE' }] } });
    const base = '/v1/projects/pausedprojectpausedp';
    for (const [method, path, body] of [
      ['PATCH', '/config/auth', { site_url: 'https://x.test' }],
      ['PUT', '/config/database/postgres', { max_connections: 50 }],
      ['PATCH', '/restapi', { max_rows: 10 }],
      ['POST', '/secrets', [{ name: 'A', value: 'b' }]],
      ['PUT', '/ssl-enforcement', { requestedConfig: { database: true } }],
    ] as const) {
      const answer = await call(h.emulator, method, `${base}${path}`, { body });
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(answer.body.message).toMatch(/paused/);
    }
    expect((await call(h.emulator, 'GET', `${base}/config/auth`)).status).toBe(200);
    const health = await call(h.emulator, 'GET', `${base}/health?services=db`);
    expect(health.body[0].status).toBe('UNHEALTHY');
  });
});
