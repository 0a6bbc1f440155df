import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changedSubset, deepEqual, diffFields, entryId, makeEntry, sameMembers } from '../../src/reconcile/diff.js';

describe('diffFields', () => {
  it('compares only the fields the manifest mentions', () => {
    const changes = diffFields({ site_url: 'https://a.example' }, { site_url: 'https://a.example', jwt_exp: 3600, disable_signup: true });
    expect(changes).toEqual([]);
  });

  it('reports before and after with the prefix, ordered by field', () => {
    const changes = diffFields({ max_rows: 500, db_schema: 'public' }, { max_rows: 1000, db_schema: 'api' }, { prefix: 'restapi' });
    expect(changes).toEqual([
      { path: 'restapi.db_schema', before: 'api', after: 'public' },
      { path: 'restapi.max_rows', before: 1000, after: 500 },
    ]);
  });

  it('orders the changes by field whatever the order of the fields written (as if every field were sorted first)', () => {
    const field = fc.stringMatching(/^[a-zA-Z_]{1,6}$/);
    fc.assert(
      fc.property(fc.dictionary(field, fc.integer({ min: 0, max: 3 })), fc.dictionary(field, fc.integer({ min: 0, max: 3 })), (desired, live) => {
        const expected = Object.keys(desired)
          .sort()
          .filter((key) => desired[key] !== live[key]);
        expect(diffFields(desired, live).map((change) => change.path)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves `before` out when the live object lacks the field', () => {
    expect(diffFields({ work_mem: '4MB' }, {})).toEqual([{ path: 'work_mem', after: '4MB' }]);
    expect(diffFields({ work_mem: '4MB' }, null)).toEqual([{ path: 'work_mem', after: '4MB' }]);
  });

  it('never carries a value for a sensitive field', () => {
    const changes = diffFields({ smtp_pass: 'digest-new', smtp_host: 'h' }, { smtp_pass: 'digest-old', smtp_host: 'h' }, {
      prefix: 'auth',
      sensitive: (f) => f === 'smtp_pass',
    });
    expect(changes).toEqual([{ path: 'auth.smtp_pass', sensitive: true }]);
    expect(JSON.stringify(changes)).not.toContain('digest');
  });

  it('skips undefined desired values and ignored fields', () => {
    expect(diffFields({ a: undefined, restart_database: true }, { a: 1 }, { ignore: ['restart_database'] })).toEqual([]);
  });

  it('uses a field-specific equality when given', () => {
    const changes = diffFields({ cidrs: ['10.0.0.0/8', '1.2.3.4/32'] }, { cidrs: ['1.2.3.4/32', '10.0.0.0/8'] }, {
      equals: (field, a, b) => (field === 'cidrs' ? sameMembers(a as unknown[], b as unknown[]) : undefined),
    });
    expect(changes).toEqual([]);
  });

  it('compares nested objects structurally, regardless of key order', () => {
    const desired = { features: { imageTransformation: { enabled: true }, s3Protocol: { enabled: false } } };
    expect(diffFields(desired, { features: { s3Protocol: { enabled: false }, imageTransformation: { enabled: true } } })).toEqual([]);
    expect(diffFields(desired, { features: { s3Protocol: { enabled: true }, imageTransformation: { enabled: true } } })).toHaveLength(1);
  });
});

describe('deepEqual and sameMembers', () => {
  it('treats an absent key like an undefined value, and array order as significant', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual(1, '1')).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
  });
  it('compares lists as multisets', () => {
    expect(sameMembers(['a', 'b', 'a'], ['a', 'a', 'b'])).toBe(true);
    expect(sameMembers(['a', 'b'], ['a', 'a'])).toBe(false);
    expect(sameMembers(undefined, [])).toBe(true);
  });
});

describe('changedSubset, entryId and makeEntry', () => {
  it('picks the changed fields of the desired object (what a PATCH sends)', () => {
    const desired = { site_url: 'x', jwt_exp: 10, disable_signup: false };
    expect(changedSubset(desired, [{ path: 'auth.jwt_exp', before: 5, after: 10 }], 'auth')).toEqual({ jwt_exp: 10 });
  });
  it('builds stable ids with and without a project', () => {
    expect(entryId('Project', 'shop')).toBe('Project/shop');
    expect(entryId('ProjectAuth', 'auth', 'shop')).toBe('ProjectAuth/shop/auth');
  });
  it('turns an update without changes into a noop', () => {
    expect(makeEntry({ kind: 'ProjectAuth', project: 'p', name: 'auth', changes: [] }).action).toBe('noop');
    expect(makeEntry({ kind: 'Project', name: 'p', changes: [], action: 'blocked', reason: 'r' }).action).toBe('blocked');
    expect(makeEntry({ kind: 'ProjectAuth', project: 'p', name: 'auth', changes: [{ path: 'a', after: 1 }] }).action).toBe('update');
  });
});

describe('diffFields (properties)', () => {
  it('reports exactly the mentioned fields whose values differ, never a value of a sensitive one', async () => {
    const fc = (await import('fast-check')).default;
    const json = fc.jsonValue({ maxDepth: 2 });
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), json), fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), json), fc.boolean(), (desired, live, secret) => {
        const changes = diffFields(desired, live, { prefix: 'x', sensitive: () => secret });
        const expected = Object.keys(desired).filter((k) => desired[k] !== undefined && !deepEqual(desired[k], live[k])).sort();
        expect(changes.map((c) => c.path)).toEqual(expected.map((k) => `x.${k}`));
        for (const change of changes) {
          if (secret) expect(Object.keys(change).sort()).toEqual(['path', 'sensitive']);
          else expect(change.after).toEqual(desired[change.path.slice(2)]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
