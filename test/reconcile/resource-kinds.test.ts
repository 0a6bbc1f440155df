// `ResourceKind` comes from a leaf list (src/reconcile/resource-kinds.ts), so the contract does
// not import the modules that implement it. `npm run generate:schemas` writes it from the
// registry (test/manifests/schema-drift.test.ts checks it is up to date); here, its content.
import { describe, expect, it } from 'vitest';
import { RESOURCE_KINDS } from '../../src/reconcile/resource-kinds.js';
import { FLEET_MODULES, KIND_MODULES } from '../../src/reconcile/registry.js';

describe('the list of resource kinds', () => {
  it('is exactly the kinds the registry declares, in registry order', () => {
    const declared = [...FLEET_MODULES.flatMap((module) => module.produces), ...KIND_MODULES.map((module) => module.kind)];
    expect([...RESOURCE_KINDS]).toEqual(declared);
  });

  it('names each kind once', () => {
    expect(new Set(RESOURCE_KINDS).size).toBe(RESOURCE_KINDS.length);
  });
});
