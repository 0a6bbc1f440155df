import type { AuthSpec } from '../../../manifests/types.js';
import { changedSubset, diffFields } from '../../diff.js';
import { convertOpenApiSchema, SECRET_REF, type JsonSchema, type OpenApiDocument } from '../../../manifests/schema-source.js';
import type { FieldChange } from '../../types.js';
import type { ConfigSection } from './section.js';
import { isSecretAuthField } from '../../../manifests/secret-fields.js';
import { matchesAuthSecretDigest } from './hmac-digest.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, unsetEquals, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectAuth', key: 'auth' } as const;

/**
 * Auth: one GET, one PATCH of the changed fields only. Secret-bearing fields come back as
 * HMAC-SHA256 digests keyed by the project ref, so they are compared digest to digest:
 * an unchanged secret is no diff, a secret changed out of band is seen, and neither side's
 * value ever reaches the entry (only `sensitive: true`).
 */
export const authConfig: ConfigSection<'ProjectAuth'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'postgres_version',
    property: { description: 'The auth configuration: the API\'s auth config fields; secret-bearing ones as references.', $ref: '#/$defs/AuthSpec' },
    defs: (openapi) => ({ AuthSpec: authSpec(openapi) }),
  },
  services: ['auth'],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const spec = sectionSpec<AuthSpec>(scope, SECTION.key);
    // The plain fields are compared where they are, the secret-bearing ones left out (no copy of the section: a plan reads every project's).
    const secretRefs = secretFieldsOf(spec);
    const secrets = new Map<string, string>();
    for (const [field, ref] of secretRefs) secrets.set(field, await ctx.resolveSecret(ref, scope.document));
    const live = scope.ref === undefined ? undefined : ((await ctx.api.getAuthServiceConfig(scope.ref, readOptions(scope, ctx))) as unknown as Record<string, unknown>);
    const changes: FieldChange[] = diffFields(spec as Record<string, unknown>, live ?? {}, { prefix: SECTION.key, equals: unsetEquals, ignore: secretRefs.map(([field]) => field) });
    for (const [field, value] of secrets) {
      if (live !== undefined && scope.ref !== undefined && matchesAuthSecretDigest(live[field], value, scope.ref)) continue;
      changes.push({ path: `${SECTION.key}.${field}`, sensitive: true });
    }
    changes.sort((a, b) => a.path.localeCompare(b.path));

    if (changes.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    return [sectionEntry(scope, SECTION, { action: live === undefined ? 'create' : 'update', changes })];
  },
  // Only the changed fields are sent; a changed secret's value is resolved again here.
  async apply(entry, scope, ctx) {
    const spec = sectionSpec<AuthSpec>(scope, SECTION.key);
    // The plain changes carry their values; a secret-bearing field's change is marked sensitive.
    const body: Record<string, unknown> = changedSubset(spec as Record<string, unknown>, entry.changes.filter((c) => !c.sensitive), SECTION.key);
    const changed = new Set(entry.changes.map((c) => c.path.slice(SECTION.key.length + 1)));
    for (const [field, ref] of secretFieldsOf(spec)) {
      if (changed.has(field)) body[field] = await ctx.resolveSecret(ref, scope.document);
    }
    await ctx.api.updateAuthServiceConfig(refAtApply(scope, ctx), body, writeOptions(scope, ctx));
  },
  async export({ api, ref, read, prune, fieldsOf, secretRef }) {
    const auth = await read(() => api.getAuthServiceConfig(ref));
    if (!auth) return undefined;
    const out: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(auth as Record<string, unknown>)) {
      if (value === null || value === undefined || value === '') continue;
      out[field] = isSecretAuthField(field) ? secretRef(field) : value;
    }
    const pruned = prune(out, 'AuthSpec') as Record<string, unknown> | undefined;
    if (!pruned) return undefined;
    // References are kept as given (the schema describes them through $ref).
    const known = fieldsOf('AuthSpec');
    for (const [field, value] of Object.entries(out)) if (isSecretAuthField(field) && known.includes(field)) pruned[field] = value;
    return pruned;
  },
};

/** The section's secret-bearing fields with their references (compared by digest). */
function secretFieldsOf(spec: AuthSpec): Array<[string, unknown]> {
  const refs: Array<[string, unknown]> = [];
  for (const field in spec) {
    if (!Object.hasOwn(spec, field)) continue;
    const value = (spec as Record<string, unknown>)[field];
    if (value !== undefined && isSecretAuthField(field)) refs.push([field, value]);
  }
  return refs;
}

// ---- the schema: the API's auth config fields, described by group

function typeWords(schema: JsonSchema): string {
  const parts: string[] = [];
  if (typeof schema.minimum === 'number' || typeof schema.maximum === 'number') {
    parts.push(`${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`);
  }
  return parts.length ? ` (${parts.join(', ')})` : '';
}

const AUTH_GROUPS: Array<[RegExp, (match: RegExpMatchArray) => string]> = [
  [/^external_(idp\d\d)_(enabled)$/, (m) => `External identity provider \`${m[1]}\`: enable sign-in with it.`],
  [/^external_(idp\d\d)_client_id$/, (m) => `External identity provider \`${m[1]}\`: OAuth client id.`],
  [/^external_(idp\d\d)_secret$/, (m) => `External identity provider \`${m[1]}\`: OAuth client secret.`],
  [/^external_(idp\d\d)_url$/, (m) => `External identity provider \`${m[1]}\`: the provider's base URL (self-hosted providers).`],
  [/^external_(idp\d\d)_additional_client_ids$/, (m) => `External identity provider \`${m[1]}\`: further accepted client ids, comma-separated.`],
  [/^external_(idp\d\d)_skip_nonce_check$/, (m) => `External identity provider \`${m[1]}\`: skip the ID token nonce check.`],
  [/^external_(anonymous_users|email|phone)_enabled$/, (m) => `Sign-in method: enable ${m[1]!.replace('_', ' ')} sign-in.`],
  [/^smtp_(.+)$/, (m) => `SMTP (custom mail server): \`${m[1]}\`.`],
  [/^mailer_subjects_(.+)$/, (m) => `Mail subject of the ${m[1]!.replaceAll('_', ' ')} message.`],
  [/^mailer_templates_(.+)_content$/, (m) => `Mail template (HTML) of the ${m[1]!.replaceAll('_', ' ')} message.`],
  [/^mailer_(.+)$/, (m) => `Mailer: \`${m[1]}\`.`],
  [/^sms_(sms[A-E])_(.+)$/, (m) => `SMS provider \`${m[1]}\`: \`${m[2]}\`.`],
  [/^sms_(.+)$/, (m) => `SMS: \`${m[1]}\`.`],
  [/^hook_(.+)_(enabled|uri|secrets)$/, (m) => `Auth hook \`${m[1]}\`: ${m[2] === 'enabled' ? 'enable it' : m[2] === 'uri' ? 'its URI' : 'its signing secrets'}.`],
  [/^mfa_(.+)$/, (m) => `Multi-factor authentication: \`${m[1]}\`.`],
  [/^rate_limit_(.+)$/, (m) => `Rate limit: \`${m[1]}\`.`],
  [/^security_captcha_(.+)$/, (m) => `CAPTCHA: \`${m[1]}\`.`],
  [/^security_(.+)$/, (m) => `Security: \`${m[1]}\`.`],
  [/^sessions_(.+)$/, (m) => `Sessions: \`${m[1]}\`.`],
  [/^password_(.+)$/, (m) => `Passwords: \`${m[1]}\`.`],
  [/^saml_(.+)$/, (m) => `SAML single sign-on: \`${m[1]}\`.`],
  [/^(.+)$/, (m) => `General: \`${m[1]}\`.`],
];

const AUTH_SPECIFIC: Record<string, string> = {
  site_url: 'The site URL: the default redirect after sign-in and the base of links in mails.',
  uri_allow_list: 'Further allowed redirect URLs, comma-separated.',
  disable_signup: 'Refuse new sign-ups.',
  jwt_exp: 'Access token lifetime in seconds.',
};

function describeAuthField(name: string, schema: JsonSchema): string {
  const specific = AUTH_SPECIFIC[name];
  let text = specific;
  if (!text) {
    for (const [pattern, render] of AUTH_GROUPS) {
      const match = name.match(pattern);
      if (match) {
        text = render(match);
        break;
      }
    }
  }
  return `${text}${typeWords(schema)} API field \`${name}\` of the auth configuration.`;
}

const SECRET_AUTH_NOTE =
  ' Secret-bearing: give it as a reference (`{valueFrom: {env: NAME}}` or `{valueFrom: {file: PATH}}`), never as a literal.';

function authSpec(openapi: OpenApiDocument): JsonSchema {
  const body = openapi.components.schemas.UpdateAuthConfigBody!;
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(body.properties as Record<string, JsonSchema>)) {
    if (isSecretAuthField(name)) {
      properties[name] = { description: describeAuthField(name, field) + SECRET_AUTH_NOTE, ...SECRET_REF };
    } else {
      properties[name] = convertOpenApiSchema(field, () => describeAuthField(name, field));
    }
  }
  return {
    title: 'AuthSpec',
    description:
      'The auth configuration (PATCH /v1/projects/{ref}/config/auth): only the fields listed here are managed, and only those are sent. Field names are the API\'s own.',
    type: 'object',
    properties,
    additionalProperties: false,
  };
}


