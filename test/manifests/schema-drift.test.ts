import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../src/manifests/generate-schemas.js';
import { README_BLOCK_END, README_BLOCK_START } from '../../src/manifests/schema-docs.js';
import { buildSchemas } from '../../src/manifests/schema-source.js';
import { REPO } from './helpers.js';

// The schemas are the single source of truth: the committed schemas must be exactly what the
// generator makes from openapi.json, and the types and the README must be what the schemas make.
describe('generated manifest artifacts', () => {
  const files = generatedFiles(REPO);

  it('covers the schemas, the types and the README', () => {
    expect([...files.keys()].sort()).toEqual([
      'README.md',
      'schemas/branch.schema.json',
      'schemas/function.schema.json',
      'schemas/organization.schema.json',
      'schemas/project.schema.json',
      'schemas/secrets.schema.json',
      'schemas/sso-provider.schema.json',
      'src/manifests/schema-types.ts',
    ]);
  });

  for (const [path, expected] of files) {
    if (path === 'README.md') continue;
    it(`${path} is up to date (regenerate: npx tsc -p . && node_modules/.bin/node dist/manifests/generate-schemas.js)`, () => {
      expect(readFileSync(join(REPO, path), 'utf8')).toBe(expected);
    });
  }

  it('the README field reference is up to date', () => {
    const block = (text: string) => text.slice(text.indexOf(README_BLOCK_START), text.indexOf(README_BLOCK_END));
    const committed = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(committed).toContain(README_BLOCK_START);
    expect(block(committed)).toBe(block(files.get('README.md')!));
  });

  it('notices a change in the API description (the schemas follow openapi.json)', () => {
    const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));
    openapi.components.schemas.UpdateAuthConfigBody.properties.brand_new_field = { type: 'boolean', nullable: true };
    const project = buildSchemas(openapi).Project as { $defs: { AuthSpec: { properties: Record<string, unknown> } } };
    expect(project.$defs.AuthSpec.properties.brand_new_field).toMatchObject({ type: ['boolean', 'null'] });
    expect(`${JSON.stringify(project, null, 2)}\n`).not.toBe(files.get('schemas/project.schema.json'));
  });
});
