// Writes the generated artifacts: schemas/*.schema.json (from openapi.json, schema-source.ts and
// the configuration sections of the registry; one per document kind of the registry's modules),
// src/manifests/schema-types.ts (from the schemas) and the field reference pages
// docs/reference/*.md (from the schemas). Run after `npx tsc -p .`: `node_modules/.bin/node dist/tools/generate-schemas.js`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_SECTIONS, DOCUMENT_KINDS, DOCUMENT_SCHEMAS } from '../reconcile/registry.js';
import { buildSchemas, renderSchemaFile, schemaFileOf } from '../manifests/schema-source.js';
import { renderSchemaTypes } from '../manifests/schema-typegen.js';
import { renderFieldReference } from '../manifests/schema-docs.js';

/** Repository root, from dist/tools or src/tools alike. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every generated file (path relative to the repository root) with its expected content. */
export function generatedFiles(root = REPOSITORY_ROOT): Map<string, string> {
  const openapi = JSON.parse(readFileSync(join(root, 'schemas/api/openapi.json'), 'utf8'));
  const schemas = buildSchemas(openapi, CONFIG_SECTIONS, DOCUMENT_SCHEMAS);
  const files = new Map<string, string>();
  for (const kind of DOCUMENT_KINDS) files.set(`schemas/${schemaFileOf(kind)}`, renderSchemaFile(schemas[kind]!));
  // Types come from the rendered JSON (what editors and the validator read), not the objects.
  const committedForm = Object.fromEntries([...files].map(([path, text]) => [path, JSON.parse(text)]));
  files.set('src/manifests/schema-types.ts', renderSchemaTypes(committedForm, 'src/tools/generate-schemas.ts'));
  for (const [page, text] of renderFieldReference(schemas, DOCUMENT_KINDS)) files.set(`docs/reference/${page}`, text);
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, text] of generatedFiles()) {
    mkdirSync(dirname(join(REPOSITORY_ROOT, path)), { recursive: true });
    writeFileSync(join(REPOSITORY_ROOT, path), text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
