import { describe, expect, it } from 'vitest';
import { diffProvider, matchProviders, type LiveProvider } from '../../src/reconcile/kinds/sso-match.js';

const live = (id: string, domains: string[], saml: LiveProvider['saml'] = { id: `s-${id}`, entity_id: 'e' }): LiveProvider => ({
  id,
  saml,
  domains: domains.map((domain, i) => ({ id: `${id}-${i}`, domain })),
});

describe('matchProviders', () => {
  it('matches a declared provider to the live one sharing the most domains, case-insensitively', () => {
    const m = matchProviders(
      [{ key: 'corp', domains: ['Example.com', 'example.org'] }],
      [live('p1', ['example.com']), live('p2', ['example.com', 'example.org']), live('p3', ['other.io'])],
    );
    expect(m.matched.get('corp')!.id).toBe('p2');
    expect(m.unmatched.map((p) => p.id)).toEqual(['p1', 'p3']);
  });

  it('never gives one live provider to two declarations', () => {
    const m = matchProviders(
      [{ key: 'a', domains: ['x.com'] }, { key: 'b', domains: ['x.com'] }],
      [live('p1', ['x.com'])],
    );
    expect(m.matched.get('a')!.id).toBe('p1');
    expect(m.matched.has('b')).toBe(false);
  });

  it('blocks an ambiguous match instead of guessing', () => {
    const m = matchProviders([{ key: 'a', domains: ['x.com', 'y.com'] }], [live('p1', ['x.com']), live('p2', ['y.com'])]);
    expect(m.matched.size).toBe(0);
    expect(m.ambiguous.get('a')).toContain('match 2 live providers equally');
    expect(m.unmatched).toEqual([]);
  });
});

describe('diffProvider', () => {
  it('reports only fields the manifest sets, domains as a set', () => {
    const current = live('p1', ['b.com', 'a.com'], { id: 's', entity_id: 'e', metadata_url: 'https://idp/old' });
    expect(diffProvider({ project: 'p', type: 'saml', domains: ['a.com', 'b.com'] }, current)).toEqual([]);
    expect(diffProvider({ project: 'p', type: 'saml', domains: ['a.com'], metadata_url: 'https://idp/new' }, current)).toEqual([
      { path: 'domains', before: ['a.com', 'b.com'], after: ['a.com'] },
      { path: 'metadata_url', before: 'https://idp/old', after: 'https://idp/new' },
    ]);
  });

  it('compares attribute mappings structurally', () => {
    const mapping = { keys: { email: { name: 'mail' } } };
    const current = live('p1', ['a.com'], { id: 's', entity_id: 'e', attribute_mapping: mapping });
    expect(diffProvider({ project: 'p', type: 'saml', domains: ['a.com'], attribute_mapping: { keys: { email: { name: 'mail' } } } }, current)).toEqual([]);
    expect(diffProvider({ project: 'p', type: 'saml', domains: ['a.com'], attribute_mapping: { keys: { email: { name: 'email' } } } }, current)[0]!.path).toBe('attribute_mapping');
  });
});
