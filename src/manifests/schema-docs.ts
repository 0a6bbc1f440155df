// Renders the field reference (docs/reference/, one page per kind) from the schemas, so the
// documentation says exactly what validation accepts (test/manifests/schema-drift.test.ts).
import { kindFileName, type JsonSchema } from './schema-source.js';
import { isSecretAuthField } from './secret-fields.js';


function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function typeLabel(schema: JsonSchema): string {
  if (typeof schema.$ref === 'string') return schema.$ref.replace('#/$defs/', '');
  if ('const' in schema) return `\`${String(schema.const)}\``;
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((value) => value !== null).map((value) => `\`${String(value)}\``);
    const shown = values.length > 6 ? [...values.slice(0, 4), `… (${values.length} values)`] : values;
    return `one of ${shown.join(', ')}${schema.enum.includes(null) ? ', or null' : ''}`;
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.some((member) => typeof member === 'object' && member !== null && 'type' in member)) {
    return (schema.oneOf as JsonSchema[]).map(typeLabel).join(' or ');
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const nullable = types.includes('null');
  const main = types.filter((type) => type !== 'null').map((type) => {
    if (type === 'array') return `list of ${typeLabel(schema.items as JsonSchema)}`;
    if (type === 'object' && !schema.properties && typeof schema.additionalProperties === 'object') {
      return `map of name to ${typeLabel(schema.additionalProperties as JsonSchema)}`;
    }
    return type;
  });
  return `${main.join(' or ')}${nullable ? ' or null' : ''}`;
}

function fieldTable(definition: JsonSchema): string {
  const properties = (definition.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((definition.required as string[] | undefined) ?? []);
  const rows = Object.entries(properties).map(
    ([name, property]) =>
      `| \`${name}\`${required.has(name) ? ' (required)' : ''} | ${cell(typeLabel(property))} | ${cell(String(property.description ?? ''))} |`,
  );
  return ['| field | type | meaning |', '|---|---|---|', ...rows].join('\n');
}

function authGroup(name: string): string {
  if (/^external_idp\d\d_/.test(name)) return 'external identity providers `external_idp01_*` … `external_idp20_*`';
  const prefixes: Array<[string, string]> = [
    ['external_', 'sign-in methods `external_*_enabled`'],
    ['smtp_', 'SMTP `smtp_*`'],
    ['mailer_', 'mails `mailer_*`'],
    ['sms_', 'SMS `sms_*` (providers `smsA` … `smsE`)'],
    ['hook_', 'auth hooks `hook_*`'],
    ['mfa_', 'multi-factor `mfa_*`'],
    ['rate_limit_', 'rate limits `rate_limit_*`'],
    ['security_', 'security and CAPTCHA `security_*`'],
    ['sessions_', 'sessions `sessions_*`'],
    ['password_', 'passwords `password_*`'],
    ['saml_', 'SAML `saml_*`'],
  ];
  for (const [prefix, label] of prefixes) if (name.startsWith(prefix)) return label;
  return 'general';
}

function authSummary(definition: JsonSchema): string {
  const groups = new Map<string, { count: number; secrets: string[]; examples: string[] }>();
  for (const name of Object.keys(definition.properties as Record<string, JsonSchema>)) {
    const label = authGroup(name);
    const group = groups.get(label) ?? { count: 0, secrets: [], examples: [] };
    group.count += 1;
    if (isSecretAuthField(name)) group.secrets.push(name);
    else if (group.examples.length < 3) group.examples.push(name);
    groups.set(label, group);
  }
  const rows = [...groups].map(([label, group]) => {
    const secrets = group.secrets.length > 4 ? `${group.secrets.slice(0, 2).map((s) => `\`${s}\``).join(', ')} … (${group.secrets.length})` : group.secrets.map((s) => `\`${s}\``).join(', ');
    return `| ${cell(label)} | ${group.count} | ${group.examples.map((e) => `\`${e}\``).join(', ')} | ${secrets || '–'} |`;
  });
  return ['| group | fields | for example | secret-bearing (references only) |', '|---|---|---|---|', ...rows].join('\n');
}

/** The reference page of a kind under docs/reference/ (`sso-provider.md`), or of the fields every kind shares (`common.md`). */
function referencePage(kind: string): string {
  return `${kindFileName(kind)}.md`;
}

const GENERATED_HEADER = '<!-- generated from schemas/ by `npm run generate:schemas`: edit src/manifests/schema-source.ts, not this file -->';

/** Markdown reference pages (file name under docs/reference/ to content): each kind, its fields, and the Project's field groups. */
export function renderFieldReference(
  schemas: Record<string, JsonSchema>,
  kinds: readonly string[] = Object.keys(schemas),
): Map<string, string> {
  const pages = new Map<string, string>();
  const shared = schemas.Project.$defs as Record<string, JsonSchema>;
  const sharedNote = `The fields every kind shares (\`metadata\`, \`policy\`, secret references) are on [the common page](${referencePage('common')}).`;
  for (const kind of kinds) {
    const defs = schemas[kind].$defs as Record<string, JsonSchema>;
    const spec = defs[`${kind}Spec`]!;
    const out: string[] = [GENERATED_HEADER, '', `# ${kind}`, '', String(spec.description ?? ''), '', `Schema: \`schemas/${referencePage(kind).replace('.md', '.schema.json')}\`. ${sharedNote}`, '', '## spec', '', fieldTable(spec), ''];
    if (kind === 'Project') {
      for (const [name, definition] of Object.entries(defs)) {
        if (['Metadata', 'Policy', 'SecretRef', 'ProjectSpec'].includes(name)) continue;
        out.push(`## ${name}`, '', String(definition.description ?? ''), '');
        if (name === 'AuthSpec') {
          out.push(`${Object.keys(definition.properties as object).length} fields in these groups (each field's meaning is in the schema, shown by editors):`, '', authSummary(definition), '');
        } else if (name === 'PostgresSpec') {
          const names = Object.keys(definition.properties as object).map((field) => `\`${field}\``);
          out.push(`Fields: ${names.join(', ')}.`, '');
        } else {
          out.push(fieldTable(definition), '');
        }
      }
    }
    pages.set(referencePage(kind), `${out.join('\n').trimEnd()}\n`);
  }
  const common: string[] = [GENERATED_HEADER, '', '# Shared fields: metadata, policy, secret references', ''];
  for (const name of ['Metadata', 'Policy', 'SecretRef']) {
    common.push(`## ${name}`, '', String(shared[name]!.description ?? ''), '', fieldTable(shared[name]!), '');
  }
  pages.set(referencePage('common'), `${common.join('\n').trimEnd()}\n`);
  return pages;
}
