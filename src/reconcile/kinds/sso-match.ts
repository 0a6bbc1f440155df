// SSO providers get their ids from the service, so a manifest cannot name one: a declared
// provider is the live provider that shares the most of its domains (domains are unique
// across a project's providers in the service).
import type { ListProvidersResponse } from '../../api/types.js';
import type { FieldChange } from '../types.js';
import { deepEqual, sameMembers } from '../diff.js';
import type { SsoProviderSpec } from '../../manifests/types.js';

export type LiveProvider = ListProvidersResponse['items'][number];

export function providerDomains(provider: LiveProvider): string[] {
  return (provider.domains ?? []).map((d) => d.domain?.toLowerCase()).filter((d): d is string => typeof d === 'string');
}

interface DesiredProviderKey {
  key: string;
  domains: readonly string[];
}

interface ProviderMatch {
  /** Declared key -> the live provider it is. */
  matched: Map<string, LiveProvider>;
  /** Declared key -> why it cannot be matched safely (blocked, nothing written). */
  ambiguous: Map<string, string>;
  /** Live providers no declaration claims. */
  unmatched: LiveProvider[];
}

export function matchProviders(desired: readonly DesiredProviderKey[], live: readonly LiveProvider[]): ProviderMatch {
  const taken = new Set<string>();
  const matched = new Map<string, LiveProvider>();
  const ambiguous = new Map<string, string>();
  for (const want of desired) {
    const domains = new Set(want.domains.map((d) => d.toLowerCase()));
    let best: LiveProvider[] = [];
    let bestOverlap = 0;
    for (const provider of live) {
      if (taken.has(provider.id)) continue;
      const overlap = providerDomains(provider).filter((d) => domains.has(d)).length;
      if (overlap === 0) continue;
      if (overlap > bestOverlap) {
        best = [provider];
        bestOverlap = overlap;
      } else if (overlap === bestOverlap) best.push(provider);
    }
    if (best.length > 1) {
      ambiguous.set(want.key, `domains match ${best.length} live providers equally (${best.map((p) => p.id).join(', ')}); make the domains distinct`);
      for (const p of best) taken.add(p.id);
      continue;
    }
    if (best.length === 1) {
      matched.set(want.key, best[0]!);
      taken.add(best[0]!.id);
    }
  }
  return { matched, ambiguous, unmatched: live.filter((p) => !taken.has(p.id)) };
}

/** Field changes between a declared provider and its live match (only fields the manifest sets). */
export function diffProvider(spec: SsoProviderSpec, live: LiveProvider): FieldChange[] {
  const changes: FieldChange[] = [];
  const liveDomains = providerDomains(live);
  const wantDomains = spec.domains.map((d) => d.toLowerCase());
  if (!sameMembers([...new Set(wantDomains)].sort(), [...new Set(liveDomains)].sort())) {
    changes.push({ path: 'domains', before: [...liveDomains].sort(), after: [...wantDomains].sort() });
  }
  if (spec.metadata_url !== undefined && live.saml?.metadata_url !== spec.metadata_url) {
    changes.push({ path: 'metadata_url', ...(live.saml?.metadata_url !== undefined ? { before: live.saml.metadata_url } : {}), after: spec.metadata_url });
  }
  if (spec.metadata_xml !== undefined && live.saml?.metadata_xml?.trim() !== spec.metadata_xml.trim()) {
    // Documents can be long: show that they differ, not the whole XML.
    changes.push({ path: 'metadata_xml', before: live.saml?.metadata_xml === undefined ? '(none)' : '(metadata document)', after: '(metadata document from the manifest)' });
  }
  if (spec.attribute_mapping !== undefined && !deepEqual(spec.attribute_mapping, live.saml?.attribute_mapping)) {
    changes.push({ path: 'attribute_mapping', ...(live.saml?.attribute_mapping !== undefined ? { before: live.saml.attribute_mapping } : {}), after: spec.attribute_mapping });
  }
  return changes;
}

/** The entity id a SAML metadata document declares, when it declares one. */
function entityIdOfXml(xml: string): string | undefined {
  return /<(?:\w+:)?EntityDescriptor\b[^>]*\bentityID\s*=\s*"([^"]+)"/.exec(xml)?.[1];
}

/**
 * Why the declared provider cannot be written to its live match: the service keeps a
 * provider's entity id for its lifetime, so metadata naming another one needs a new provider.
 */
export function entityIdConflict(spec: SsoProviderSpec, live: LiveProvider): string | undefined {
  if (spec.metadata_xml === undefined || !live.saml?.entity_id) return undefined;
  const wanted = entityIdOfXml(spec.metadata_xml);
  if (wanted === undefined || wanted === live.saml.entity_id) return undefined;
  return `the metadata document names entity id ${wanted}, the live provider ${live.id} has ${live.saml.entity_id}: the service cannot change a provider's entity id; remove this provider's domains from it first or prune it, then declare the new one`;
}
