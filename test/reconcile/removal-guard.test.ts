// Deletion's own guard (defence in depth): a removal is planned as a deletion only from a
// checkout that was read without an error, whatever the caller checked before.
import { describe, expect, it } from 'vitest';
import { planRemoval, type LiveProject } from '../../src/reconcile/kinds/project.js';
import type { InventoryProject } from '../../src/reconcile/inventory.js';

const record: InventoryProject = {
  ref: 'aaaaaaaaaaaaaaaaaaaa', name: 'shop', organization: 'acme', organizationId: 'acme', deletion: 'delete', management: 'full', origin: 'created', since: 0,
};
const live = { id: 'aaaaaaaaaaaaaaaaaaaa', ref: 'aaaaaaaaaaaaaaaaaaaa', name: 'shop', organization_id: 'acme', region: 'eu-west-1', status: 'ACTIVE_HEALTHY' } as LiveProject;

describe('planRemoval', () => {
  it('deletes under deletion: delete only when the checkout was read cleanly', () => {
    expect(planRemoval('shop', record, live, { manifestsEmpty: false, allowEmpty: false, checkoutClean: true })).toMatchObject({ action: 'delete' });
    expect(planRemoval('shop', record, live, { manifestsEmpty: false, allowEmpty: false, checkoutClean: false })).toMatchObject({
      action: 'blocked',
      reason: 'the checkout was not read without errors: nothing is deleted',
    });
  });
});
