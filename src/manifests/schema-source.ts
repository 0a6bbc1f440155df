// The generator of schemas/*.schema.json. Configuration sections are derived from the API's
// request bodies in openapi.json so that a field the API accepts is a field a manifest accepts,
// under the same name; the manifest-only fields (organization, policy, prune, ...) are written
// here once. Each configuration section's fragment lives in its module
// (src/reconcile/kinds/config/<section>.ts) and reaches this file as an argument: the
// validator imports this file and must not load the reconciler. `npm run build && node dist/tools/generate-schemas.js` rewrites the committed
// files, and test/manifests/schema-drift.test.ts fails when they differ from this output.

export type JsonSchema = { [key: string]: unknown };

export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

import { MANIFEST_KINDS, type ManifestKind } from './types.js';

/** A kind's name in file names: `SsoProvider` is `sso-provider`. */
export function kindFileName(kind: string): string {
  return kind.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();
}

/** File name (under schemas/) of a kind's schema: `sso-provider.schema.json`. */
export function schemaFileOf(kind: string): string {
  return `${kindFileName(kind)}.schema.json`;
}

/** File name (under schemas/) of each kind's schema. */
export const KIND_SCHEMA_FILES: Readonly<Record<ManifestKind, string>> = Object.fromEntries(MANIFEST_KINDS.map((kind) => [kind, schemaFileOf(kind)])) as Record<ManifestKind, string>;

/**
 * A manifest document kind a module declares (a sub-resource's: its documents name their
 * project in `spec.project`): its name, what it is, and its spec's schema, `<Kind>Spec` among
 * the `$defs` that `defs` returns (derived from the API's request body where there is one).
 */
export interface DocumentSchema {
  kind: string;
  /** One sentence: what a document of this kind declares. */
  description: string;
  defs(openapi: OpenApiDocument): Record<string, JsonSchema>;
}

/** The only value of `cryptoext.confirm_root_key_change` that lets a root key change be applied. */
export const ROOT_KEY_CHANGE_CONFIRMATION = 'I understand encrypted data may become unreadable';

export const REGIONS = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ap-east-1', 'ap-southeast-1', 'ap-northeast-1',
  'ap-northeast-2', 'ap-southeast-2', 'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-central-1',
  'eu-central-2', 'ca-central-1', 'ap-south-1', 'sa-east-1',
] as const;

export interface OpenApiDocument {
  components: { schemas: Record<string, JsonSchema> };
}

export const SECRET_REF = { $ref: '#/$defs/SecretRef' };
export const POLICY = { description: 'How the reconciler treats this resource: management (full or observe), deletion (orphan or delete), suspend.', $ref: '#/$defs/Policy' };

const SHARED_DEFS: Record<string, JsonSchema> = {
  SecretRef: {
    title: 'SecretRef',
    description:
      'A secret-bearing value, never a literal in git: `{valueFrom: {env: NAME}}` reads an environment variable of the reconciler, `{valueFrom: {file: PATH}}` reads a file (relative to the manifest file, or absolute; one trailing newline is removed).',
    type: 'object',
    properties: {
      valueFrom: {
        description: 'Where the value comes from: exactly one of `env` or `file`.',
        oneOf: [
          {
            type: 'object',
            properties: {
              env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'Name of an environment variable of the reconciler.' },
            },
            required: ['env'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: {
              file: { type: 'string', minLength: 1, description: 'Path of a file holding the value, relative to the manifest file or absolute.' },
            },
            required: ['file'],
            additionalProperties: false,
          },
        ],
      },
    },
    required: ['valueFrom'],
    additionalProperties: false,
  },
  Policy: {
    title: 'Policy',
    description: 'How the reconciler treats this resource.',
    type: 'object',
    properties: {
      management: {
        type: 'string',
        enum: ['full', 'observe'],
        default: 'full',
        description: '`full` (default): reconcile the resource. `observe`: report drift, never write.',
      },
      deletion: {
        type: 'string',
        enum: ['orphan', 'delete'],
        default: 'orphan',
        description:
          '`orphan` (default): leave the live resource alone when its manifest goes away. `delete`: delete it then (only when the manifest set loaded without any error).',
      },
      suspend: {
        type: 'boolean',
        default: false,
        description: 'Skip this resource entirely (no reads, no writes) while true.',
      },
    },
    additionalProperties: false,
  },
  Metadata: {
    title: 'Metadata',
    description: 'The document\'s identity. `name` is unique per kind (per project for functions, SSO providers and branches) and is how other documents refer to it.',
    type: 'object',
    properties: {
      name: {
        type: 'string',
        minLength: 1,
        maxLength: 256,
        pattern: '^[^\\s\\x00-\\x1f\\x7f]([^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$',
        description: 'Name of this document, unique per kind; other documents refer to it by this name.',
      },
      labels: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Free-form labels (not sent to the API).',
      },
      annotations: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Free-form annotations (not sent to the API).',
      },
    },
    required: ['name'],
    additionalProperties: false,
  },
};

export const PROJECT_REFERENCE = {
  type: 'string',
  minLength: 1,
  description: 'metadata.name of the Project document this resource belongs to.',
};

// ---- conversion of OpenAPI 3.0 shapes to JSON Schema 2020-12

/** Converts an OpenAPI 3.0 schema: `nullable` becomes a `null` member of `type` (and `enum`), objects are closed. */
export function convertOpenApiSchema(schema: JsonSchema, describe?: (path: string[]) => string | undefined, path: string[] = []): JsonSchema {
  const out: JsonSchema = {};
  const nullable = schema.nullable === true;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable') continue;
    if (key === 'type' && nullable && typeof value === 'string') out.type = [value, 'null'];
    else if (key === 'enum' && nullable && Array.isArray(value)) out.enum = value.includes(null) ? value : [...value, null];
    else if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, child]) => [name, convertOpenApiSchema(child, describe, [...path, name])]),
      );
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      out[key] = convertOpenApiSchema(value as JsonSchema, describe, [...path, '*']);
    } else if (key === 'oneOf' || key === 'anyOf' || key === 'allOf') {
      out[key] = (value as JsonSchema[]).map((member) => {
        // An empty-properties object means "any object" in the API's shapes.
        if (member.type === 'object' && member.properties && Object.keys(member.properties).length === 0) return { type: 'object' };
        return convertOpenApiSchema(member, describe, path);
      });
    } else out[key] = value;
  }
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  const description = describe?.(path);
  if (description && out.description === undefined) out.description = description;
  return orderKeys(out);
}

const KEY_ORDER = ['$schema', '$id', 'title', 'description', 'type', 'const', 'enum', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'default', 'deprecated'];
function orderKeys(schema: JsonSchema): JsonSchema {
  const ordered: JsonSchema = {};
  for (const key of KEY_ORDER) if (key in schema) ordered[key] = schema[key];
  for (const [key, value] of Object.entries(schema)) if (!(key in ordered)) ordered[key] = value;
  return ordered;
}

/** A Project spec field derived from an API request body: required-ness dropped (a field left out is not managed), `omit` left out. */
export function sectionFromBody(openapi: OpenApiDocument, bodyName: string, title: string, description: string, describeField: (path: string[]) => string | undefined, omit: string[] = []): JsonSchema {
  const body = structuredClone(openapi.components.schemas[bodyName]!);
  const properties = { ...(body.properties as Record<string, JsonSchema>) };
  for (const name of omit) delete properties[name];
  body.properties = properties;
  delete body.required;
  const converted = convertOpenApiSchema(body, describeField);
  return orderKeys({ ...converted, title, description });
}

/** Field descriptions of a nested section: the table's text, else a generic one naming the API field. */
export function describeNested(table: Record<string, string>, section: string) {
  return (path: string[]): string | undefined => {
    if (path.length === 0) return undefined;
    const key = path.join('.');
    if (table[key]) return table[key];
    const last = path[path.length - 1]!;
    if (last === 'enabled') return `Enable ${path[path.length - 2] ?? 'it'}.`;
    if (last === '*') return undefined;
    return `API field \`${key}\` of the ${section} configuration.`;
  };
}

// ---- the Project spec: its own fields here, each configuration section's from its module

/** A configuration section's part of the Project schema (src/reconcile/kinds/config/<section>.ts). */
export interface SectionSchema {
  /**
   * The Project spec field this section's field follows in the schema, the reference page
   * and exported manifests: one of the fields below or another section's key. Each field is
   * followed by at most one section, so the order never depends on the registry's.
   */
  after: string;
  /** The ProjectSpec property (its description, and a `$ref` to a definition of `defs`). */
  property: JsonSchema;
  /** The `$defs` entries the property refers to. */
  defs?(openapi: OpenApiDocument): Record<string, JsonSchema>;
}

/** What the schema builder needs of a configuration section. */
export interface SchemaSection {
  /** The section's field in the Project spec. */
  key: string;
  schema: SectionSchema;
}

function projectFields(openapi: OpenApiDocument): Array<[string, JsonSchema]> {
  const createProps = openapi.components.schemas.V1CreateProjectBody!.properties as Record<string, JsonSchema>;
  return [
    ['organization', { type: 'string', minLength: 1, description: 'metadata.name of the Organization document this project belongs to.' }],
    ['name', { ...convertOpenApiSchema(createProps.name!), minLength: 1, description: "The project's name in the API; default metadata.name. Unique within the organization." }],
    ['ref', { type: 'string', pattern: '^[a-z]{20}$', description: 'Adopt an existing project by its ref (20 lowercase letters) instead of finding it by name or creating it.' }],
    ['region', { ...convertOpenApiSchema(createProps.region!), description: 'Region the project is created in (it cannot move later).' }],
    ['desired_instance_size', { ...convertOpenApiSchema(createProps.desired_instance_size!), description: 'Compute size requested at creation.' }],
    ['db_pass', { description: 'Database password used when the project is created (required then); never readable back.', ...SECRET_REF }],
    ['paused', { type: 'boolean', description: 'true: pause the project; false: restore it when paused. Unset: not managed.' }],
    [
      'prune',
      {
        type: 'object',
        description: 'Delete live functions, SSO providers or branches of this project that no manifest declares (default false each).',
        properties: {
          functions: { type: 'boolean', default: false, description: 'Delete live functions no Function document declares.' },
          ssoProviders: { type: 'boolean', default: false, description: 'Delete live SSO providers no SsoProvider document declares.' },
          branches: { type: 'boolean', default: false, description: 'Delete live branches no Branch document declares.' },
        },
        additionalProperties: false,
      },
    ],
    ['branching_disabled', { type: 'boolean', description: 'true: disable preview branching for the project (deletes every branch). Branching is disabled only through this field.' }],
    ['policy', POLICY],
  ];
}

/** The Project spec's own fields (not configuration sections), in schema order. */
const PROJECT_FIELD_NAMES = ['organization', 'name', 'ref', 'region', 'desired_instance_size', 'db_pass', 'paused', 'prune', 'branching_disabled', 'policy'] as const;

export class SectionOrderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SectionOrderError';
  }
}

/** The Project spec's fields in order: its own names, each section placed right after its `after` field. */
function specFields<S extends SchemaSection>(sections: readonly S[]): Array<string | S> {
  const fields: Array<string | S> = [...PROJECT_FIELD_NAMES];
  const keyOf = (field: string | S) => (typeof field === 'string' ? field : field.key);
  const pending = [...sections];
  for (const section of sections) {
    if (sections.filter((other) => other.schema.after === section.schema.after).length > 1) {
      throw new SectionOrderError(`more than one configuration section follows \`${section.schema.after}\`: give each a field of its own to follow`);
    }
    if (fields.some((field) => keyOf(field) === section.key) || sections.filter((other) => other.key === section.key).length > 1) {
      throw new SectionOrderError(`the Project spec field \`${section.key}\` is declared twice`);
    }
  }
  while (pending.length > 0) {
    const next = pending.findIndex((section) => fields.some((field) => keyOf(field) === section.schema.after));
    if (next < 0) {
      throw new SectionOrderError(`configuration section \`${pending[0]!.key}\` follows \`${pending[0]!.schema.after}\`, which is not a Project spec field`);
    }
    const [section] = pending.splice(next, 1);
    fields.splice(fields.findIndex((field) => keyOf(field) === section!.schema.after) + 1, 0, section!);
  }
  return fields;
}

/** The sections in the order of their fields in the Project spec. */
export function sectionsInSpecOrder<S extends SchemaSection>(sections: readonly S[]): S[] {
  return specFields(sections).filter((field): field is S => typeof field !== 'string');
}

function projectDefs(openapi: OpenApiDocument, sections: readonly SchemaSection[]): Record<string, JsonSchema> {
  const own = new Map(projectFields(openapi));
  const properties: Record<string, JsonSchema> = {};
  const defs: Record<string, JsonSchema> = {};
  for (const field of specFields(sections)) {
    if (typeof field === 'string') properties[field] = own.get(field)!;
    else {
      properties[field.key] = field.schema.property;
      Object.assign(defs, field.schema.defs?.(openapi));
    }
  }
  return {
    ProjectSpec: {
      title: 'ProjectSpec',
      description: 'A project, named within its organization, and every configuration section the reconciler manages. A section or field left out is not managed.',
      type: 'object',
      properties,
      required: ['organization', 'region'],
      additionalProperties: false,
    },
    ...defs,
  };
}

function organizationDefs(openapi: OpenApiDocument): Record<string, JsonSchema> {
  const slug = (openapi.components.schemas.OrganizationResponseV1!.properties as Record<string, JsonSchema>).slug!;
  return {
    OrganizationSpec: {
      title: 'OrganizationSpec',
      description: 'An organization, found by its name (metadata.name) or adopted by slug; created when declared and missing.',
      type: 'object',
      properties: {
        slug: { ...convertOpenApiSchema(slug), description: 'Adopt an existing organization by its slug (id). Otherwise it is found by name, or created.' },
        policy: POLICY,
      },
      additionalProperties: false,
    },
  };
}

/** Whether a spec has something to say when left out: a required field, or a rule that {} fails. */
function specNeedsFields(spec: JsonSchema | undefined): boolean {
  if (!spec) return true;
  const required = (spec as { required?: unknown }).required;
  return (Array.isArray(required) && required.length > 0) || ['anyOf', 'oneOf', 'allOf', 'minProperties', 'not', 'if'].some((key) => key in spec);
}

function documentSchema(kind: string, description: string, defs: Record<string, JsonSchema>): JsonSchema {
  const specDef = `${kind}Spec`;
  // A spec whose fields are all optional may be left out (it reads as `spec: {}`).
  const required = specNeedsFields(defs[specDef]) ? ['apiVersion', 'kind', 'metadata', 'spec'] : ['apiVersion', 'kind', 'metadata'];
  const usesSecretRef = JSON.stringify(defs).includes('#/$defs/SecretRef');
  const shared: Record<string, JsonSchema> = { Metadata: SHARED_DEFS.Metadata!, Policy: SHARED_DEFS.Policy! };
  if (usesSecretRef) shared.SecretRef = SHARED_DEFS.SecretRef!;
  return {
    $schema: SCHEMA_DIALECT,
    $id: `https://fleet-reconciler.dev/schemas/${schemaFileOf(kind)}`,
    title: kind,
    description: `${description} A reconciler/v1 manifest document.`,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', const: 'reconciler/v1', description: 'Always `reconciler/v1`.' },
      kind: { type: 'string', const: kind, description: `Always \`${kind}\`.` },
      metadata: { description: 'Name (unique per kind), labels and annotations of this document.', $ref: '#/$defs/Metadata' },
      spec: { description: `The desired state: ${description.replace(/\.$/, '').replace(/^An? /, 'the ').replace(/^A project's/, "the project's")}.`, $ref: `#/$defs/${specDef}` },
    },
    required,
    additionalProperties: false,
    $defs: { ...shared, ...defs },
  };
}

/**
 * Every kind's schema, derived from the API description (openapi.json): Organization, Project
 * (with the given configuration sections) and each given document kind (the registry's
 * sections and sub-resource modules, src/reconcile/registry.ts, hand them in), in that order.
 */
export function buildSchemas(openapi: OpenApiDocument, sections: readonly SchemaSection[], documents: readonly DocumentSchema[] = []): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {
    Organization: documentSchema('Organization', 'An organization of the fleet.', organizationDefs(openapi)),
    Project: documentSchema('Project', 'A project and its configuration.', projectDefs(openapi, sections)),
  };
  for (const document of documents) schemas[document.kind] = documentSchema(document.kind, document.description, document.defs(openapi));
  return schemas;
}

/** The exact text of a committed schema file. */
export function renderSchemaFile(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
