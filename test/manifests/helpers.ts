// Temporary manifest trees for the manifest tests.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const EXAMPLES = join(REPO, 'examples');

const created: string[] = [];

/** A fresh directory holding the given files (path -> content). */
export function tree(files: Record<string, string | Buffer>): string {
  const root = mkdtempSync(join(tmpdir(), 'manifests-'));
  created.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

export function cleanupTrees(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}

export const ORG = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: acme
spec: {}
`;

export const PROJECT = `apiVersion: reconciler/v1
kind: Project
metadata:
  name: shop
spec:
  organization: acme
  region: eu-west-1
  db_pass:
    valueFrom:
      env: SHOP_DB_PASSWORD
`;
