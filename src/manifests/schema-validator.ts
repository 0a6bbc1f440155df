// Validates one document against its kind's committed schema (schemas/*.schema.json) with ajv
// in strict mode, and turns ajv's errors into messages a person can act on: the field path,
// what was expected, and the nearest valid name for a typo.
import { readFileSync } from 'node:fs';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { KIND_SCHEMA_FILES } from './schema-source.js';
import { checkingAjv, newAjv } from './schema-checks-gen.js';
import * as PRECOMPILED from './schema-checks.js';
import { didYouMean } from './suggest.js';
import { pointerSegments } from './yaml-source.js';
import type { ManifestKind } from './types.js';

// ajv is loaded when a validator is compiled (newAjv): the committed kinds' checking validators
// are compiled ahead of time (schema-checks.ts), so a run whose documents are valid never loads it.

/** The schemas directory shipped with the program (dist/manifests and src/manifests are both two levels down). */
export const SCHEMAS_DIR = new URL('../../schemas/', import.meta.url);

interface SchemaProblem {
  /** JSON pointer of the field. */
  path: string;
  message: string;
  hint?: string;
  /** Locate the key of the last segment (an unknown field) rather than its value. */
  atKey?: boolean;
}

export function createAjv(): Ajv2020 {
  return newAjv({ strict: true, allErrors: true, allowUnionTypes: true, verbose: true });
}

function kindSchema(kind: ManifestKind): object {
  return JSON.parse(readFileSync(new URL(KIND_SCHEMA_FILES[kind], SCHEMAS_DIR), 'utf8')) as object;
}

// The validators that only answer "valid or not" (checkingAjv, options in schema-checks-gen.ts):
// most documents are valid, and without error lists, data in errors, inlined references or a
// check of the schema against the meta-schema a validator compiles about three times faster.
// Validity does not depend on these options, so a document this validator accepts is exactly
// one the exhaustive validator accepts. The committed kinds' are compiled ahead of time.

// Each kind's validators are compiled on first use: a fleet without SSO providers or branches
// never pays for theirs, and the exhaustive ones only for a kind that has an invalid document.
let sharedCheckingAjv: Ajv2020 | undefined;
let reportingAjv: Ajv2020 | undefined;
const checking = new Map<ManifestKind, ValidateFunction>();
const reporting = new Map<ManifestKind, ValidateFunction>();

// Validators of schemas handed in (a kind registered in memory), by schema object: compiled by
// an ajv of their own, so a kind's name never meets two schemas in one ajv.
const given = new WeakMap<object, { checking: ValidateFunction; reporting: ValidateFunction }>();

function givenValidators(schema: object): { checking: ValidateFunction; reporting: ValidateFunction } {
  let validators = given.get(schema);
  if (!validators) given.set(schema, (validators = { checking: checkingAjv().compile(schema), reporting: createAjv().compile(schema) }));
  return validators;
}

/** The lean validator of a kind: valid or not, nothing more. */
function checkingValidator(kind: ManifestKind, schema?: object): ValidateFunction {
  if (schema) return givenValidators(schema).checking;
  let validate = checking.get(kind) ?? (PRECOMPILED as unknown as Readonly<Record<string, ValidateFunction | undefined>>)[kind];
  if (!validate) {
    sharedCheckingAjv ??= checkingAjv();
    validate = sharedCheckingAjv.compile(kindSchema(kind));
    checking.set(kind, validate);
  }
  return validate;
}

/** The exhaustive validator of a kind (every error, with its data): the one messages are made from. */
function reportingValidator(kind: ManifestKind, schema?: object): ValidateFunction {
  if (schema) return givenValidators(schema).reporting;
  let validate = reporting.get(kind);
  if (!validate) {
    reportingAjv ??= createAjv();
    validate = reportingAjv.compile(kindSchema(kind));
    reporting.set(kind, validate);
  }
  return validate;
}

const SECRET_REF_SCHEMA = '#/$defs/SecretRef';
const REFERENCE_SHAPE = '`{valueFrom: {env: NAME}}` or `{valueFrom: {file: PATH}}`';

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const segment of pointerSegments(pointer)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return 'binary data';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  // Escaped, so control characters in a value cannot garble or colour a terminal.
  if (typeof value === 'string') return value.length > 40 ? 'a string' : `the string \`${JSON.stringify(value).slice(1, -1)}\``;
  return `${typeof value} \`${String(value)}\``;
}

function typeWords(type: unknown): string {
  const types = (Array.isArray(type) ? type : [type]).map((t) => (t === 'object' ? 'a mapping' : t === 'array' ? 'a list' : t === 'integer' ? 'an integer' : `${t === 'null' ? '' : 'a '}${String(t)}`));
  return types.join(' or ');
}

/** Path of the SecretRef a SecretRef-internal error belongs to. */
function secretRefPath(error: ErrorObject): string {
  const inner = error.schemaPath.slice(SECRET_REF_SCHEMA.length);
  if (inner.startsWith('/properties/valueFrom')) return error.instancePath.replace(/\/valueFrom(\/.*)?$/, '');
  return error.instancePath;
}

function secretRefProblem(path: string, errors: ErrorObject[], data: unknown): SchemaProblem {
  const value = valueAt(data, path);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      path,
      message: `a secret must not be a literal: use valueFrom, ${REFERENCE_SHAPE}`,
      hint: 'put the value in an environment variable or a file outside git',
    };
  }
  let hint: string | undefined;
  for (const error of errors) {
    if (error.keyword === 'additionalProperties') {
      const unknown = (error.params as { additionalProperty: string }).additionalProperty;
      hint = didYouMean(unknown, error.instancePath.endsWith('/valueFrom') ? ['env', 'file'] : ['valueFrom']) ?? hint;
    }
  }
  return { path, message: `expected a secret reference, ${REFERENCE_SHAPE}`, ...(hint ? { hint } : {}) };
}

function oneOfRequiredNames(schema: unknown): string[] | undefined {
  if (!Array.isArray(schema)) return undefined;
  const names = schema.map((member) => (member && typeof member === 'object' && Object.keys(member).length === 1 && Array.isArray((member as { required?: unknown }).required) ? (member as { required: string[] }).required : undefined));
  if (names.some((n) => n === undefined)) return undefined;
  return names.flat() as string[];
}

function convert(error: ErrorObject): SchemaProblem | undefined {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const known = Object.keys(((error.parentSchema as { properties?: object } | undefined)?.properties ?? {}) as object);
      const hint = didYouMean(name, known) ?? (known.length > 0 && known.length <= 12 ? `valid fields: ${known.join(', ')}` : undefined);
      return { path: `${path}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, message: `unknown field \`${name}\``, atKey: true, ...(hint ? { hint } : {}) };
    }
    case 'required':
      return { path, message: `missing required field \`${String(params.missingProperty)}\`` };
    case 'type':
      return { path, message: `expected ${typeWords(params.type)}, got ${describeValue(error.data)}` };
    case 'enum': {
      const values = (error.schema as unknown[]).filter((v) => v !== null).map((v) => `\`${String(v)}\``);
      const hint = typeof error.data === 'string' ? didYouMean(error.data, (error.schema as unknown[]).filter((v): v is string => typeof v === 'string')) : undefined;
      const shown = values.length > 8 ? `the ${values.length} allowed values (${values.slice(0, 6).join(', ')}, …)` : values.join(', ');
      return { path, message: `expected one of ${shown}, got ${describeValue(error.data)}`, ...(hint ? { hint } : {}) };
    }
    case 'const': {
      const hint = typeof error.data === 'string' && typeof error.schema === 'string' ? didYouMean(error.data, [error.schema]) : undefined;
      return { path, message: `expected \`${String(error.schema)}\`, got ${describeValue(error.data)}`, ...(hint ? { hint } : {}) };
    }
    case 'pattern':
      return { path, message: `${describeValue(error.data)} does not match the pattern \`${String(params.pattern)}\`` };
    case 'format':
      return { path, message: `expected a valid ${String(params.format)}, got ${describeValue(error.data)}` };
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return { path, message: `expected a number ${String(params.comparison)} ${String(params.limit)}, got ${String(error.data)}` };
    case 'minLength':
      return { path, message: `expected at least ${String(params.limit)} character(s)` };
    case 'maxLength':
      return { path, message: `expected at most ${String(params.limit)} characters` };
    case 'minItems':
      return { path, message: `expected at least ${String(params.limit)} item(s)` };
    case 'maxItems':
      return { path, message: `expected at most ${String(params.limit)} items` };
    case 'propertyNames':
      return { path: `${path}/${String(params.propertyName)}`, message: `invalid name \`${String(params.propertyName)}\`: ${nameRule(error.schema)}`, atKey: true };
    case 'oneOf': {
      const names = oneOfRequiredNames(error.schema);
      if (names) return { path, message: `set exactly one of ${names.map((n) => `\`${n}\``).join(' or ')}` };
      return { path, message: `expected ${describeAlternatives(error.schema)}, got ${describeValue(error.data)}` };
    }
    case 'if':
    case 'anyOf':
      return undefined;
    default:
      return { path, message: error.message ?? `invalid (${error.keyword})` };
  }
}

function nameRule(schema: unknown): string {
  const rule = schema as { pattern?: string; maxLength?: number };
  const parts = [rule.pattern ? `it must match \`${rule.pattern}\`` : '', rule.maxLength ? `at most ${rule.maxLength} characters` : ''].filter(Boolean);
  return parts.join(', ') || 'not allowed here';
}

function describeAlternatives(schema: unknown): string {
  if (!Array.isArray(schema)) return 'another value';
  const types = schema.map((member) => (member && typeof member === 'object' && 'type' in member ? typeWords((member as { type: unknown }).type) : 'another value'));
  return types.join(' or ');
}

/** Problems of one document against its kind's schema (the committed one unless `schema` is given); empty when it is valid. */
export function validateAgainstSchema(kind: ManifestKind, data: unknown, schema?: object): SchemaProblem[] {
  if (checkingValidator(kind, schema)(data)) return [];
  const validate = reportingValidator(kind, schema);
  if (validate(data)) return [];
  const errors = validate.errors ?? [];
  const problems: SchemaProblem[] = [];
  const secretErrors = new Map<string, ErrorObject[]>();
  const oneOfRequiredPaths = new Set(errors.filter((e) => e.keyword === 'oneOf' && oneOfRequiredNames(e.schema)).map((e) => e.schemaPath));
  for (const error of errors) {
    if (error.schemaPath.startsWith(SECRET_REF_SCHEMA)) {
      const refPath = secretRefPath(error);
      secretErrors.set(refPath, [...(secretErrors.get(refPath) ?? []), error]);
      continue;
    }
    // A property name's own pattern error repeats the propertyNames error.
    if (error.schemaPath.includes('/propertyNames/')) continue;
    // The members of a "one of these fields" choice only repeat what the oneOf error says.
    if ([...oneOfRequiredPaths].some((p) => error.schemaPath.startsWith(`${p}/`))) continue;
    // A value that fails a oneOf of shapes also fails each member: keep the oneOf summary only.
    if (/\/oneOf\/\d+\//.test(error.schemaPath)) continue;
    const problem = convert(error);
    if (problem) problems.push(problem);
  }
  for (const [path, group] of secretErrors) problems.push(secretRefProblem(path, group, data));
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
