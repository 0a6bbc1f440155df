// Every configuration section through the engine's pass against the emulator: applied to an
// adopted project, then a dry run costs the project list plus exactly one GET per managed
// section, and no secret appears in the result.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManifestSet, OrganizationDocument } from '../../src/manifests/types.js';
import { runPass } from '../../src/reconcile/engine.js';
import { createLiveProject, envRef, projectDocument, silentLog, startHarness, type Harness } from './harness.js';

const CANARIES = { SMTP_PASS: 'canary-pass-smtp-4e1f0a', HOOK_SECRET: 'canary-pass-hook-88b2c1', ROOT_KEY: 'beadfeed'.repeat(8) };

let h: Harness;
let stateDir: string;
beforeAll(async () => {
  h = await startHarness();
  stateDir = await mkdtemp(join(tmpdir(), 'config-pass-'));
});
afterAll(async () => {
  await h?.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('configuration sections in a pass', () => {
  it('applies every section, then a no-change dry run costs one list plus one GET per section', async () => {
    const ref = await createLiveProject(h, 'fleet-app');
    const organization: OrganizationDocument = {
      apiVersion: 'reconciler/v1',
      kind: 'Organization',
      metadata: { name: 'org' },
      spec: { slug: h.orgId },
      source: { file: 'org.yaml', line: 1, column: 1, dir: '/nonexistent' },
    };
    const project = projectDocument('fleet-app', {
      ref,
      auth: { site_url: 'https://fleet.example.com', smtp_pass: envRef('SMTP_PASS'), hook_send_email_secrets: envRef('HOOK_SECRET') } as never,
      postgres: { max_connections: 110 },
      pooler: { default_pool_size: 22 },
      restapi: { max_rows: 750 },
      storage: { features: { s3Protocol: { enabled: false } } },
      network_restrictions: { dbAllowedCidrs: ['10.0.0.0/8'] },
      ssl_enforcement: { database: true },
      cryptoext: { root_key: envRef('ROOT_KEY'), confirm_root_key_change: 'I understand encrypted data may become unreadable' } as never,
      read_replicas: [{ read_replica_region: 'us-west-1' }],
    });
    const manifests: ManifestSet = { root: '/nonexistent', documents: [organization, project], errors: [] };
    const env = { ...CANARIES };

    const applied = await runPass({ manifests, client: h.client, stateDir, dryRun: false, env, log: silentLog, clock: h.clock });
    expect(applied.result).toBe('success');
    // The read-back of what was written is a step of the apply, an outcome of its own.
    expect(applied.outcomes.filter((o) => o.action === 'verify')).toMatchObject([{ entryId: `Project/${project.metadata.name}#verify`, kind: 'Project', result: 'success' }]);
    const configOutcomes = applied.outcomes.filter((o) => o.kind.startsWith('Project') && o.kind !== 'ProjectLifecycle' && o.action !== 'verify');
    expect(configOutcomes.map((o) => o.kind).sort()).toEqual(
      ['ProjectAuth', 'ProjectCryptoext', 'ProjectNetworkRestrictions', 'ProjectPooler', 'ProjectPostgres', 'ProjectReadReplicas', 'ProjectRestapi', 'ProjectSslEnforcement', 'ProjectStorage'].sort(),
    );
    expect(configOutcomes.every((o) => o.result === 'success')).toBe(true);
    await h.clock.advance(10 * 60_000);

    const mark = h.emulator.requests().length;
    const dry = await runPass({ manifests, client: h.client, stateDir, dryRun: true, env, log: silentLog, clock: h.clock });
    const sent = h.emulator.requests().slice(mark);
    expect(dry.plan.hasChanges).toBe(false);
    expect(sent.every((r) => r.method === 'GET')).toBe(true);
    const base = `/v1/projects/${ref}`;
    expect(sent.map((r) => r.path.split('?')[0]).sort()).toEqual(
      [
        '/v1/projects',
        `${base}/config/auth`,
        `${base}/config/database/postgres`,
        `${base}/config/database/pooler`,
        `${base}/restapi`,
        `${base}/config/storage`,
        `${base}/network-restrictions`,
        `${base}/ssl-enforcement`,
        `${base}/cryptoext`,
      ].sort(),
    );

    const text = JSON.stringify([applied, dry]);
    for (const canary of Object.values(CANARIES)) expect(text).not.toContain(canary);
  });
});

describe('a project created by the pass', () => {
  it('gets its root key without a confirmation: the live key is the fresh default', async () => {
    const key = 'f00dcafe'.repeat(8);
    const organization: OrganizationDocument = {
      apiVersion: 'reconciler/v1',
      kind: 'Organization',
      metadata: { name: 'org' },
      spec: { slug: h.orgId },
      source: { file: 'org.yaml', line: 1, column: 1, dir: '/nonexistent' },
    };
    const project = projectDocument('fresh-vault', { db_pass: envRef('DB_PASS'), cryptoext: { root_key: envRef('ROOT_KEY') } as never });
    const manifests: ManifestSet = { root: '/nonexistent', documents: [organization, project], errors: [] };
    const env = { DB_PASS: 'fresh-vault-db-pass-1', ROOT_KEY: key };
    const dir = await mkdtemp(join(tmpdir(), 'config-pass-new-'));
    try {
      // The engine waits for the new project on the manual clock: move it along meanwhile.
      let done = false;
      const pass = runPass({ manifests, client: h.client, stateDir: dir, dryRun: false, env, log: silentLog, clock: h.clock }).finally(() => {
        done = true;
      });
      while (!done) await h.clock.advance(5_000);
      const result = await pass;
      const outcome = result.outcomes.find((o) => o.kind === 'ProjectCryptoext');
      expect(outcome?.result).toBe('success');
      const ref = (await h.client.api.listAllProjects()).find((p) => p.name === 'fresh-vault')!.ref;
      expect((await h.client.api.getCryptoextConfig(ref)).root_key).toBe(key);
      expect(JSON.stringify(result)).not.toContain(key);

      // The next pass sees an existing project: the same key is in sync, another one would be blocked.
      const next = await runPass({ manifests, client: h.client, stateDir: dir, dryRun: true, env, log: silentLog, clock: h.clock });
      expect(next.plan.entries.find((e) => e.kind === 'ProjectCryptoext')?.action).toBe('noop');
      const rotated = await runPass({ manifests, client: h.client, stateDir: dir, dryRun: true, env: { ...env, ROOT_KEY: 'dec0de00'.repeat(8) }, log: silentLog, clock: h.clock });
      expect(rotated.plan.entries.find((e) => e.kind === 'ProjectCryptoext')?.action).toBe('blocked');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
