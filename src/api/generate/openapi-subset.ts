// The part of OpenAPI 3.0 that schemas/api/openapi.json uses, and the one function that turns a
// schema of it into TypeScript type text. Anything outside this part is refused by name, so a
// spec that starts using a new construct fails the generation instead of becoming `unknown`.

export interface Schema {
  $ref?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  enum?: unknown[];
  oneOf?: Schema[];
  nullable?: boolean;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface MediaObject {
  schema?: Schema;
}

export interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaObject> };
  responses: Record<string, { content?: Record<string, MediaObject> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Keywords that constrain values without changing their TypeScript type. */
const DESCRIPTIVE = new Set([
  'description', 'example', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength',
  'maxLength', 'pattern', 'default', 'deprecated', 'title', 'minItems', 'maxItems', 'uniqueItems', 'discriminator',
]);
const UNDERSTOOD = new Set(['$ref', 'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'oneOf', 'nullable']);

/** The component name a `#/components/schemas/NAME` reference points at. */
function refName(ref: string, where: string): string {
  const match = /^#\/components\/schemas\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref);
  if (!match) throw new Error(`${where}: unsupported $ref \`${ref}\` (only #/components/schemas/NAME)`);
  return match[1]!;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/**
 * TypeScript type text for a schema. `where` names the schema in errors; `refPrefix` is put
 * before component names (`T.` where the types live in another module). Enumerations of strings
 * are open sets, because the service may add members: `"a" | "b" | (string & {})` keeps the
 * editor's completion of the known members and still accepts any string.
 */
export function renderType(schema: Schema, where: string, indent = '', refPrefix = ''): string {
  for (const key of Object.keys(schema)) {
    if (!UNDERSTOOD.has(key) && !DESCRIPTIVE.has(key)) throw new Error(`${where}: unsupported schema keyword \`${key}\``);
  }
  const nullable = schema.nullable === true ? ' | null' : '';
  if (schema.$ref !== undefined) return `${refPrefix}${refName(schema.$ref, where)}${nullable}`;
  if (schema.oneOf) {
    return schema.oneOf.map((variant, index) => renderType(variant, `${where}.oneOf[${index}]`, indent, refPrefix)).join(' | ') + nullable;
  }
  if (schema.enum) {
    if (schema.type !== 'string' || !schema.enum.every((member) => typeof member === 'string')) {
      throw new Error(`${where}: only enumerations of strings are supported`);
    }
    // A nullable enumeration lists no `null` member in 3.0; the open set already admits any string.
    return [...schema.enum.map((member) => JSON.stringify(member)), '(string & {})'].join(' | ');
  }
  switch (schema.type) {
    case 'string':
      return `string${nullable}`;
    case 'integer':
    case 'number':
      return `number${nullable}`;
    case 'boolean':
      return `boolean${nullable}`;
    case 'array':
      if (!schema.items) throw new Error(`${where}: an array needs \`items\``);
      return `Array<${renderType(schema.items, `${where}[]`, indent, refPrefix)}>${nullable}`;
    // The spec leaves out `type` only on schemas of objects whose members it does not describe.
    case 'object':
    case undefined:
      return renderObject(schema, where, indent, refPrefix) + nullable;
    default:
      throw new Error(`${where}: unsupported type \`${String(schema.type)}\``);
  }
}

function renderObject(schema: Schema, where: string, indent: string, refPrefix: string): string {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) {
    const extra = schema.additionalProperties;
    if (extra && typeof extra === 'object') return `Record<string, ${renderType(extra, `${where}.*`, indent, refPrefix)}>`;
    return 'Record<string, unknown>';
  }
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = properties.map(([name, property]) => {
    const optional = required.has(name) ? '' : '?';
    return `${inner}${propertyKey(name)}${optional}: ${renderType(property, `${where}.${name}`, inner, refPrefix)};`;
  });
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** Names of the components a schema refers to, directly or through other components. */
export function reachableComponents(roots: Schema[], components: Record<string, Schema>): Set<string> {
  const found = new Set<string>();
  const visit = (schema: unknown): void => {
    if (Array.isArray(schema)) {
      schema.forEach(visit);
      return;
    }
    if (!schema || typeof schema !== 'object') return;
    const ref = (schema as Schema).$ref;
    if (typeof ref === 'string') {
      const name = refName(ref, 'reference');
      if (!found.has(name)) {
        const target = components[name];
        if (!target) throw new Error(`Unknown component \`${name}\` in ${ref}`);
        found.add(name);
        visit(target);
      }
    }
    Object.values(schema).forEach(visit);
  };
  roots.forEach(visit);
  return found;
}
