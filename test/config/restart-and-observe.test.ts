// `restart_database` is sent only when the manifest asks; the observe policy never writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_KEY_CHANGE_CONFIRMATION } from '../../src/manifests/schema-source.js';
import { KIND_MODULES } from '../../src/reconcile/registry.js';
import { postgresConfig } from '../../src/reconcile/kinds/config/postgres.js';
import { applies, applyAll, contextFor, createLiveProject, envRef, planWith, projectDocument, recordingApi, scopeFor, startHarness, writes, type Harness } from './harness.js';

const OBSERVED_ROOT_KEY = 'ab12cd34'.repeat(8);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.env.OBSERVED_SMTP = 'canary-observed-smtp-11ee';
  h.env.OBSERVED_ROOT_KEY = OBSERVED_ROOT_KEY;
});
afterAll(async () => {
  await h?.close();
});

describe('postgres restart_database', () => {
  it('is sent only when the manifest asks for it', async () => {
    const ref = await createLiveProject(h, 'pg-restart');
    const recorder = recordingApi(h);
    const puts = () => recorder.sent.filter((r) => r.method === 'PUT').map((r) => r.body as Record<string, unknown>);

    const quiet = projectDocument('pg-restart', { postgres: { max_connections: 150 } });
    const first = await planWith(h, postgresConfig, quiet, ref, { api: recorder.api });
    expect(first.entries[0]!.reason).toBeUndefined();
    await applyAll(h, first);
    expect(puts()).toEqual([{ max_connections: 150 }]);

    const restart = projectDocument('pg-restart', { postgres: { max_connections: 160, restart_database: true } as never });
    const second = await planWith(h, postgresConfig, restart, ref, { api: recorder.api });
    // The flag is an instruction, not a field: never a diff of its own.
    expect(second.entries[0]!.changes).toEqual([{ path: 'postgres.max_connections', before: 150, after: 160 }]);
    expect(second.entries[0]!.reason).toContain('restart');
    await applyAll(h, second);
    expect(puts()[1]).toEqual({ max_connections: 160, restart_database: true });

    // In sync with restart asked: nothing written, so no restart either.
    const third = await planWith(h, postgresConfig, restart, ref, { api: recorder.api });
    expect(third.entries[0]!.action).toBe('noop');
    expect(applies(third.entries[0]!)).toBe(false);
  });
});

describe('observe policy', () => {
  it('reports drift of every section and never writes, not even an availability check', async () => {
    const ref = await createLiveProject(h, 'observed');
    const document = projectDocument('observed', {
      policy: { management: 'observe' },
      auth: { site_url: 'https://observed.example.com', smtp_pass: envRef('OBSERVED_SMTP') } as never,
      postgres: { max_connections: 140, restart_database: true } as never,
      pooler: { default_pool_size: 40 },
      restapi: { max_rows: 42 },
      storage: { fileSizeLimit: 2048 },
      network_restrictions: { dbAllowedCidrs: ['10.1.0.0/16'] },
      ssl_enforcement: { database: true },
      cryptoext: { root_key: envRef('OBSERVED_ROOT_KEY'), confirm_root_key_change: ROOT_KEY_CHANGE_CONFIRMATION } as never,
      read_replicas: [{ read_replica_region: 'us-west-2' }],
      vanity_subdomain: { vanity_subdomain: 'observed-app' },
      custom_hostname: { custom_hostname: 'observed.example.org' },
      postgres_version: '17',
    });
    const scope = await scopeFor(h, document, ref);
    const ctx = contextFor(h, document, { refs: { observed: ref } });
    const mark = h.emulator.requests().length;
    const config = KIND_MODULES.filter((m) => m.kind.startsWith('Project'));
    const entries = [];
    for (const module of config) {
      if (!module.manages(scope, ctx)) continue;
      for (const entry of await module.plan(scope, ctx)) {
        expect(applies(entry), entry.id).toBe(false);
        entries.push(entry);
      }
    }
    const sent = h.emulator.requests().slice(mark);
    expect(writes(sent)).toEqual([]);
    const drifting = entries.filter((e) => e.action === 'update');
    expect(drifting.map((e) => e.kind).sort()).toEqual(
      ['ProjectAuth', 'ProjectCryptoext', 'ProjectCustomHostname', 'ProjectNetworkRestrictions', 'ProjectPooler', 'ProjectPostgres', 'ProjectPostgresVersion', 'ProjectReadReplicas', 'ProjectRestapi', 'ProjectSslEnforcement', 'ProjectStorage', 'ProjectVanitySubdomain'].sort(),
    );
    for (const entry of drifting) expect(entry.observeOnly, entry.id).toBe(true);
    const text = JSON.stringify(entries);
    expect(text).not.toContain('canary-observed-smtp-11ee');
    expect(text).not.toContain(OBSERVED_ROOT_KEY);
    // Nothing changed live.
    expect((await h.client.api.getPostgresConfig(ref)).max_connections).toBeUndefined();
  });
});
