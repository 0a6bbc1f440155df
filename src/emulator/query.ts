import { EmulatorHttpError } from './errors.js';
import { describeErrors, validatorFor, type OpenApiParameter } from './openapi.js';

function coerce(raw: string[], schema: Record<string, unknown>, name: string): unknown {
  const type = schema.type;
  if (type === 'array') {
    const items = (schema.items ?? {}) as Record<string, unknown>;
    return raw.flatMap((value) => value.split(',')).filter((v) => v !== '').map((v) => coerce([v], items, name));
  }
  const value = raw[raw.length - 1]!;
  if (type === 'integer' || type === 'number') {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number)) throw new EmulatorHttpError(400, `Invalid query parameter \`${name}\`: expected a number, got \`${value}\``);
    return number;
  }
  if (type === 'boolean') {
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new EmulatorHttpError(400, `Invalid query parameter \`${name}\`: expected true or false, got \`${value}\``);
  }
  return value;
}

/** Reads, coerces and validates the query parameters an operation documents; others are ignored. */
export function parseQuery(parameters: OpenApiParameter[] | undefined, search: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const parameter of parameters ?? []) {
    if (parameter.in !== 'query') continue;
    const raw = search.getAll(parameter.name);
    if (raw.length === 0) {
      if (parameter.required) throw new EmulatorHttpError(400, `Missing required query parameter \`${parameter.name}\``);
      continue;
    }
    const value = coerce(raw, parameter.schema, parameter.name);
    const validate = validatorFor(parameter.schema);
    if (!validate(value)) throw new EmulatorHttpError(400, describeErrors(validate.errors, `query parameter \`${parameter.name}\``).replace(/the value/g, 'it'));
    out[parameter.name] = value;
  }
  return out;
}
