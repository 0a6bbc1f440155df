import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under nodenext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Record<string, unknown>;
}

interface OpenApiOperation {
  operationId: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

export interface SpecOperation {
  method: string;
  route: string;
  operationId: string;
  operation: OpenApiOperation;
}

let cachedDocument: OpenApiDocument | undefined;

/** The API description shipped in the repository (schemas/api/openapi.json). */
function openApiDocument(): OpenApiDocument {
  cachedDocument ??= JSON.parse(readFileSync(new URL('../../schemas/api/openapi.json', import.meta.url), 'utf8')) as OpenApiDocument;
  return cachedDocument;
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

export function specOperations(): SpecOperation[] {
  const out: SpecOperation[] = [];
  for (const [route, item] of Object.entries(openApiDocument().paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      out.push({ method: method.toUpperCase(), route, operationId: operation.operationId, operation });
    }
  }
  return out;
}

/**
 * Rewrites OpenAPI 3.0 dialect into JSON Schema that ajv validates strictly:
 * `nullable` becomes a `null` type (and a `null` enum member, which 3.0 leaves implicit),
 * draft-4 boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers, and the
 * `discriminator` hint (which only selects among `oneOf` branches) is dropped.
 */
function normalizeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normalizeSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const input = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === 'nullable' || key === 'discriminator' || key === 'example') continue;
    if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, normalizeSchema(v)]));
    } else if (key === '$ref' && typeof value === 'string') {
      out[key] = value.startsWith('#/components/schemas/') ? `openapi${value}` : value;
    } else {
      out[key] = normalizeSchema(value);
    }
  }
  if (input.exclusiveMinimum === true && typeof input.minimum === 'number') {
    out.exclusiveMinimum = input.minimum;
    delete out.minimum;
  } else if (typeof input.exclusiveMinimum === 'boolean') delete out.exclusiveMinimum;
  if (input.exclusiveMaximum === true && typeof input.maximum === 'number') {
    out.exclusiveMaximum = input.maximum;
    delete out.maximum;
  } else if (typeof input.exclusiveMaximum === 'boolean') delete out.exclusiveMaximum;
  if (input.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.type === undefined && out.oneOf) {
      out.oneOf = [...(out.oneOf as unknown[]), { type: 'null' }];
    }
  }
  return out;
}

let ajvInstance: Ajv | undefined;

function ajv(): Ajv {
  if (ajvInstance) return ajvInstance;
  const instance = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  addFormats(instance);
  instance.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  instance.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  instance.addFormat('binary', true);
  const document = openApiDocument();
  instance.addSchema({ $id: 'openapi', components: { schemas: normalizeSchema(document.components.schemas) } });
  ajvInstance = instance;
  return instance;
}

const validators = new Map<string, ValidateFunction>();
const validatorsByObject = new WeakMap<object, ValidateFunction>();

/** A compiled validator for an OpenAPI schema fragment (cached by identity, then by its text). */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const known = validatorsByObject.get(schema);
  if (known) return known;
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv().compile(normalizeSchema(schema) as Record<string, unknown>);
    validators.set(key, validate);
  }
  validatorsByObject.set(schema, validate);
  return validate;
}

/** The schema of a component (`#/components/schemas/NAME`). */
export function componentSchema(name: string): Record<string, unknown> {
  const schema = openApiDocument().components.schemas[name];
  if (!schema) throw new Error(`Unknown OpenAPI component \`${name}\``);
  return schema;
}

/** One readable sentence per ajv error, naming the field by its path. */
export function describeErrors(errors: ErrorObject[] | null | undefined, where: string): string {
  const messages = (errors ?? []).slice(0, 5).map((error) => {
    let field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      field = field ? `${field}.${missing}` : missing;
      return `\`${field}\` is required`;
    }
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      return `\`${field ? `${field}.${extra}` : extra}\` is not an allowed field`;
    }
    const target = field ? `\`${field}\`` : 'the value';
    if (error.keyword === 'enum') {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.filter((v) => v !== null);
      return `${target} must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    return `${target} ${error.message ?? 'is invalid'}`;
  });
  return `Invalid ${where}: ${[...new Set(messages)].join('; ')}`;
}

/** The response schema of an operation for a status, or undefined when it documents no body. */
export function responseSchema(operation: OpenApiOperation, status: number): Record<string, unknown> | undefined {
  const response = operation.responses[String(status)];
  if (!response?.content) return undefined;
  const media = response.content['application/json'] ?? Object.values(response.content)[0];
  return media?.schema;
}
