// The root key: a change of an existing key is blocked without the exact confirmation
// sentence (data encrypted under the old key could become unreadable) and applied with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_KEY_CHANGE_CONFIRMATION } from '../../src/manifests/schema-source.js';
import { cryptoextConfig } from '../../src/reconcile/kinds/config/cryptoext.js';
import { applies, applyAll, createLiveProject, envRef, planWith, projectDocument, startHarness, writes, type Harness } from './harness.js';

// A canary in the only form the service takes (64 hex characters), searched for in every entry.
const ROOT_KEY = 'c0ffee00'.repeat(8);
const OTHER_KEY = '5eed1e55'.repeat(8);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.env.ROOT_KEY = ROOT_KEY;
});
afterAll(async () => {
  await h?.close();
});

const unconfirmed = projectDocument('vault', { cryptoext: { root_key: envRef('ROOT_KEY') } as never });
const confirmed = projectDocument('vault', { cryptoext: { root_key: envRef('ROOT_KEY'), confirm_root_key_change: ROOT_KEY_CHANGE_CONFIRMATION } as never });

describe('cryptoext root key', () => {
  it('sets the key of a project created in this pass without confirmation, never showing it', async () => {
    const fresh = await planWith(h, cryptoextConfig, unconfirmed, undefined);
    expect(fresh.requests).toEqual([]);
    expect(fresh.entries[0]!).toMatchObject({ action: 'create', changes: [{ path: 'cryptoext.root_key', sensitive: true }] });
    expect(JSON.stringify(fresh.entries)).not.toContain(ROOT_KEY);
    const ref = await createLiveProject(h, 'vault-new');
    fresh.ctx.projectRefs.set('vault', ref);
    await applyAll(h, fresh);
    const steady = await planWith(h, cryptoextConfig, unconfirmed, ref);
    expect(steady.entries[0]!.action).toBe('noop');
    expect(steady.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v1/projects/${ref}/cryptoext`]);
  });

  it('blocks a change of an existing key without the confirmation and applies it with it', async () => {
    const ref = await createLiveProject(h, 'vault-existing');
    const liveKey = (await h.client.api.getCryptoextConfig(ref)).root_key;

    const blocked = await planWith(h, cryptoextConfig, unconfirmed, ref);
    const entry = blocked.entries[0]!;
    expect(entry.action).toBe('blocked');
    expect(applies(entry)).toBe(false);
    expect(entry.reason).toContain('confirm_root_key_change');
    expect(entry.reason).toContain(ROOT_KEY_CHANGE_CONFIRMATION);
    expect(entry.changes).toEqual([{ path: 'cryptoext.root_key', sensitive: true }]);
    const text = JSON.stringify(blocked.entries);
    expect(text).not.toContain(ROOT_KEY);
    expect(text).not.toContain(liveKey);

    // A near miss of the sentence is no confirmation.
    const nearMiss = projectDocument('vault', { cryptoext: { root_key: envRef('ROOT_KEY'), confirm_root_key_change: 'i understand' } as never });
    expect((await planWith(h, cryptoextConfig, nearMiss, ref)).entries[0]!.action).toBe('blocked');
    expect((await h.client.api.getCryptoextConfig(ref)).root_key).toBe(liveKey);

    const allowed = await planWith(h, cryptoextConfig, confirmed, ref);
    expect(allowed.entries[0]!.action).toBe('update');
    const sent = await applyAll(h, allowed);
    expect(writes(sent).map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /v1/projects/${ref}/cryptoext`]);
    expect((await planWith(h, cryptoextConfig, unconfirmed, ref)).entries[0]!.action).toBe('noop');

    // Changed out of band: detected (and blocked again without the confirmation).
    await h.client.api.updateCryptoextConfig(ref, { root_key: OTHER_KEY });
    const drifted = await planWith(h, cryptoextConfig, unconfirmed, ref);
    expect(drifted.entries[0]!.action).toBe('blocked');
    expect(JSON.stringify(drifted.entries)).not.toContain(OTHER_KEY);
  });
});
