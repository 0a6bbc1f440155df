// The secret references of a loaded document are found once and handed out again to every
// later walk of the same document; a document whose spec was replaced is walked again.
import { afterAll, describe, expect, it } from 'vitest';
import { findSecretReferences } from '../../src/manifests/check-refs.js';
import { loadManifests } from '../../src/manifests/load.js';
import type { ProjectDocument } from '../../src/manifests/types.js';
import { cleanupTrees, ORG, PROJECT, tree } from './helpers.js';

afterAll(cleanupTrees);

const paths = (found: ReturnType<typeof findSecretReferences>) => found.map(({ document, path, ref }) => [document.metadata.name, path, ref.valueFrom]);

describe('secret references of loaded documents', () => {
  it('every walk of the same documents finds the same references; a replaced spec is walked again', async () => {
    const withSmtp = PROJECT.replace('shop', 'mail') + '  auth:\n    smtp_pass:\n      valueFrom:\n        env: MAIL_SMTP_PASSWORD\n';
    const set = await loadManifests(tree({ 'org.yaml': ORG, 'shop.yaml': PROJECT, 'mail.yaml': withSmtp }));
    expect(set.errors).toEqual([]);
    const first = findSecretReferences(set.documents);
    const expected = [
      ['mail', '/spec/auth/smtp_pass', { env: 'MAIL_SMTP_PASSWORD' }],
      ['mail', '/spec/db_pass', { env: 'SHOP_DB_PASSWORD' }],
      ['shop', '/spec/db_pass', { env: 'SHOP_DB_PASSWORD' }],
    ];
    expect(paths(first).sort()).toEqual(expected.sort());
    expect(paths(findSecretReferences(set.documents))).toEqual(paths(first));
    // Each call hands out a list of its own.
    findSecretReferences(set.documents).pop();
    expect(findSecretReferences(set.documents)).toHaveLength(3);

    const shop = set.documents.find((document) => document.metadata.name === 'shop') as ProjectDocument;
    shop.spec = { ...shop.spec, db_pass: { valueFrom: { env: 'SHOP_DB_PASSWORD_2' } } };
    expect(paths(findSecretReferences([shop]))).toEqual([['shop', '/spec/db_pass', { env: 'SHOP_DB_PASSWORD_2' }]]);
  });
});
