// Masked auth secrets: the service answers them as HMAC-SHA256 digests keyed by the project
// ref. An unchanged secret is no diff, one changed out of band is seen, and no value (the
// manifest's or the live one) ever reaches an entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authConfig } from '../../src/reconcile/kinds/config/auth.js';
import { authSecretDigest } from '../../src/reconcile/kinds/config/hmac-digest.js';
import { applyAll, createLiveProject, envRef, planWith, projectDocument, recordingApi, startHarness, writes, type Harness } from './harness.js';

const CANARY_SMTP = 'canary-smtp-pass-5b0e1c7d';
const CANARY_IDP = 'canary-idp-secret-93aa41f2';
const OUT_OF_BAND = 'canary-out-of-band-0c11d2';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.env.SMTP_PASS = CANARY_SMTP;
  h.env.IDP01_SECRET = CANARY_IDP;
});
afterAll(async () => {
  await h?.close();
});

const document = projectDocument('secrets-app', {
  auth: {
    smtp_host: 'smtp.example.com',
    smtp_user: 'mailer',
    smtp_pass: envRef('SMTP_PASS'),
    external_idp01_enabled: true,
    external_idp01_client_id: 'client-123',
    external_idp01_secret: envRef('IDP01_SECRET'),
  } as never,
});

function serialized(value: unknown): string {
  return JSON.stringify(value);
}

describe('auth masked secrets', () => {
  it('plans secrets as sensitive, compares digests, sees an out-of-band change and never carries a value', async () => {
    const fresh = await planWith(h, authConfig, document, undefined);
    expect(fresh.requests).toEqual([]);
    const entry = fresh.entries[0]!;
    expect(entry.action).toBe('create');
    expect(entry.changes.find((c) => c.path === 'auth.smtp_pass')).toEqual({ path: 'auth.smtp_pass', sensitive: true });
    expect(entry.changes.find((c) => c.path === 'auth.external_idp01_secret')).toEqual({ path: 'auth.external_idp01_secret', sensitive: true });
    expect(serialized(fresh.entries)).not.toContain(CANARY_SMTP);
    expect(serialized(fresh.entries)).not.toContain(CANARY_IDP);

    const ref = await createLiveProject(h, 'secrets-app');
    fresh.ctx.projectRefs.set('secrets-app', ref);
    await applyAll(h, fresh);

    // The service masks the value the way the plan computes it.
    const live = (await h.client.api.getAuthServiceConfig(ref)) as unknown as Record<string, unknown>;
    expect(live.smtp_pass).toBe(authSecretDigest(CANARY_SMTP, ref));
    expect(live.external_idp01_secret).toBe(authSecretDigest(CANARY_IDP, ref));

    // Unchanged secrets: no diff (no permanent false diff), one GET.
    const steady = await planWith(h, authConfig, document, ref);
    expect(steady.entries[0]!.action).toBe('noop');
    expect(steady.entries[0]!.changes).toEqual([]);
    expect(steady.requests.map((r) => r.method)).toEqual(['GET']);

    // Changed out of band: seen, as exactly that field, sensitive, with no value on either side.
    await h.client.api.updateAuthServiceConfig(ref, { smtp_pass: OUT_OF_BAND });
    const drifted = await planWith(h, authConfig, document, ref);
    expect(drifted.entries[0]!.action).toBe('update');
    expect(drifted.entries[0]!.changes).toEqual([{ path: 'auth.smtp_pass', sensitive: true }]);
    const text = serialized(drifted.entries);
    for (const secret of [CANARY_SMTP, CANARY_IDP, OUT_OF_BAND, authSecretDigest(OUT_OF_BAND, ref), authSecretDigest(CANARY_SMTP, ref)]) {
      expect(text).not.toContain(secret);
    }

    // The PATCH carries only the changed field (its value is resolved when the apply sends it).
    const recorder = recordingApi(h);
    const repair = await planWith(h, authConfig, document, ref, { api: recorder.api });
    const sentBefore = recorder.sent.length;
    const applied = await applyAll(h, repair);
    expect(writes(applied)).toHaveLength(1);
    const patch = recorder.sent.slice(sentBefore).find((r) => r.method === 'PATCH')!;
    expect(patch.body).toEqual({ smtp_pass: CANARY_SMTP });
    expect(patch.priority).toBe('write');
    expect(patch.project).toBe('secrets-app');

    const repaired = await planWith(h, authConfig, document, ref);
    expect(repaired.entries[0]!.action).toBe('noop');
  });

  it('sees a rotated reference as a change of that secret only', async () => {
    const ref = await createLiveProject(h, 'rotation-app');
    const first = await planWith(h, authConfig, document, ref);
    await applyAll(h, first);
    h.env.IDP01_SECRET = 'canary-rotated-idp-6d2f';
    try {
      const rotated = await planWith(h, authConfig, document, ref);
      expect(rotated.entries[0]!.changes).toEqual([{ path: 'auth.external_idp01_secret', sensitive: true }]);
      expect(serialized(rotated.entries)).not.toContain('canary-rotated-idp-6d2f');
    } finally {
      h.env.IDP01_SECRET = CANARY_IDP;
    }
  });
});
