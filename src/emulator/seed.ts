import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { describeErrors, validatorFor } from './openapi.js';
import { buildProject } from './project-factory.js';
import { startCreate } from './lifecycle.js';
import { newPersonalAccessToken, newRef, newUuid, randomHex } from './random.js';
import { parseRedirectPattern } from './redirect-uri.js';
import { EmulatorState, MEMBER_ROLES, type FunctionRecord, type MemberRole, type OrganizationRecord, type ProjectRecord } from './state.js';
import type { LifecycleDurations } from './durations.js';
import { applyNetworkRestrictions, applyPoolerUpdate, applyStorageUpdate, activateCustomHostnameNow, bundleDigest } from './section-updates.js';
import { entityIdFrom } from './handlers/sso-providers.js';

/** The emulator's starting state: users and tokens, organizations and members, projects. Documented in docs/emulator.md. */
export interface SeedInput {
  users?: SeedUser[];
  organizations?: SeedOrganization[];
  projects?: SeedProject[];
  snippets?: SeedSnippet[];
  oauth_apps?: SeedOAuthApp[];
}

export interface SeedUser {
  id?: string;
  name: string;
  email?: string;
  mfa_enabled?: boolean;
  tokens?: string[];
}

export interface SeedOrganization {
  slug?: string;
  /** Same as slug (the service's deprecated organization id). */
  id?: string;
  name: string;
  plan?: OrganizationRecord['plan'];
  opt_in_tags?: string[];
  allowed_release_channels?: string[];
  /** `user` is a user id or email. Without members, the default user owns the organization. */
  members?: Array<{ user: string; role?: MemberRole }>;
}

export interface SeedProject {
  ref?: string;
  name: string;
  /** Organization slug (or id, or name). */
  organization: string;
  region?: string;
  status?: 'ACTIVE_HEALTHY' | 'INACTIVE' | 'COMING_UP';
  postgres_engine?: string;
  database_version?: string;
  instance_size?: string;
  db_pass?: string;
  pitr_enabled?: boolean;
  branching_enabled?: boolean;
  config?: {
    auth?: Record<string, unknown>;
    postgres?: Record<string, unknown>;
    pooler?: Record<string, unknown>;
    restapi?: Record<string, unknown>;
    storage?: Record<string, unknown>;
    network_restrictions?: { dbAllowedCidrs?: string[]; dbAllowedCidrsV6?: string[] };
    ssl_enforcement?: boolean;
    cryptoext?: { root_key: string };
    readonly?: boolean;
    vanity_subdomain?: string;
    custom_hostname?: string;
    network_bans?: string[];
  };
  /** Name -> value, or a list of {name, value}. */
  secrets?: Record<string, string> | Array<{ name: string; value: string }>;
  functions?: Array<{
    slug: string;
    name?: string;
    verify_jwt?: boolean;
    entrypoint_path?: string;
    import_map_path?: string;
    static_patterns?: string[];
    status?: 'ACTIVE' | 'REMOVED' | 'THROTTLED';
    /** Relative path -> source text. */
    files?: Record<string, string>;
  }>;
  sso_providers?: Array<{ metadata_url?: string; metadata_xml?: string; domains?: string[]; attribute_mapping?: { keys: Record<string, unknown> } }>;
  branches?: Array<{ name: string; git_branch?: string; persistent?: boolean; is_default?: boolean }>;
  buckets?: Array<{ name: string; public?: boolean }>;
}

export interface SeedSnippet {
  id?: string;
  name: string;
  description?: string;
  visibility?: 'user' | 'project' | 'org' | 'public';
  /** Project ref. */
  project: string;
  /** Owner: user id or email (default: the default user). */
  owner?: string;
  sql: string;
  favorite?: boolean;
}

export interface SeedOAuthApp {
  client_id: string;
  client_secret: string;
  name?: string;
  /** Allowed redirect URIs: exact URLs, or `*` as the whole port (`http://127.0.0.1:*`: any port, any path below). */
  redirect_uris: string[];
}

const spec = (name: string) => ({ $ref: `openapi#/components/schemas/${name}` });
const stringArray = { type: 'array', items: { type: 'string' } };

const SEED_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    users: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name'],
        properties: { id: { type: 'string', minLength: 1 }, name: { type: 'string' }, email: { type: 'string' }, mfa_enabled: { type: 'boolean' }, tokens: { type: 'array', items: { type: 'string', minLength: 8 } } },
      },
    },
    organizations: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name'],
        properties: {
          slug: { type: 'string', pattern: '^[\\w-]+$' }, id: { type: 'string', pattern: '^[\\w-]+$' }, name: { type: 'string' },
          plan: { enum: ['free', 'pro', 'team', 'enterprise', 'platform'] },
          opt_in_tags: { type: 'array', items: { enum: ['AI_SQL_GENERATOR_OPT_IN', 'AI_DATA_GENERATOR_OPT_IN', 'AI_LOG_GENERATOR_OPT_IN'] } },
          allowed_release_channels: { type: 'array', items: { enum: ['internal', 'alpha', 'beta', 'ga', 'withdrawn', 'preview'] } },
          members: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['user'], properties: { user: { type: 'string' }, role: { enum: [...MEMBER_ROLES] } } },
          },
        },
      },
    },
    projects: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'organization'],
        properties: {
          ref: { type: 'string', pattern: '^[a-z]{20}$' }, name: { type: 'string', minLength: 1 }, organization: { type: 'string' },
          region: { enum: ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ap-east-1', 'ap-southeast-1', 'ap-northeast-1', 'ap-northeast-2', 'ap-southeast-2', 'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-central-1', 'eu-central-2', 'ca-central-1', 'ap-south-1', 'sa-east-1'] },
          status: { enum: ['ACTIVE_HEALTHY', 'INACTIVE', 'COMING_UP'] },
          postgres_engine: { enum: ['13', '14', '15', '17', '17-oriole'] },
          database_version: { type: 'string' }, instance_size: { type: 'string' }, db_pass: { type: 'string' },
          pitr_enabled: { type: 'boolean' }, branching_enabled: { type: 'boolean' },
          config: {
            type: 'object', additionalProperties: false,
            properties: {
              auth: spec('UpdateAuthConfigBody'), postgres: spec('UpdatePostgresConfigBody'), pooler: spec('UpdatePoolerConfigBody'),
              restapi: spec('V1UpdateRestapiConfigBody'), storage: spec('UpdateStorageConfigBody'), network_restrictions: spec('NetworkRestrictionsRequest'),
              ssl_enforcement: { type: 'boolean' }, cryptoext: spec('UpdateCryptoextConfigBody'), readonly: { type: 'boolean' },
              vanity_subdomain: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$' }, custom_hostname: { type: 'string', minLength: 1 },
              network_bans: stringArray,
            },
          },
          secrets: {
            oneOf: [
              { type: 'object', additionalProperties: { type: 'string' } },
              { type: 'array', items: { type: 'object', additionalProperties: false, required: ['name', 'value'], properties: { name: { type: 'string' }, value: { type: 'string' } } } },
            ],
          },
          functions: {
            type: 'array',
            items: {
              type: 'object', additionalProperties: false, required: ['slug'],
              properties: {
                slug: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$' }, name: { type: 'string' }, verify_jwt: { type: 'boolean' },
                entrypoint_path: { type: 'string' }, import_map_path: { type: 'string' }, static_patterns: stringArray,
                status: { enum: ['ACTIVE', 'REMOVED', 'THROTTLED'] }, files: { type: 'object', additionalProperties: { type: 'string' } },
              },
            },
          },
          sso_providers: {
            type: 'array',
            items: {
              type: 'object', additionalProperties: false,
              properties: { metadata_url: { type: 'string' }, metadata_xml: { type: 'string' }, domains: stringArray, attribute_mapping: { type: 'object' } },
            },
          },
          branches: {
            type: 'array',
            items: {
              type: 'object', additionalProperties: false, required: ['name'],
              properties: { name: { type: 'string', minLength: 1 }, git_branch: { type: 'string' }, persistent: { type: 'boolean' }, is_default: { type: 'boolean' } },
            },
          },
          buckets: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 }, public: { type: 'boolean' } } },
          },
        },
      },
    },
    snippets: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'project', 'sql'],
        properties: {
          id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, visibility: { enum: ['user', 'project', 'org', 'public'] },
          project: { type: 'string' }, owner: { type: 'string' }, sql: { type: 'string' }, favorite: { type: 'boolean' },
        },
      },
    },
    oauth_apps: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['client_id', 'client_secret', 'redirect_uris'],
        properties: { client_id: { type: 'string', format: 'uuid' }, client_secret: { type: 'string', minLength: 8 }, name: { type: 'string' }, redirect_uris: { ...stringArray, minItems: 1 } },
      },
    },
  },
};

export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

/** Reads a YAML or JSON seed file (JSON is YAML). */
export async function loadSeedFile(path: string): Promise<SeedInput> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SeedError(`Cannot read the seed file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new SeedError(`${path}: ${(error as Error).message}`);
  }
  try {
    return validateSeed(parsed ?? {});
  } catch (error) {
    throw new SeedError(`${path}: ${(error as Error).message}`);
  }
}

export function validateSeed(input: unknown): SeedInput {
  const validate = validatorFor(SEED_SCHEMA as Record<string, unknown>);
  if (!validate(input)) throw new SeedError(describeErrors(validate.errors, 'seed'));
  return input as SeedInput;
}

interface SeedContext {
  now: number;
  durations: LifecycleDurations;
  /** The default user's token (`--token`, or the one chosen when the emulator started). */
  token?: string;
  /** Identities chosen once when the emulator starts, so reset and seed keep them (see SeedDefaults). */
  defaults?: SeedDefaults;
}

/**
 * What the emulator generates for a seed that leaves it out: kept for the emulator's lifetime
 * so that a printed or configured credential keeps working after `reset` and `seed`.
 */
export interface SeedDefaults {
  /** Id of the default user when the seed has no users. */
  userId: string;
  /** Slug of the default organization when the seed has no organizations. */
  organizationSlug: string;
  /** The default OAuth application when the seed has no oauth_apps. */
  oauthClient: { clientId: string; clientSecret: string };
}

/** Fresh default identities (one set per emulator). */
export function newSeedDefaults(): SeedDefaults {
  return { userId: newUuid(), organizationSlug: newRef(), oauthClient: { clientId: newUuid(), clientSecret: randomHex(24) } };
}

/** Builds a fresh state from a seed. Throws SeedError (nothing half-built is kept). */
export function buildStateFromSeed(input: SeedInput, context: SeedContext): EmulatorState {
  const seed = validateSeed(input);
  const state = new EmulatorState();
  const users = seed.users?.length ? seed.users : [{ id: context.defaults?.userId, name: 'Emulator User', email: 'user@emulator.test' }];
  users.forEach((user, index) => {
    const id = user.id ?? newUuid();
    if (state.users.has(id)) throw new SeedError(`users[${index}].id: duplicate user id ${id}`);
    state.users.set(id, { id, name: user.name, email: user.email ?? `${id}@emulator.test`, mfaEnabled: user.mfa_enabled ?? false });
    for (const token of user.tokens ?? []) {
      if (state.tokens.has(token)) throw new SeedError(`users[${index}].tokens: a token is given to two users`);
      state.tokens.set(token, { token, userId: id, kind: 'personal' });
    }
    if (index === 0) state.defaultUserId = id;
  });
  if (context.token !== undefined) {
    const owner = state.tokens.get(context.token);
    if (owner && owner.userId !== state.defaultUserId) throw new SeedError('The default user\'s token (--token, or the one printed at start) already belongs to another seeded user');
    state.tokens.set(context.token, { token: context.token, userId: state.defaultUserId, kind: 'personal' });
  }
  if (![...state.tokens.values()].some((t) => t.userId === state.defaultUserId)) {
    const token = newPersonalAccessToken();
    state.tokens.set(token, { token, userId: state.defaultUserId, kind: 'personal' });
  }
  const findUser = (key: string, at: string): string => {
    if (state.users.has(key)) return key;
    const byEmail = [...state.users.values()].find((u) => u.email === key);
    if (!byEmail) throw new SeedError(`${at}: no seeded user has the id or email ${key}`);
    return byEmail.id;
  };

  const orgs = seed.organizations?.length ? seed.organizations : [{ slug: context.defaults?.organizationSlug, name: 'Default Organization' }];
  orgs.forEach((input, index) => {
    const slug = input.slug ?? input.id ?? newRef();
    if (state.organizations.has(slug)) throw new SeedError(`organizations[${index}].slug: duplicate organization ${slug}`);
    const members = (input.members ?? []).map((m, i) => ({ userId: findUser(m.user, `organizations[${index}].members[${i}].user`), role: m.role ?? 'Owner' }));
    if (members.length === 0) members.push({ userId: state.defaultUserId, role: 'Owner' });
    state.organizations.set(slug, {
      slug,
      name: input.name,
      plan: input.plan ?? 'free',
      optInTags: input.opt_in_tags ?? [],
      allowedReleaseChannels: input.allowed_release_channels ?? ['ga', 'preview'],
      members,
    });
  });
  const findOrg = (key: string, at: string): OrganizationRecord => {
    const org = state.organizations.get(key) ?? [...state.organizations.values()].find((o) => o.name === key);
    if (!org) throw new SeedError(`${at}: no organization has the slug or name ${key}`);
    return org;
  };

  (seed.projects ?? []).forEach((input, index) => {
    const at = `projects[${index}]`;
    const org = findOrg(input.organization, `${at}.organization`);
    if (input.ref && state.projects.has(input.ref)) throw new SeedError(`${at}.ref: duplicate project ref ${input.ref}`);
    const status = input.status ?? 'ACTIVE_HEALTHY';
    const project = buildProject(
      state,
      {
        ref: input.ref, name: input.name, orgSlug: org.slug, region: input.region ?? 'us-east-1', status,
        instanceSize: input.instance_size, postgresEngine: input.postgres_engine, dbPass: input.db_pass,
      },
      context.now,
      context.durations,
    );
    if (input.database_version) project.database.version = input.database_version;
    project.pitrEnabled = input.pitr_enabled ?? false;
    project.branchingEnabled = input.branching_enabled ?? false;
    applySeedProject(state, project, input, at, context);
    state.projects.set(project.ref, project);
    if (status === 'COMING_UP') startCreate(state, project, context.now, context.durations);
  });

  (seed.snippets ?? []).forEach((input, index) => {
    const at = `snippets[${index}]`;
    if (!state.projects.has(input.project)) throw new SeedError(`${at}.project: no seeded project has the ref ${input.project}`);
    const id = input.id ?? newUuid();
    const stamp = new Date(context.now).toISOString();
    state.snippets.set(id, {
      id, name: input.name, description: input.description ?? null, visibility: input.visibility ?? 'user', projectRef: input.project,
      ownerId: input.owner ? findUser(input.owner, `${at}.owner`) : state.defaultUserId, sql: input.sql, favorite: input.favorite ?? false,
      insertedAt: stamp, updatedAt: stamp,
    });
  });

  const apps = seed.oauth_apps?.length
    ? seed.oauth_apps
    : [{
        client_id: context.defaults?.oauthClient.clientId ?? newUuid(),
        client_secret: context.defaults?.oauthClient.clientSecret ?? randomHex(24),
        name: 'Emulator OAuth app',
        redirect_uris: ['http://127.0.0.1:*', 'http://localhost:*'],
      }];
  apps.forEach((app, index) => {
    app.redirect_uris.forEach((uri, position) => {
      try {
        parseRedirectPattern(uri);
      } catch (error) {
        throw new SeedError(`oauth_apps[${index}].redirect_uris[${position}]: \`${uri}\` is not a redirect URI the emulator can match: ${(error as Error).message}`);
      }
    });
  });
  for (const app of apps) {
    state.oauthApps.set(app.client_id, { clientId: app.client_id, clientSecret: app.client_secret, name: app.name ?? 'OAuth app', redirectUris: app.redirect_uris });
  }
  return state;
}

function applySeedProject(state: EmulatorState, project: ProjectRecord, input: SeedProject, at: string, context: SeedContext): void {
  const stamp = new Date(context.now).toISOString();
  const config = input.config ?? {};
  if (config.auth) Object.assign(project.authConfig, config.auth);
  if (config.postgres) {
    const { restart_database: _restart, ...parameters } = config.postgres;
    Object.assign(project.postgresConfig, parameters);
  }
  if (config.pooler) applyPoolerUpdate(project, config.pooler);
  if (config.restapi) Object.assign(project.restapi, config.restapi);
  if (config.storage) applyStorageUpdate(project, config.storage);
  if (config.network_restrictions) {
    applyNetworkRestrictions(project, config.network_restrictions, stamp);
    project.networkRestrictions.status = 'applied';
  }
  if (config.ssl_enforcement !== undefined) project.sslEnforcement = config.ssl_enforcement;
  if (config.cryptoext) project.cryptoextRootKey = config.cryptoext.root_key;
  if (config.readonly !== undefined) project.readonly.enabled = config.readonly;
  if (config.network_bans) project.networkBans = [...config.network_bans];
  if (config.vanity_subdomain) {
    const taken = [...state.projects.values()].some((p) => p.vanity.subdomain === config.vanity_subdomain);
    if (taken) throw new SeedError(`${at}.config.vanity_subdomain: ${config.vanity_subdomain} is used by another project`);
    project.vanity.subdomain = config.vanity_subdomain;
  }
  if (config.custom_hostname) activateCustomHostnameNow(project, config.custom_hostname);
  const secrets = Array.isArray(input.secrets) ? input.secrets : Object.entries(input.secrets ?? {}).map(([name, value]) => ({ name, value }));
  for (const secret of secrets) project.secrets.set(secret.name, { value: secret.value, updatedAt: stamp });
  (input.functions ?? []).forEach((fn, index) => {
    const files = new Map(Object.entries(fn.files ?? {}).map(([path, text]) => [path, Buffer.from(text, 'utf8')]));
    const entrypoint = fn.entrypoint_path ?? (files.size > 0 ? [...files.keys()][0] : 'index.ts');
    if (project.functions.has(fn.slug)) throw new SeedError(`${at}.functions[${index}].slug: duplicate function ${fn.slug}`);
    const record: FunctionRecord = {
      id: newUuid(), slug: fn.slug, name: fn.name ?? fn.slug, status: fn.status ?? 'ACTIVE', version: 1,
      createdAt: context.now, updatedAt: context.now, verifyJwt: fn.verify_jwt ?? true, entrypointPath: entrypoint,
      importMapPath: fn.import_map_path, staticPatterns: fn.static_patterns ?? [], files,
    };
    record.ezbrSha256 = bundleDigest(record);
    project.functions.set(fn.slug, record);
  });
  (input.sso_providers ?? []).forEach((provider, index) => {
    if (!provider.metadata_url && !provider.metadata_xml) throw new SeedError(`${at}.sso_providers[${index}]: give metadata_url or metadata_xml`);
    const id = newUuid();
    let entityId: string;
    try {
      entityId = entityIdFrom(provider);
    } catch (error) {
      throw new SeedError(`${at}.sso_providers[${index}]: ${(error as Error).message}`);
    }
    project.ssoProviders.set(id, {
      id, samlId: newUuid(), entityId, metadataUrl: provider.metadata_url, metadataXml: provider.metadata_xml,
      attributeMapping: provider.attribute_mapping as { keys: Record<string, unknown> } | undefined,
      domains: (provider.domains ?? []).map((domain) => ({ id: newUuid(), domain, created_at: stamp, updated_at: stamp })),
      createdAt: stamp, updatedAt: stamp,
    });
  });
  if (input.branches?.length) project.branchingEnabled = true;
  for (const branch of input.branches ?? []) {
    const id = newUuid();
    state.branches.set(id, {
      id, name: branch.name, projectRef: branch.is_default ? project.ref : newRef(), parentRef: project.ref, isDefault: branch.is_default ?? false,
      gitBranch: branch.git_branch, persistent: branch.persistent ?? false, status: 'FUNCTIONS_DEPLOYED', previewStatus: 'ACTIVE_HEALTHY',
      createdAt: stamp, updatedAt: stamp, withData: false, dbPass: randomHex(16), jwtSecret: randomHex(32),
      postgresEngine: project.database.postgresEngine, postgresVersion: project.database.version, releaseChannel: 'ga', generation: 0,
    });
  }
  for (const bucket of input.buckets ?? []) {
    project.buckets.push({ id: bucket.name, name: bucket.name, owner: '', public: bucket.public ?? false, createdAt: stamp, updatedAt: stamp });
  }
}
