import { readFileSync } from 'node:fs';

/** The JSON type a success answer of an operation has at its top level, as the spec documents it. */
export type TopLevelShape = 'array' | 'object';

interface Schema {
  $ref?: string;
  type?: string;
}

interface OpenApiSubset {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
  components?: { schemas?: Record<string, Schema> };
}

let cached: ReadonlyMap<string, TopLevelShape> | undefined;

/**
 * Reads the shapes from the API description shipped with the package (schemas/api/openapi.json),
 * once. Only operations whose every JSON success answer has one top-level type are listed:
 * the check at the boundary must never refuse an answer the spec allows.
 */
export function responseShapes(): ReadonlyMap<string, TopLevelShape> {
  if (cached) return cached;
  const document = JSON.parse(readFileSync(new URL('../../schemas/api/openapi.json', import.meta.url), 'utf8')) as OpenApiSubset;
  const resolve = (schema: Schema | undefined): Schema | undefined => {
    let current = schema;
    for (let depth = 0; current?.$ref && depth < 10; depth++) current = document.components?.schemas?.[current.$ref.split('/').pop()!];
    return current;
  };
  const shapes = new Map<string, TopLevelShape>();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      if (!operation.operationId) continue;
      const types = new Set<string | undefined>();
      for (const [status, answer] of Object.entries(operation.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        const schema = answer.content?.['application/json']?.schema;
        if (schema) types.add(resolve(schema)?.type);
      }
      const [only] = [...types];
      if (types.size === 1 && (only === 'array' || only === 'object')) shapes.set(operation.operationId, only);
    }
  }
  cached = shapes;
  return shapes;
}

/** True when `value` has the documented top-level shape (or none is documented). */
export function hasDocumentedShape(operationId: string, value: unknown): boolean {
  const shape = responseShapes().get(operationId);
  if (shape === 'array') return Array.isArray(value);
  if (shape === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  return true;
}
