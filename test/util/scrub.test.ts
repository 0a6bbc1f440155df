import { describe, expect, it } from 'vitest';
import { looksLikeName, scrubMessage } from '../../src/util/scrub.js';

const CANARIES = ['sk_live_CANARY_9f8e7d6c5b4a39281706', 'confirm-e2e-db-3f9a71', 'hunter2', 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2lnbmF0dXJlX3ZhbHVl'];

describe('scrubbing error text', () => {
  it('keeps the names of files, tables, projects and migrations', () => {
    expect(scrubMessage('PostgresError: relation "public.users" does not exist (migrations/20260101000000_create_users.sql:3)')).toBe(
      'PostgresError: relation "public.users" does not exist (migrations/20260101000000_create_users.sql:3)',
    );
    expect(scrubMessage('syntax error at or near "INSERT" in supabase/migrations/2_x.sql line 4')).toBe('syntax error at or near "INSERT" in supabase/migrations/2_x.sql line 4');
    expect(scrubMessage("table 'accounts' of project \"shop-eu-1\" (ref abcdefghijklmnopqrst) differs")).toBe("table 'accounts' of project \"shop-eu-1\" (ref abcdefghijklmnopqrst) differs");
    expect(scrubMessage('secret `STRIPE_KEY` is not set in file projects/shop.yaml')).toBe('secret `STRIPE_KEY` is not set in file projects/shop.yaml');
  });

  it('removes values: quoted text that names nothing, tokens, keys, digests, addresses and query strings', () => {
    expect(scrubMessage('value "hunter2" rejected for sec_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 by ops@example.com at https://x.example/a?token=t')).toBe(
      'value "…" rejected for … by …@… at https://x.example/a?…',
    );
    for (const canary of CANARIES) {
      for (const template of [`value "${canary}" is not valid`, `password '${canary}' rejected`, `token ${canary} refused`, `PATCH answered 400: {"smtp_pass":"${canary}"}`]) {
        expect(scrubMessage(template.replace('${canary}', canary)), template).not.toContain(canary.length >= 24 ? canary : `"${canary}"`);
      }
    }
    expect(scrubMessage(`digest ${'3f9a71c0d2e4b6a8'.repeat(3)}`)).toBe('digest …');
  });

  it('tells names from values by their shape', () => {
    expect(looksLikeName('20260101000000_create_users')).toBe(true);
    expect(looksLikeName('ProjectAuth/shop/auth')).toBe(true);
    expect(looksLikeName('sk_live_CANARY_9f8e7d6c5b4a39281706')).toBe(false);
    expect(looksLikeName('a b')).toBe(false);
  });
});
