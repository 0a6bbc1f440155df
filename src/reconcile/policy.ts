// The per-resource policy with its defaults applied, in one place.
import type { Policy } from '../manifests/types.js';

export interface EffectivePolicy {
  management: 'full' | 'observe';
  deletion: 'orphan' | 'delete';
  suspend: boolean;
}

export function effectivePolicy(policy: Policy | undefined): EffectivePolicy {
  return {
    management: policy?.management ?? 'full',
    deletion: policy?.deletion ?? 'orphan',
    suspend: policy?.suspend ?? false,
  };
}
