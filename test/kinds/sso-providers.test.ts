import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actions, count, createProject, doc, projectDoc, requestsSince, runKinds, scope, startHarness, type Harness } from './harness.js';
import type { AnyDocument, ProjectSpec } from '../../src/manifests/types.js';

const ROUTE = '/v1/projects/{ref}/config/auth/sso/providers';

describe('SsoProvider kind against the emulator', () => {
  let h: Harness;
  let ref: string;
  const corp = (extra: Record<string, unknown> = {}): AnyDocument =>
    doc('SsoProvider', 'corp', {
      project: 'shop',
      type: 'saml',
      metadata_url: 'https://idp.example.com/saml/metadata',
      domains: ['example.com', 'example.org'],
      attribute_mapping: { keys: { email: { name: 'mail' } } },
      ...extra,
    }, h.root);
  const scopes = (docs: AnyDocument[], spec: Partial<ProjectSpec> = {}) => [scope(projectDoc('shop', ref, h.root, spec), docs)];

  beforeAll(async () => {
    h = await startHarness();
    ref = await createProject(h, 'shop');
  });

  it('while SAML is disabled, a provider is blocked with the fix named, and nothing is written', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([corp()]), { dryRun: false });
    expect(actions(pass.entries)).toEqual({ 'SsoProvider/shop/corp': 'blocked' });
    expect(pass.entries[0]!.reason).toBe('SAML is disabled for this project: set spec.auth.saml_enabled: true on the Project');
    expect(requestsSince(h, since).filter((r) => !r.startsWith('GET'))).toEqual([]);
    await h.api.updateAuthServiceConfig(ref, { saml_enabled: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates a provider with POST', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([corp()]), { dryRun: false });
    expect(actions(pass.entries)).toEqual({ 'SsoProvider/shop/corp': 'create' });
    expect(pass.outcomes).toMatchObject([{ result: 'success' }]);
    expect(count(requestsSince(h, since), `POST ${ROUTE}`)).toBe(1);
    const { items } = await h.api.listAllSsoProvider(ref);
    expect(items).toHaveLength(1);
    expect(items[0]!.domains!.map((d) => d.domain).sort()).toEqual(['example.com', 'example.org']);
  });

  it('matches the live provider by domain: a no-change pass is one list', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes([corp()]), { dryRun: true });
    expect(actions(pass.entries)).toEqual({ 'SsoProvider/shop/corp': 'noop' });
    expect(requestsSince(h, since)).toEqual([`GET ${ROUTE}`]);
  });

  it('sees a change made out of band and repairs it with PUT on the same id', async () => {
    const { items } = await h.api.listAllSsoProvider(ref);
    const id = items[0]!.id;
    await h.api.updateASsoProvider(ref, id, { domains: ['example.com'], attribute_mapping: { keys: { email: { name: 'upn' } } } });
    const dry = await runKinds(h, scopes([corp()]), { dryRun: true });
    expect(dry.entries[0]!.action).toBe('update');
    expect(dry.entries[0]!.changes.map((c) => c.path)).toEqual(['domains', 'attribute_mapping']);
    const since = h.emulator.requests().length;
    await runKinds(h, scopes([corp()]), { dryRun: false });
    expect(count(requestsSince(h, since), `PUT ${ROUTE}/{provider_id}`)).toBe(1);
    const after = await h.api.listAllSsoProvider(ref);
    expect(after.items.map((p) => p.id)).toEqual([id]);
    expect(after.items[0]!.domains!.map((d) => d.domain).sort()).toEqual(['example.com', 'example.org']);
    expect(after.items[0]!.saml!.attribute_mapping).toEqual({ keys: { email: { name: 'mail' } } });
    const clean = await runKinds(h, scopes([corp()]), { dryRun: true });
    expect(clean.entries[0]!.action).toBe('noop');
  });

  it('blocks a metadata document that names another entity id (the service cannot change it)', async () => {
    const xml = '<EntityDescriptor entityID="https://other-idp.example/entity"><IDPSSODescriptor/></EntityDescriptor>';
    const pass = await runKinds(h, scopes([corp({ metadata_url: undefined, metadata_xml: xml })]), { dryRun: true });
    expect(pass.entries[0]!.action).toBe('blocked');
    expect(pass.entries[0]!.reason).toContain('entity id');
  });

  it('updates the attribute mapping from the manifest', async () => {
    const changed = corp({ attribute_mapping: { keys: { email: { name: 'emailaddress' } } } });
    const pass = await runKinds(h, scopes([changed]), { dryRun: false });
    expect(pass.entries[0]!.changes.map((c) => c.path)).toEqual(['attribute_mapping']);
    const { items } = await h.api.listAllSsoProvider(ref);
    expect(items[0]!.saml!.attribute_mapping).toEqual({ keys: { email: { name: 'emailaddress' } } });
  });

  it('keeps an undeclared provider unless spec.prune.ssoProviders is true', async () => {
    const stray = await h.api.createASsoProvider(ref, { type: 'saml', metadata_url: 'https://other.example/metadata', domains: ['other.io'] });
    const since = h.emulator.requests().length;
    const kept = await runKinds(h, scopes([corp({ attribute_mapping: { keys: { email: { name: 'emailaddress' } } } })]), { dryRun: false });
    expect(kept.entries.map((e) => e.name)).toEqual(['corp']);
    expect(count(requestsSince(h, since), `DELETE ${ROUTE}/{provider_id}`)).toBe(0);
    expect((await h.api.listAllSsoProvider(ref)).items).toHaveLength(2);

    const pruned = await runKinds(h, scopes([corp({ attribute_mapping: { keys: { email: { name: 'emailaddress' } } } })], { prune: { ssoProviders: true } }), { dryRun: false });
    expect(actions(pruned.entries)).toEqual({ 'SsoProvider/shop/corp': 'noop', 'SsoProvider/shop/other.io': 'delete' });
    const left = (await h.api.listAllSsoProvider(ref)).items;
    expect(left.map((p) => p.id)).not.toContain(stray.id);
    expect(left).toHaveLength(1);
  });
});
