// The secret files of a ProjectSet that fails are sealed by its template's path, each variable
// fitting any name: a values file linked to one is refused, and the checkout's manifest files
// that the path would fit as well are not taken for secret files.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { cleanupTrees, ORG, tree } from './helpers.js';

afterEach(cleanupTrees);

const SET = (secretPath: string) => `apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: s }
spec:
  generators:
    - values: { path: tenants }
  template:
    metadata: { name: "p-\${tenant}" }
    spec: { organization: acme, region: eu-west-1, db_pass: { valueFrom: { file: "${secretPath}" } } }
`;

describe('the secret files of a ProjectSet that fails', () => {
  it('a path made of one variable does not make the manifest files beside the set secret files', async () => {
    const dir = tree({ 'org.yaml': ORG, 'set.yaml': SET('${secret}'), 'tenants/a.yaml': 'tenant: a\nsecret: a\n', 'tenants/b.yaml': 'tenant: b\nkey: "bad key!"\nsecret: b\n', a: 'secret-a\n' });
    const set = await loadManifests(dir);
    expect(set.errors.map((error) => `${error.file}: ${error.message}`)).toEqual([expect.stringMatching(/^tenants\/b\.yaml: the key `bad key!` is not a valid key/)]);
  });

  it('a values file linked to a file the path fits is refused', async () => {
    const dir = tree({ 'org.yaml': ORG, 'set.yaml': SET('secrets/${tenant}'), 'tenants/a.yaml': 'tenant: a\n', 'secrets/a': 'tenant: b\nkey: "not a key canary-4c1d"\n' });
    symlinkSync(join(dir, 'secrets', 'a'), join(dir, 'tenants', 'b.yaml'));
    const set = await loadManifests(dir);
    expect(set.errors.map((error) => `${error.file}: ${error.message}`)).toEqual([expect.stringMatching(/^tenants\/b\.yaml: the file is the secret file set\.yaml names/)]);
    expect(JSON.stringify(set.errors)).not.toContain('canary-4c1d');
  });
});
