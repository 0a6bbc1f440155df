// The ProjectSet kind's schema: a template of a Project (and of its Secrets, Function and
// SsoProvider documents) and the generators that make one project per element. The template
// is checked loosely here (its strings may hold `${variables}` where the Project schema wants
// a number or an enum); every generated document is checked against its own kind's schema,
// located in the template and the element (project-set.ts).
import type { DocumentSchema, JsonSchema } from './schema-source.js';

/** Projects a set makes when its document states no `maxProjects`. */
export const DEFAULT_MAX_PROJECTS = 100;
/** The largest `maxProjects` a document may state. */
export const MAX_PROJECTS_LIMIT = 10_000;

/** A variable's name, in an element and in `${name}`. */
export const VARIABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
/** An element's key: the identity its project is pinned to in the inventory. */
export const ELEMENT_KEY = '^[A-Za-z0-9]([A-Za-z0-9._-]{0,126}[A-Za-z0-9])?$';

const KEY_FIELD = { type: 'string', pattern: VARIABLE_NAME, description: 'The value of each element that is its key (`tenant`), for elements without `key`.' };

const DOCUMENT_TEMPLATE = (what: string, named: boolean): JsonSchema => ({
  type: 'object',
  description: `A ${what} document made for each element: its \`spec.project\` is the generated project unless the template sets it.`,
  properties: {
    metadata: {
      type: 'object',
      description: named ? 'Name (required; unique per project), labels and annotations.' : 'Name (default: the generated project\'s name), labels and annotations.',
      properties: {
        name: { type: 'string', minLength: 1, description: 'metadata.name of the generated document (may use variables).' },
        labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Labels of the generated document (may use variables).' },
        annotations: { type: 'object', additionalProperties: { type: 'string' }, description: 'Annotations of the generated document (may use variables).' },
      },
      ...(named ? { required: ['name'] } : {}),
      additionalProperties: false,
    },
    spec: { type: 'object', description: `The ${what} spec, as in a ${what} document; its strings may use variables.` },
  },
  required: named ? ['metadata', 'spec'] : ['spec'],
  additionalProperties: false,
});

function projectSetDefs(): Record<string, JsonSchema> {
  return {
    ProjectSetElement: {
      title: 'ProjectSetElement',
      description: 'One element of a list: its values (strings, numbers or booleans, each a variable of the template), its `key` unless the list names a `keyField`, and its `overrides`.',
      type: 'object',
      properties: {
        key: { type: 'string', pattern: ELEMENT_KEY, description: 'The element\'s identity: its project is pinned to this key in the inventory. Never its position in the list. Also the variable `${key}`.' },
        overrides: { type: 'object', description: 'An RFC 7386 JSON merge patch on this element\'s generated template (`metadata`, `spec`, `secrets`, `functions`, `ssoProviders`): `null` removes a field, an array replaces the whole array. Not substituted.' },
      },
      propertyNames: { pattern: VARIABLE_NAME },
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    },
    ProjectSetList: {
      title: 'ProjectSetList',
      description: 'Elements written in the document.',
      type: 'object',
      properties: {
        elements: { type: 'array', items: { $ref: '#/$defs/ProjectSetElement' }, description: 'The elements, one project each. Their order does not matter.' },
        keyField: KEY_FIELD,
      },
      required: ['elements'],
      additionalProperties: false,
    },
    ProjectSetValues: {
      title: 'ProjectSetValues',
      description: 'A directory of values files, one element per file (`tenants/acme.yaml`): each a YAML mapping of values (with neither `apiVersion` nor `kind`), its `overrides` and optionally its `key`; the key is otherwise the file\'s name without `.yaml`.',
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'The directory, relative to this file and inside the manifests directory. Every YAML file below it is a values file of this set.' },
        keyField: KEY_FIELD,
      },
      required: ['path'],
      additionalProperties: false,
    },
    ProjectSetSource: {
      title: 'ProjectSetSource',
      description: 'A generator of elements: exactly one of `list` or `values`.',
      type: 'object',
      properties: {
        list: { description: 'Elements written in the document.', $ref: '#/$defs/ProjectSetList' },
        values: { description: 'One element per values file of a directory.', $ref: '#/$defs/ProjectSetValues' },
      },
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    },
    ProjectSetGenerator: {
      title: 'ProjectSetGenerator',
      description: 'A generator: exactly one of `list`, `values` or `matrix`.',
      type: 'object',
      properties: {
        list: { description: 'Elements written in the document.', $ref: '#/$defs/ProjectSetList' },
        values: { description: 'One element per values file of a directory.', $ref: '#/$defs/ProjectSetValues' },
        matrix: {
          type: 'object',
          description: 'Every combination of the elements of two generators (tenants x environments): the values of both (a variable both set must agree), key `<first>.<second>`, the overrides of both (the second\'s last).',
          properties: {
            generators: { type: 'array', minItems: 2, maxItems: 2, items: { $ref: '#/$defs/ProjectSetSource' }, description: 'The two generators combined.' },
          },
          required: ['generators'],
          additionalProperties: false,
        },
      },
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    },
    ProjectSetTemplate: {
      title: 'ProjectSetTemplate',
      description: 'The documents made for each element. Every string (and mapping key) may use `${name}`: a value of the element, `${key}` (its key) or `${set}` (this set\'s name). A string that is exactly one `${name}` takes the value\'s type; `$${` writes a literal `${`. Inside `valueFrom.env`, a substituted value is written as an environment variable name (upper case, other characters as `_`).',
      type: 'object',
      properties: {
        metadata: {
          type: 'object',
          description: 'The Project\'s metadata: its name (it must use a variable, so that each element makes its own project) and labels.',
          properties: {
            name: { type: 'string', minLength: 1, description: 'The generated Project\'s metadata.name (`${tenant}-prod`). Changing it later would rename existing projects: that is a blocked change.' },
            labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Labels of each generated Project (Rollout waves, Migrations and shard selectors, approval rules select them).' },
            annotations: { type: 'object', additionalProperties: { type: 'string' }, description: 'Annotations of each generated Project.' },
          },
          required: ['name'],
          additionalProperties: false,
        },
        spec: { type: 'object', description: 'The Project spec, as in a Project document (organization, region, configuration sections, policy).' },
        secrets: DOCUMENT_TEMPLATE('Secrets', false),
        functions: { type: 'array', items: DOCUMENT_TEMPLATE('Function', true), description: 'Function documents made for each project.' },
        ssoProviders: { type: 'array', items: DOCUMENT_TEMPLATE('SsoProvider', true), description: 'SsoProvider documents made for each project.' },
      },
      required: ['metadata', 'spec'],
      additionalProperties: false,
    },
    ProjectSetSpec: {
      title: 'ProjectSetSpec',
      description: 'A template and the generators of its elements: one Project (with its documents) per element.',
      type: 'object',
      properties: {
        generators: { type: 'array', minItems: 1, items: { $ref: '#/$defs/ProjectSetGenerator' }, description: 'The generators; the set\'s elements are all of theirs (keys unique across them).' },
        maxProjects: { type: 'integer', minimum: 1, maximum: MAX_PROJECTS_LIMIT, default: DEFAULT_MAX_PROJECTS, description: `The most projects the set may make; more is refused whole. Default ${DEFAULT_MAX_PROJECTS}.` },
        template: { description: 'The documents made for each element: a Project, and optionally its Secrets, Function and SsoProvider documents.', $ref: '#/$defs/ProjectSetTemplate' },
      },
      required: ['generators', 'template'],
      additionalProperties: false,
    },
  };
}

/** The ProjectSet document kind: expanded while loading into ordinary documents. */
export const projectSetDocument: DocumentSchema = {
  kind: 'ProjectSet',
  description: 'A template of a project and the generators that make one project per element (tenant, customer, environment).',
  defs: projectSetDefs,
};
