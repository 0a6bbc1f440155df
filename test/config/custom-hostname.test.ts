// The custom hostname followed through its statuses on the emulator's manual clock:
// initialize, reverify while DNS is pending (pending, never failed), wait for the origin,
// activate, in sync.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customHostnameConfig } from '../../src/reconcile/kinds/config/custom-hostname.js';
import { applies, applyAll, createLiveProject, DURATIONS, gets, planWith, projectDocument, startHarness, writes, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const HOST = 'api.hosted.example.org';

describe('custom hostname', () => {
  it('is initialized, reverified while pending, activated once the origin is set up', async () => {
    const document = projectDocument('hosted', { custom_hostname: { custom_hostname: HOST } });
    const fresh = await planWith(h, customHostnameConfig, document, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries[0]!).toMatchObject({ action: 'create', changes: [{ path: 'custom_hostname.custom_hostname', after: HOST }] });

    const ref = await createLiveProject(h, 'hosted');
    const base = `/v1/projects/${ref}/custom-hostname`;

    const init = await planWith(h, customHostnameConfig, document, ref);
    expect(init.entries[0]!).toMatchObject({ action: 'update', changes: [{ path: 'custom_hostname.custom_hostname', after: HOST }] });
    expect(init.entries[0]!.pending).toBeUndefined();
    expect(writes(await applyAll(h, init)).map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${base}/initialize`]);

    // DNS not published yet: pending with the records to create; the reverify does not fail the apply.
    for (let i = 0; i < 2; i++) {
      const waiting = await planWith(h, customHostnameConfig, document, ref);
      const entry = waiting.entries[0]!;
      expect(entry.pending).toBe(true);
      expect(entry.action).toBe('update');
      expect(entry.reason).toContain('waiting for DNS verification');
      expect(entry.changes).toEqual([{ path: 'custom_hostname.status', before: '2_initiated', after: '3_challenge_verified' }]);
      const sent = await applyAll(h, waiting);
      expect(writes(sent).map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${base}/reverify`]);
      await h.clock.advance(DURATIONS.customHostnameVerification / 4);
    }

    // The records are published: the next reverify succeeds.
    await h.clock.advance(DURATIONS.customHostnameVerification);
    const verify = await planWith(h, customHostnameConfig, document, ref);
    expect(verify.entries[0]!.pending).toBe(true);
    await applyAll(h, verify);

    const origin = await planWith(h, customHostnameConfig, document, ref);
    expect(origin.entries[0]!).toMatchObject({ action: 'noop', pending: true });
    expect(origin.entries[0]!.reason).toContain('origin');
    expect(applies(origin.entries[0]!)).toBe(false);

    await h.clock.advance(DURATIONS.customHostnameOriginSetup);
    const activate = await planWith(h, customHostnameConfig, document, ref);
    expect(activate.entries[0]!).toMatchObject({
      action: 'update',
      changes: [{ path: 'custom_hostname.status', before: '4_origin_setup_completed', after: '5_services_reconfigured' }],
    });
    expect(activate.entries[0]!.pending).toBeUndefined();
    expect(writes(await applyAll(h, activate)).map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${base}/activate`]);

    const done = await planWith(h, customHostnameConfig, document, ref);
    expect(done.entries[0]!.action).toBe('noop');
    expect(done.entries[0]!.pending).toBeUndefined();
    expect(done.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${base}`]);

    // Initialized out of band with another hostname: exactly that drift.
    await h.client.api.updateHostnameConfig(ref, { custom_hostname: 'rogue.example.org' });
    const rogue = await planWith(h, customHostnameConfig, document, ref);
    expect(rogue.entries[0]!).toMatchObject({
      action: 'update',
      changes: [{ path: 'custom_hostname.custom_hostname', before: 'rogue.example.org', after: HOST }],
    });

    // Another hostname in the manifest: initialize again.
    const moved = projectDocument('hosted', { custom_hostname: { custom_hostname: 'www.hosted.example.org' } });
    const again = await planWith(h, customHostnameConfig, moved, ref);
    expect(again.entries[0]!).toMatchObject({
      action: 'update',
      changes: [{ path: 'custom_hostname.custom_hostname', before: 'rogue.example.org', after: 'www.hosted.example.org' }],
    });
    expect(gets(again.requests)).toHaveLength(1);
  });

  it('stays verified without activating when activate is false', async () => {
    const document = projectDocument('hosted-off', { custom_hostname: { custom_hostname: 'off.example.org', activate: false } });
    const ref = await createLiveProject(h, 'hosted-off');
    const init = await planWith(h, customHostnameConfig, document, ref);
    await applyAll(h, init);
    await h.clock.advance(DURATIONS.customHostnameVerification + 1);
    const verify = await planWith(h, customHostnameConfig, document, ref);
    await applyAll(h, verify);
    await h.clock.advance(DURATIONS.customHostnameOriginSetup + 1);
    const verified = await planWith(h, customHostnameConfig, document, ref);
    expect(verified.entries[0]!.action).toBe('noop');
    expect(verified.entries[0]!.reason).toContain('activate: false');
  });
});
