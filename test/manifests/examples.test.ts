import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSecretReferences } from '../../src/manifests/check-refs.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { KIND_SCHEMA_FILES } from '../../src/manifests/schema-source.js';
import type { FunctionDocument, ProjectDocument } from '../../src/manifests/types.js';
import { EXAMPLES, REPO } from './helpers.js';

describe('the examples repository', async () => {
  const set = await loadManifests(EXAMPLES);
  const kinds = (kind: string) => set.documents.filter((d) => d.kind === kind);

  it('starts every manifest file with a modeline pointing at its kind\'s schema', () => {
    expect(set.files!.length).toBeGreaterThan(5);
    for (const file of set.files!) {
      const text = readFileSync(join(EXAMPLES, file), 'utf8');
      const match = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
      expect(match, file).not.toBeNull();
      const target = resolve(dirname(join(EXAMPLES, file)), match![1]!);
      // The documents a ProjectSet makes are located in its file: that file's kind is ProjectSet.
      const fileKinds = new Set(set.documents.filter((d) => d.source.file === file).map((d) => (d.source.set ? 'ProjectSet' : d.kind)));
      expect(fileKinds.size, `${file} holds one kind`).toBe(1);
      expect(target).toBe(join(REPO, 'schemas', KIND_SCHEMA_FILES[[...fileKinds][0]! as keyof typeof KIND_SCHEMA_FILES]));
    }
  });

  it('models a fleet: two organizations, staging and production projects', () => {
    expect(kinds('Organization')).toHaveLength(2);
    const projects = kinds('Project') as ProjectDocument[];
    expect(projects.length).toBeGreaterThanOrEqual(3);
    expect(new Set(projects.map((p) => p.spec.organization)).size).toBe(2);
    expect(projects.map((p) => p.metadata.labels?.environment)).toEqual(expect.arrayContaining(['staging', 'production']));
  });

  it('configures production fully, with SMTP and two identity providers through references', () => {
    const production = (kinds('Project') as ProjectDocument[]).find((p) => p.metadata.labels?.environment === 'production')!;
    for (const section of ['auth', 'postgres', 'pooler', 'restapi', 'storage', 'network_restrictions', 'ssl_enforcement'] as const) {
      expect(production.spec[section], section).toBeDefined();
    }
    const auth = production.spec.auth!;
    expect(auth.smtp_host).toBeTruthy();
    expect(auth.smtp_pass).toHaveProperty('valueFrom.env');
    const idps = Object.keys(auth).filter((k) => /^external_idp\d\d_enabled$/.test(k) && auth[k as keyof typeof auth] === true);
    expect(idps).toHaveLength(2);
    for (const idp of idps) expect(auth[idp.replace('_enabled', '_secret') as keyof typeof auth]).toHaveProperty('valueFrom');
  });

  it('has secrets, two functions with real sources, an SSO provider and a branch', () => {
    expect(kinds('Secrets').length).toBeGreaterThanOrEqual(1);
    expect(kinds('SsoProvider').length).toBeGreaterThanOrEqual(1);
    expect(kinds('Branch').length).toBeGreaterThanOrEqual(1);
    const functions = kinds('Function') as FunctionDocument[];
    expect(functions).toHaveLength(2);
    for (const fn of functions) {
      const source = resolve(fn.source.dir, fn.spec.source);
      const entrypoint = readFileSync(join(source, fn.spec.entrypoint), 'utf8');
      expect(entrypoint).toMatch(/^import .* from '\.\/[\w-]+\.ts';$|^import .* from '@shop\/[\w-]+';$/m);
      const importMap = JSON.parse(readFileSync(join(source, fn.spec.import_map!), 'utf8'));
      for (const target of Object.values(importMap.imports as Record<string, string>)) {
        expect(() => readFileSync(join(source, target))).not.toThrow();
      }
    }
    const webhook = functions.find((f) => f.metadata.name === 'checkout-webhook')!;
    expect(readFileSync(join(resolve(webhook.source.dir, webhook.spec.source), 'index.ts'), 'utf8')).toContain("from './verify.ts'");
  });

  it('keeps every secret in a reference (no literal values)', () => {
    const references = findSecretReferences(set.documents);
    expect(references.length).toBeGreaterThanOrEqual(10);
    expect(references.every((r) => 'env' in r.ref.valueFrom || 'file' in r.ref.valueFrom)).toBe(true);
  });

  it('holds a Migrations document with its SQL files and a Rollout, as a complete manifests repository does', () => {
    const [migrations] = kinds('Migrations') as Array<{ spec: { project?: string; path: string }; source: { dir: string } }>;
    expect(migrations).toBeDefined();
    expect(kinds('Project').map((p) => p.metadata.name)).toContain(migrations!.spec.project);
    const files = readdirSync(resolve(migrations!.source.dir, migrations!.spec.path)).filter((f) => f.endsWith('.sql'));
    expect(files.length).toBeGreaterThanOrEqual(1);
    for (const file of files) expect(file).toMatch(/^\d+_[\w-]+\.sql$/);
    const [rollout] = kinds('Rollout') as Array<{ spec: { windows?: unknown[]; approvals?: unknown[] } }>;
    expect(rollout?.spec.windows?.length).toBeGreaterThanOrEqual(1);
    expect(rollout?.spec.approvals?.length).toBeGreaterThanOrEqual(1);
  });

  it('is what the README quick start runs', () => {
    expect(readFileSync(join(REPO, 'README.md'), 'utf8')).toContain('npx reconcile examples --sandbox');
  });
});
