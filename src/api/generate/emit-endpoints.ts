import { HTTP_METHODS, reachableComponents, renderType, type MediaObject, type OpenApiDocument, type Operation, type Schema } from './openapi-subset.js';

interface SelectedOperation {
  method: Uppercase<(typeof HTTP_METHODS)[number]>;
  route: string;
  operation: Operation;
}

export interface Selection {
  operations: readonly string[];
  idempotentPosts: ReadonlyMap<string, string>;
  binaryAnswers: readonly string[];
}

/** The selected operations in the spec's order; an operationId the spec lacks is an error. */
export function selectOperations(document: OpenApiDocument, selection: Selection): SelectedOperation[] {
  const wanted = new Set(selection.operations);
  const found: SelectedOperation[] = [];
  for (const [route, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!(HTTP_METHODS as readonly string[]).includes(method) || !wanted.has(operation.operationId)) continue;
      found.push({ method: method.toUpperCase() as SelectedOperation['method'], route, operation });
    }
  }
  const known = new Set(found.map((entry) => entry.operation.operationId));
  const check = (ids: Iterable<string>, list: string): void => {
    for (const id of ids) {
      if (!known.has(id)) throw new Error(`${list}: \`${id}\` is not an operation of the spec (or not in CLIENT_OPERATIONS)`);
    }
  };
  check(selection.operations, 'CLIENT_OPERATIONS');
  check(selection.idempotentPosts.keys(), 'IDEMPOTENT_POSTS');
  check(selection.binaryAnswers, 'BINARY_ANSWERS');
  for (const id of selection.idempotentPosts.keys()) {
    if (found.find((entry) => entry.operation.operationId === id)!.method !== 'POST') throw new Error(`IDEMPOTENT_POSTS: \`${id}\` is not a POST`);
  }
  return found;
}

/** Every schema an operation's parameters, body and answers use. */
function operationSchemas(operation: Operation): Schema[] {
  const media = (content: Record<string, MediaObject> | undefined) => Object.values(content ?? {}).flatMap((m) => (m.schema ? [m.schema] : []));
  return [
    ...(operation.parameters ?? []).flatMap((p) => (p.schema ? [p.schema] : [])),
    ...media(operation.requestBody?.content),
    ...Object.values(operation.responses).flatMap((answer) => media(answer.content)),
  ];
}

/** Components reached from the selected operations, in the spec's order. */
export function usedComponents(document: OpenApiDocument, operations: SelectedOperation[]): string[] {
  const reached = reachableComponents(operations.flatMap((entry) => operationSchemas(entry.operation)), document.components.schemas);
  return Object.keys(document.components.schemas).filter((name) => reached.has(name));
}

/** `v1-list-all-projects` -> `listAllProjects`. */
function methodName(operationId: string): string {
  const words = operationId.replace(/^v1-/, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((word, index) => (index === 0 ? word.toLowerCase() : word[0]!.toUpperCase() + word.slice(1).toLowerCase())).join('');
}

const BODY_KINDS: Record<string, 'json' | 'form' | 'multipart'> = {
  'application/json': 'json',
  'application/x-www-form-urlencoded': 'form',
  'multipart/form-data': 'multipart',
};

function successSchemas(operation: Operation): Schema[] {
  return Object.entries(operation.responses)
    .filter(([status]) => status.startsWith('2'))
    .flatMap(([, answer]) => (answer.content?.['application/json']?.schema ? [answer.content['application/json'].schema] : []));
}

function returnType(entry: SelectedOperation, binary: boolean): string {
  const where = `${entry.operation.operationId} answer`;
  const types = [...new Set(successSchemas(entry.operation).map((schema) => renderType(schema, where, '  ', 'T.')))];
  // An answer the spec documents no body for is an object the service may fill in later.
  if (types.length === 0) types.push('Record<string, unknown>');
  return [...(binary ? ['BinaryBody'] : []), ...types].join(' | ');
}

function renderMethod(entry: SelectedOperation, selection: Selection): string {
  const { operation, method, route } = entry;
  const id = operation.operationId;
  const pathNames = [...route.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const declared = new Map((operation.parameters ?? []).map((p) => [`${p.in}:${p.name}`, p]));
  for (const name of pathNames) {
    if (!declared.has(`path:${name}`)) throw new Error(`${id}: path parameter \`${name}\` is not declared`);
  }
  const query = (operation.parameters ?? []).filter((p) => p.in === 'query');
  const args = pathNames.map((name) => `${name}: string`);
  let bodyKind: 'none' | 'json' | 'form' | 'multipart' = 'none';
  if (operation.requestBody) {
    const entries = Object.entries(operation.requestBody.content);
    if (entries.length !== 1) throw new Error(`${id}: a request body with ${entries.length} media types is not supported`);
    const [mediaType, media] = entries[0]!;
    const kind = BODY_KINDS[mediaType];
    if (!kind) throw new Error(`${id}: unsupported request media type \`${mediaType}\``);
    if (!media.schema) throw new Error(`${id}: the request body has no schema`);
    bodyKind = kind;
    args.push(`body: ${kind === 'multipart' ? 'FormData' : renderType(media.schema, `${id} body`, '  ', 'T.')}`);
  }
  // Query parameters are all optional in the signature: callers pass them in `options.query`.
  const queryType = query.length === 0 ? '' : `<{ ${query.map((p) => `${p.name}?: QueryValue`).join('; ')} }>`;
  args.push(`options: CallOptions${queryType} = {}`);
  const answer = returnType(entry, selection.binaryAnswers.includes(id));
  const idempotent = method !== 'POST' || selection.idempotentPosts.has(id);
  const params = pathNames.length === 0 ? '{}' : `{ ${pathNames.join(', ')} }`;
  return [
    `  /** ${method} ${route} */`,
    `  async ${methodName(id)}(${args.join(', ')}): Promise<${answer}> {`,
    `    const response = await this.caller.call<${answer}>({`,
    `      operationId: '${id}',`,
    `      method: '${method}',`,
    `      route: '${route}',`,
    `      params: ${params},`,
    `      bodyKind: '${bodyKind}',`,
    ...(bodyKind === 'none' ? [] : ['      body,']),
    `      idempotent: ${idempotent},`,
    '      ...options,',
    '    });',
    '    return response.body;',
    '  }',
  ].join('\n');
}

export function renderEndpoints(header: string, operations: SelectedOperation[], selection: Selection): string {
  const usesBinary = operations.some((entry) => selection.binaryAnswers.includes(entry.operation.operationId));
  const requestImports = ['CallOptions', 'QueryValue', 'RequestCaller', ...(usesBinary ? ['BinaryBody'] : [])];
  return `${header}
// One method per operation the reconciler calls; the name is the operationId without its \`v1-\`
// prefix, in camelCase. Path parameters come first in path order, then the body (where the
// operation takes one), then call options. These functions know paths and shapes only:
// transport, authentication, the budget and retries live in the caller below them.
import type * as T from './types.js';
import type { ${requestImports.join(', ')} } from './request.js';

export type { QueryValue } from './request.js';

export class ManagementApi {
  /** The caller below: transport, authentication, the budget and retries. */
  constructor(readonly caller: RequestCaller) {}

${operations.map((entry) => renderMethod(entry, selection)).join('\n\n')}
}
`;
}

/** The JSON type every success answer of an operation has at its top level, where there is one. */
function topLevelShape(document: OpenApiDocument, operation: Operation): 'array' | 'object' | undefined {
  const types = new Set(
    successSchemas(operation).map((schema) => {
      let current: Schema | undefined = schema;
      for (let depth = 0; current?.$ref && depth < 10; depth++) current = document.components.schemas[current.$ref.split('/').pop()!];
      return current?.type;
    }),
  );
  const [only] = [...types];
  return types.size === 1 && (only === 'array' || only === 'object') ? only : undefined;
}

export function renderOperationFacts(header: string, document: OpenApiDocument, operations: SelectedOperation[], selection: Selection): string {
  const shapes = operations.flatMap((entry) => {
    const shape = topLevelShape(document, entry.operation);
    return shape ? [`  ['${entry.operation.operationId}', '${shape}'],`] : [];
  });
  const binary = operations.filter((entry) => selection.binaryAnswers.includes(entry.operation.operationId));
  return `${header}
// What the client checks at the boundary about each operation's answer.

/** The JSON type a success answer has at its top level, for operations where every documented success answer agrees. */
export const RESPONSE_SHAPES: ReadonlyMap<string, 'array' | 'object'> = new Map([
${shapes.join('\n')}
]);

/** Operations whose success answer may be other media than JSON (read as a BinaryBody). */
export const BINARY_ANSWERS: ReadonlySet<string> = new Set([
${binary.map((entry) => `  '${entry.operation.operationId}',`).join('\n')}
]);
`;
}
