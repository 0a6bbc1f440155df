import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../src/tools/generate-schemas.js';
import { buildSchemas } from '../../src/manifests/schema-source.js';
import { CONFIG_SECTIONS } from '../../src/reconcile/registry.js';
import { REPO } from './helpers.js';

// The schemas are the single source of truth: the committed schemas must be exactly what the
// generator makes from openapi.json, and the types and the reference pages under docs/reference/ must be what the schemas make;
// the list of resource kinds (src/reconcile/resource-kinds.ts) must be what the registry's modules declare.
describe('generated manifest artifacts', () => {
  const files = generatedFiles(REPO);

  it('covers the schemas, the types, the reference pages and the list of resource kinds', () => {
    expect([...files.keys()].sort()).toEqual([
      'docs/reference/branch.md',
      'docs/reference/common.md',
      'docs/reference/function.md',
      'docs/reference/migrations.md',
      'docs/reference/organization.md',
      'docs/reference/project-set.md',
      'docs/reference/project.md',
      'docs/reference/rollout.md',
      'docs/reference/secrets.md',
      'docs/reference/sso-provider.md',
      'schemas/branch.schema.json',
      'schemas/function.schema.json',
      'schemas/migrations.schema.json',
      'schemas/organization.schema.json',
      'schemas/project-set.schema.json',
      'schemas/project.schema.json',
      'schemas/rollout.schema.json',
      'schemas/secrets.schema.json',
      'schemas/sso-provider.schema.json',
      'src/manifests/schema-checks.ts',
      'src/manifests/schema-types.ts',
      'src/reconcile/resource-kinds.ts',
    ]);
  });

  for (const [path, expected] of files) {
    it(`${path} is up to date (regenerate: npm run generate:schemas)`, () => {
      expect(readFileSync(join(REPO, path), 'utf8')).toBe(expected);
    });
  }

  it('notices a change in the API description (the schemas follow openapi.json)', () => {
    const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));
    openapi.components.schemas.UpdateAuthConfigBody.properties.brand_new_field = { type: 'boolean', nullable: true };
    const project = buildSchemas(openapi, CONFIG_SECTIONS).Project as { $defs: { AuthSpec: { properties: Record<string, unknown> } } };
    expect(project.$defs.AuthSpec.properties.brand_new_field).toMatchObject({ type: ['boolean', 'null'] });
    expect(`${JSON.stringify(project, null, 2)}\n`).not.toBe(files.get('schemas/project.schema.json'));
  });
});
