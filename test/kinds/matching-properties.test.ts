// Invariants of the pure matching and diffing, over arbitrary inputs.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { matchProviders, providerDomains, type LiveProvider } from '../../src/reconcile/kinds/sso-match.js';
import { diffSecrets } from '../../src/reconcile/kinds/secret-diff.js';

const domain = fc.constantFrom('a.com', 'b.com', 'c.org', 'd.io', 'e.net', 'f.dev');

describe('matchProviders (property)', () => {
  it('never gives a live provider to two declarations; every match shares a domain; every live provider is matched, ambiguous or unmatched exactly once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(domain, { minLength: 1, maxLength: 3 }), { maxLength: 5 }),
        fc.array(fc.uniqueArray(domain, { maxLength: 3 }), { maxLength: 5 }),
        (declared, liveDomains) => {
          const live: LiveProvider[] = liveDomains.map((ds, i) => ({ id: `p${i}`, domains: ds.map((d, j) => ({ id: `${i}-${j}`, domain: d })) }));
          const desired = declared.map((ds, i) => ({ key: `k${i}`, domains: ds }));
          const m = matchProviders(desired, live);
          const matchedIds = [...m.matched.values()].map((p) => p.id);
          expect(new Set(matchedIds).size).toBe(matchedIds.length);
          for (const [key, provider] of m.matched) {
            const want = desired.find((d) => d.key === key)!.domains;
            expect(providerDomains(provider).some((d) => want.includes(d))).toBe(true);
            expect(m.ambiguous.has(key)).toBe(false);
          }
          for (const p of m.unmatched) expect(matchedIds).not.toContain(p.id);
          expect(matchedIds.length + m.unmatched.length).toBeLessThanOrEqual(live.length);
        },
      ),
    );
  });
});

describe('diffSecrets (property)', () => {
  it('puts every declared name in exactly one of create/update/unchanged, and extra holds exactly the undeclared live names', () => {
    const name = fc.constantFrom('A', 'B', 'C', 'D', 'E', 'PLATFORM_URL');
    const digest = fc.constantFrom('00', '11', '22');
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ name, digest }), { selector: (s) => s.name }), fc.uniqueArray(fc.record({ name, value: digest }), { selector: (s) => s.name }), (desired, live) => {
        const diff = diffSecrets(desired, live);
        for (const d of desired) {
          const places = [diff.create, diff.update, diff.unchanged].filter((list) => list.includes(d.name)).length;
          expect(places).toBe(1);
        }
        const declared = new Set(desired.map((d) => d.name));
        expect(diff.extra.sort()).toEqual(live.map((l) => l.name).filter((n) => !declared.has(n) && !n.startsWith('PLATFORM_')).sort());
      }),
    );
  });
});
