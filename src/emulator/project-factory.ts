import { defaultAuthConfig, defaultStorageConfig, newJwtSecret, PLATFORM_DOMAIN, POSTGRES_BUILDS } from './defaults.js';
import { sha256Hex } from './masking.js';
import { newRef, newUuid, randomHex } from './random.js';
import { SERVICES, type EmulatorState, type ProjectRecord, type ProjectStatus, type ServiceName, type ApiKeyRecord } from './state.js';
import type { LifecycleDurations } from './durations.js';

interface NewProjectInput {
  ref?: string;
  name: string;
  orgSlug: string;
  region: string;
  status?: ProjectStatus;
  instanceSize?: string;
  postgresEngine?: string;
  dbPass?: string;
}

/** Services come up one after another, spread over `servicesHealthy` after the project is ACTIVE_HEALTHY. */
export function serviceSchedule(from: number, durations: LifecycleDurations): Record<ServiceName, number> {
  const order: ServiceName[] = ['db', 'db_postgres_user', 'bouncer', 'pooler', 'rest', 'auth', 'storage', 'realtime'];
  const out = {} as Record<ServiceName, number>;
  order.forEach((service, index) => {
    out[service] = from + Math.round((durations.servicesHealthy * (index + 1)) / order.length);
  });
  for (const service of SERVICES) out[service] ??= from + durations.servicesHealthy;
  return out;
}

function jwtLike(ref: string, role: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({ alg: 'HS256', typ: 'JWT' });
  const payload = encode({ iss: 'platform', ref, role, iat: 1_700_000_000, exp: 2_000_000_000 });
  return `${header}.${payload}.${randomHex(32)}`;
}

function defaultApiKeys(ref: string, at: string): ApiKeyRecord[] {
  const publishable = `pub_${randomHex(16)}`;
  const secret = `sec_${randomHex(24)}`;
  return [
    { id: newUuid(), name: 'anon', type: 'legacy', apiKey: jwtLike(ref, 'anon'), insertedAt: at, updatedAt: at },
    { id: newUuid(), name: 'service_role', type: 'legacy', apiKey: jwtLike(ref, 'service_role'), insertedAt: at, updatedAt: at },
    { id: newUuid(), name: 'default', type: 'publishable', apiKey: publishable, prefix: publishable.slice(0, 12), description: 'Default publishable key', insertedAt: at, updatedAt: at },
    {
      id: newUuid(), name: 'default', type: 'secret', apiKey: secret, prefix: secret.slice(0, 12), description: 'Default secret key',
      hash: sha256Hex(secret), secretJwtTemplate: { role: 'service_role' }, insertedAt: at, updatedAt: at,
    },
  ];
}

export function uniqueRef(state: EmulatorState): string {
  for (;;) {
    const ref = newRef();
    if (!state.projects.has(ref) && ![...state.branches.values()].some((b) => b.projectRef === ref)) return ref;
  }
}

/** A project record with the service's defaults for every section. */
export function buildProject(state: EmulatorState, input: NewProjectInput, now: number, durations: LifecycleDurations): ProjectRecord {
  const ref = input.ref ?? uniqueRef(state);
  const engine = input.postgresEngine ?? '15';
  const status = input.status ?? 'COMING_UP';
  const createdAtIso = new Date(now).toISOString();
  const readyFrom = status === 'COMING_UP' ? now + durations.projectCreate : now;
  return {
    numericId: state.nextNumericId(),
    ref,
    name: input.name,
    orgSlug: input.orgSlug,
    region: input.region,
    createdAt: now,
    status,
    instanceSize: input.instanceSize ?? 'micro',
    database: { version: POSTGRES_BUILDS[engine] ?? POSTGRES_BUILDS['15']!, postgresEngine: engine, releaseChannel: 'ga' },
    serviceReadyAt: status === 'COMING_UP' ? serviceSchedule(readyFrom, durations) : serviceSchedule(now - durations.servicesHealthy - 1, durations),
    generation: 0,
    authConfig: defaultAuthConfig(),
    postgresConfig: {},
    bouncer: { default_pool_size: 15, ignore_startup_parameters: 'extra_float_digits', max_client_conn: 200, pool_mode: 'transaction' },
    pooler: [
      {
        identifier: ref,
        databaseType: 'PRIMARY',
        region: input.region,
        dbHost: `aws-0-${input.region}.pooler.${PLATFORM_DOMAIN}`,
        defaultPoolSize: 15,
        maxClientConn: 200,
        poolMode: 'transaction',
      },
    ],
    restapi: { db_schema: 'public,graphql_public', max_rows: 1000, db_extra_search_path: 'public,extensions', db_pool: null, jwt_secret: newJwtSecret() },
    storage: defaultStorageConfig(),
    buckets: [],
    networkRestrictions: {
      entitlement: 'allowed',
      config: { dbAllowedCidrs: ['0.0.0.0/0'], dbAllowedCidrsV6: ['::/0'] },
      status: 'applied',
    },
    networkBans: [],
    sslEnforcement: false,
    cryptoextRootKey: randomHex(32),
    readonly: { enabled: false, overrideUntil: null },
    customHostname: { status: '1_not_started', hostname: '', id: '', txtName: '', txtValue: '', ownershipValue: '', verifiableAt: 0, generation: 0 },
    vanity: { subdomain: null },
    upgrades: [],
    backups: [],
    pitrEnabled: false,
    walgEnabled: true,
    secrets: new Map(),
    functions: new Map(),
    ssoProviders: new Map(),
    apiKeys: defaultApiKeys(ref, createdAtIso),
    webhooksEnabled: false,
    branchingEnabled: false,
    dbPassword: input.dbPass ?? randomHex(16),
  } as ProjectRecord;
}
