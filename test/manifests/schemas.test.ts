import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KIND_SCHEMA_FILES } from '../../src/manifests/schema-source.js';
import { createAjv, validateAgainstSchema } from '../../src/manifests/schema-validator.js';
import { isSecretAuthField } from '../../src/manifests/secret-fields.js';
import { MANIFEST_KINDS } from '../../src/manifests/types.js';
import { REPO } from './helpers.js';

const schema = (file: string) => JSON.parse(readFileSync(join(REPO, 'schemas', file), 'utf8'));
const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));

function walkProperties(node: unknown, visit: (name: string, property: Record<string, unknown>, path: string) => void, path = ''): void {
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  if (object.properties && typeof object.properties === 'object') {
    for (const [name, property] of Object.entries(object.properties as Record<string, Record<string, unknown>>)) {
      visit(name, property, `${path}/${name}`);
      walkProperties(property, visit, `${path}/${name}`);
    }
  }
  for (const key of ['$defs', 'items', 'additionalProperties']) {
    const child = object[key];
    if (key === '$defs' && child) for (const [name, def] of Object.entries(child as object)) walkProperties(def, visit, `#${name}`);
    else if (child && typeof child === 'object') walkProperties(child, visit, `${path}/*`);
  }
}

describe('kind schemas', () => {
  it('has one draft 2020-12 schema per kind', () => {
    expect(Object.keys(KIND_SCHEMA_FILES).sort()).toEqual([...MANIFEST_KINDS].sort());
    for (const file of Object.values(KIND_SCHEMA_FILES)) {
      expect(schema(file).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });

  it('compiles every schema with ajv in strict mode (every strict check on)', () => {
    const ajv = createAjv();
    expect(ajv.opts.strict).toBe(true);
    expect(ajv.opts.allErrors).toBe(true);
    for (const file of Object.values(KIND_SCHEMA_FILES)) {
      expect(() => ajv.compile(schema(file)), file).not.toThrow();
    }
    // strict mode is real: an unknown keyword in a schema is refused
    expect(() => createAjv().compile({ type: 'object', properties: {}, colour: 'red' })).toThrow(/strict mode/);
  });

  it('describes every field and closes every object (no unknown fields)', () => {
    for (const file of Object.values(KIND_SCHEMA_FILES)) {
      const missing: string[] = [];
      const open: string[] = [];
      walkProperties(schema(file), (name, property, path) => {
        if (typeof property.description !== 'string' || property.description === '') missing.push(`${file}${path}`);
        if (property.type === 'object' && property.properties && property.additionalProperties !== false) open.push(`${file}${path}`);
      });
      expect(missing, 'fields without a description').toEqual([]);
      expect(open, 'objects that accept unknown fields').toEqual([]);
    }
  });

  it('takes the auth fields from UpdateAuthConfigBody with their API names, secret-bearing ones as references', () => {
    const auth = schema('project.schema.json').$defs.AuthSpec.properties as Record<string, Record<string, unknown>>;
    const apiFields = Object.keys(openapi.components.schemas.UpdateAuthConfigBody.properties);
    expect(Object.keys(auth).sort()).toEqual(apiFields.sort());
    for (const [name, property] of Object.entries(auth)) {
      if (isSecretAuthField(name)) expect(property.$ref, name).toBe('#/$defs/SecretRef');
      else expect(property.$ref, name).toBeUndefined();
    }
  });

  it('takes postgres, pooler, restapi and storage fields from the API bodies', () => {
    const defs = schema('project.schema.json').$defs;
    const body = (name: string) => Object.keys(openapi.components.schemas[name].properties).sort();
    expect(Object.keys(defs.PostgresSpec.properties).sort()).toEqual(body('UpdatePostgresConfigBody'));
    // pool_mode is deprecated in the API and left out
    expect(Object.keys(defs.PoolerSpec.properties).sort()).toEqual(body('UpdatePoolerConfigBody').filter((f) => f !== 'pool_mode'));
    expect(Object.keys(defs.RestapiSpec.properties).sort()).toEqual(body('V1UpdateRestapiConfigBody'));
    expect(Object.keys(defs.StorageSpec.properties).sort()).toEqual(body('UpdateStorageConfigBody'));
    expect(defs.PostgresSpec.properties.session_replication_role.enum).toEqual(['origin', 'replica', 'local']);
  });

  it('puts a policy with its enums on every kind of managed resource', () => {
    // A Rollout manages nothing: it orders the writes of the others. A ProjectSet manages
    // nothing either: the documents it makes carry the template's policy.
    for (const kind of MANIFEST_KINDS.filter((k) => k !== 'Rollout' && k !== 'ProjectSet')) {
      const document = schema(KIND_SCHEMA_FILES[kind]);
      const spec = document.$defs[`${kind}Spec`];
      expect(spec.properties.policy.$ref, kind).toBe('#/$defs/Policy');
      expect(document.$defs.Policy.properties.management.enum).toEqual(['full', 'observe']);
      expect(document.$defs.Policy.properties.deletion.enum).toEqual(['orphan', 'delete']);
      expect(document.$defs.Policy.properties.suspend.type).toBe('boolean');
    }
  });

  it('refuses a literal in a secret-bearing field with a message that says to use valueFrom', () => {
    const document = {
      apiVersion: 'reconciler/v1',
      kind: 'Project',
      metadata: { name: 'p' },
      spec: { organization: 'o', region: 'eu-west-1', auth: { smtp_pass: 'not-a-reference', hook_send_sms_secrets: 'v1,whsec_x' } },
    };
    const problems = validateAgainstSchema('Project', document);
    expect(problems.map((p) => p.path).sort()).toEqual(['/spec/auth/hook_send_sms_secrets', '/spec/auth/smtp_pass']);
    for (const problem of problems) {
      expect(problem.message).toContain('valueFrom');
      expect(problem.message).not.toContain('not-a-reference');
    }
  });

  it('accepts both reference forms and refuses one with both', () => {
    const base = { apiVersion: 'reconciler/v1', kind: 'Secrets', metadata: { name: 's' } };
    expect(validateAgainstSchema('Secrets', { ...base, spec: { project: 'p', values: { A: { valueFrom: { env: 'A' } }, B: { valueFrom: { file: 'b.txt' } } } } })).toEqual([]);
    const both = validateAgainstSchema('Secrets', { ...base, spec: { project: 'p', values: { A: { valueFrom: { env: 'A', file: 'a' } } } } });
    expect(both).toHaveLength(1);
    expect(both[0]!.path).toBe('/spec/values/A');
  });

  it('requires the confirmation sentence for a root key change to be exact', () => {
    const project = (confirm: string) => ({
      apiVersion: 'reconciler/v1', kind: 'Project', metadata: { name: 'p' },
      spec: { organization: 'o', region: 'eu-west-1', cryptoext: { root_key: { valueFrom: { env: 'K' } }, confirm_root_key_change: confirm } },
    });
    expect(validateAgainstSchema('Project', project('I understand encrypted data may become unreadable'))).toEqual([]);
    expect(validateAgainstSchema('Project', project('yes'))[0]!.path).toBe('/spec/cryptoext/confirm_root_key_change');
  });
});
