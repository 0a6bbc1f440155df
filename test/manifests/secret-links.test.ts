// A manifest or values file that links to a secret file named by `valueFrom.file` is read
// before the documents that name it are known: nothing made of it is kept, no error quotes it.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { cleanupTrees, ORG, tree } from './helpers.js';

afterAll(cleanupTrees);

const SECRET = 'S3cr3t-v4lue-0f-the-db';

const SECRETS = `apiVersion: reconciler/v1
kind: Secrets
metadata: { name: shop-secrets }
spec:
  project: good-prod
  values:
    DB_PASSWORD: { valueFrom: { file: secrets/db } }
`;

const SET = `apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: tenants }
spec:
  generators:
    - values: { path: tenants }
  template:
    metadata: { name: "\${tenant}-prod" }
    spec: { organization: acme, region: eu-west-1 }
`;

describe('a checkout file linked to a secret file', () => {
  it('a values file: refused, naming the file and the document, and nothing of it is kept', async () => {
    // As a values mapping, the secret would become a project's name (and an error quoting it).
    const root = tree({ 'org.yaml': ORG, 'secrets.yaml': SECRETS, 'set.yaml': SET, 'secrets/db': `tenant: ${SECRET}!\n`, 'tenants/good.yaml': 'tenant: good\n' });
    symlinkSync(join(root, 'secrets', 'db'), join(root, 'tenants', 'evil.yaml'));
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([
      expect.objectContaining({ file: 'tenants/evil.yaml', line: 1, message: expect.stringMatching(/^the file is the secret file secrets\.yaml names \(valueFrom\.file\)/) }),
    ]);
    expect(loaded.documents).toEqual([]);
    expect(JSON.stringify(loaded)).not.toContain(SECRET);
  });

  it('a manifest file whose content does not parse: refused, and the syntax error quotes nothing', async () => {
    const root = tree({ 'org.yaml': ORG, 'secrets.yaml': SECRETS, 'secrets/db': `${SECRET}: [unclosed\n` });
    symlinkSync(join(root, 'secrets', 'db'), join(root, 'broken.yaml'));
    const loaded = await loadManifests(root);
    expect(loaded.errors.map((error) => [error.file, error.message.split(';')[0]])).toEqual([['broken.yaml', 'the file is the secret file secrets.yaml names (valueFrom.file): a secret is read only as a secret reference']]);
    expect(JSON.stringify(loaded)).not.toContain(SECRET);
  });

  it('the same tree without the link loads', async () => {
    const root = tree({ 'org.yaml': ORG, 'secrets.yaml': SECRETS, 'set.yaml': SET, 'secrets/db': `${SECRET}\n`, 'tenants/good.yaml': 'tenant: good\n' });
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([]);
    expect(loaded.documents.map((d) => d.metadata.name).sort()).toEqual(['acme', 'good-prod', 'shop-secrets']);
  });
});
