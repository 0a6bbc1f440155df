import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { observationFailed, observeProject } from '../../src/reconcile/kinds/observed.js';
import { ManualClock } from '../../src/util/clock.js';

describe('observeProject (observed-only facts, over HTTP against the emulator)', () => {
  let emulator: RunningEmulator;
  let client: ApiClient;
  let ref: string;

  beforeAll(async () => {
    emulator = await startEmulator({
      port: 0,
      rateLimit: { limit: 600, windowMs: 1000 },
      seed: {
        organizations: [{ name: 'Obs' }],
        projects: [{ name: 'obs', organization: 'Obs', pitr_enabled: true, config: { readonly: true, network_bans: ['192.0.2.7', '192.0.2.1'] } }],
      },
    });
    client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 500, windowMs: 1000 }, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    ref = (await client.api.listAllProjects()).find((p) => p.name === 'obs')!.ref;
  });
  afterAll(async () => {
    await client?.close();
    await emulator?.close();
  });

  it('reads every fact with six requests, never an API key value or hash', async () => {
    const since = emulator.requests().length;
    const clock = new ManualClock(1_700_000_000_000);
    const state = await observeProject(client.api, ref, { clock });
    const sent = emulator.requests().slice(since).map((r) => `${r.method} ${r.route}`).sort();
    expect(sent).toEqual([
      'GET /v1/projects/{ref}/api-keys',
      'GET /v1/projects/{ref}/database/backups',
      'GET /v1/projects/{ref}/health',
      'GET /v1/projects/{ref}/readonly',
      'GET /v1/projects/{ref}/upgrade/status',
      'POST /v1/projects/{ref}/network-bans/retrieve',
    ]);
    expect(state.ref).toBe(ref);
    expect(state.observedAt).toBe(1_700_000_000_000);
    expect(state.errors).toEqual([]);
    expect(observationFailed(state)).toBe(false);
    expect(state.networkBans).toEqual({ bannedIpv4: ['192.0.2.1', '192.0.2.7'] });
    expect(state.readOnly!.enabled).toBe(true);
    expect(state.backups!.pitrEnabled).toBe(true);
    expect(state.health!.map((h) => h.name)).toEqual(['auth', 'bouncer', 'db', 'db_postgres_user', 'pooler', 'realtime', 'rest', 'storage']);
    expect(state.upgrade).toBeNull();
    expect(state.apiKeys!.length).toBeGreaterThan(0);
    for (const key of state.apiKeys!) expect(Object.keys(key).every((k) => ['name', 'type', 'prefix', 'id'].includes(k))).toBe(true);

    const revealed = await client.api.getProjectApiKeys(ref, { query: { reveal: true } });
    const text = JSON.stringify(state);
    for (const key of revealed) {
      if (key.api_key) expect(text).not.toContain(key.api_key);
      if (key.hash) expect(text).not.toContain(key.hash);
    }
  });

  it('reads only the facts asked for, at the priority asked for', async () => {
    const since = emulator.requests().length;
    const state = await observeProject(client.api, ref, { resources: ['health'], priority: 'drift' });
    expect(emulator.requests().slice(since).map((r) => r.route)).toEqual(['/v1/projects/{ref}/health']);
    expect(state.networkBans).toBeUndefined();
    expect(state.health).toBeDefined();
  });

  it('a failed read is reported and the others still count', async () => {
    emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/readonly', errorRate: 1, errorStatus: 503 }] });
    try {
      const state = await observeProject(client.api, ref);
      expect(state.errors.map((e) => e.resource)).toEqual(['readOnly']);
      expect(state.readOnly).toBeUndefined();
      expect(state.backups).toBeDefined();
      expect(observationFailed(state)).toBe(true);
    } finally {
      emulator.setFaults({});
    }
  });

  it('validates its options up front', async () => {
    await expect(observeProject(client.api, '')).rejects.toThrow('Expected `ref` to be a non-empty string, got `` (string)');
    await expect(observeProject(client.api, ref, { resources: ['keys' as never] })).rejects.toThrow('Expected `resources` to hold only');
  });
});
