// A kind's check or load-time reader that throws on a document that passed its schema: the load
// gives a located error at the kind's documents (so nothing is planned or applied), not an
// exception that ends the command without a location.
import { afterEach, describe, expect, it } from 'vitest';
import { loadCheckout } from '../../src/manifests/load.js';
import type { LoadFacets } from '../../src/manifests/load-facets.js';
import { cleanupTrees, ORG, tree } from './helpers.js';

afterEach(cleanupTrees);

const FLEET = `${ORG}---
apiVersion: reconciler/v1
kind: Project
metadata: { name: shop }
spec: { organization: acme, region: eu-west-1 }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: shop-schema }
spec: { project: shop, path: migrations }
`;

describe('a facet that throws', () => {
  it("a kind's check that throws is a located error at the kind's first document", async () => {
    const facets: LoadFacets = new Map([['Migrations', { check: () => { throw new RangeError('Invalid array length'); } }]]);
    const set = await loadCheckout(tree({ 'fleet.yaml': FLEET, 'migrations/1_a.sql': 'select 1;\n' }), facets);
    expect(set.errors).toEqual([expect.objectContaining({ file: 'fleet.yaml', line: 12, message: 'the checks of the Migrations documents failed: Invalid array length' })]);
  });

  it('a load-time reader that throws is a located error at its document', async () => {
    const facets: LoadFacets = new Map([['Migrations', { read: async () => { throw new Error('cannot read'); } }]]);
    const set = await loadCheckout(tree({ 'fleet.yaml': FLEET, 'migrations/1_a.sql': 'select 1;\n' }), facets);
    expect(set.errors).toEqual([expect.objectContaining({ file: 'fleet.yaml', line: 12, message: 'the files of Migrations `shop-schema` could not be read: cannot read' })]);
  });
});
