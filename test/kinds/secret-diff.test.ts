import { describe, expect, it } from 'vitest';
import { diffSecrets } from '../../src/reconcile/kinds/secret-diff.js';
import { sha256Hex } from '../../src/reconcile/kinds/common.js';

describe('diffSecrets', () => {
  it('sorts names into create, update, unchanged and extra by digest', () => {
    const desired = [
      { name: 'A', digest: sha256Hex('a') },
      { name: 'B', digest: sha256Hex('b2') },
      { name: 'C', digest: sha256Hex('c') },
    ];
    const live = [
      { name: 'B', value: sha256Hex('b') },
      { name: 'C', value: sha256Hex('c').toUpperCase() },
      { name: 'D', value: sha256Hex('d') },
    ];
    expect(diffSecrets(desired, live)).toEqual({ create: ['A'], update: ['B'], unchanged: ['C'], extra: ['D'] });
  });

  it('an empty value is a value: its digest is compared like any other', () => {
    expect(diffSecrets([{ name: 'E', digest: sha256Hex('') }], [{ name: 'E', value: sha256Hex('') }]).unchanged).toEqual(['E']);
  });

  it('never counts the service secrets as extra (they cannot be deleted)', () => {
    expect(diffSecrets([], [{ name: 'PLATFORM_URL', value: sha256Hex('u') }, { name: 'MINE', value: sha256Hex('m') }]).extra).toEqual(['MINE']);
  });
});
