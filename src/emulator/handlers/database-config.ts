import { badRequest, notFound } from '../errors.js';
import { PLATFORM_DOMAIN } from '../defaults.js';
import { newRef } from '../random.js';
import { applyPoolerUpdate } from '../section-updates.js';
import type { PoolerEntry, ProjectRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler } from './context.js';

export const getPostgresConfig: Handler = (context) => ok({ ...projectFor(context, { service: 'db' }).postgresConfig });

export const updatePostgresConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  // restart_database asks for a restart; it is not a parameter and is never stored.
  const { restart_database: _restart, ...parameters } = context.body as Record<string, unknown>;
  Object.assign(project.postgresConfig, parameters);
  return ok({ ...project.postgresConfig });
};

export const getBouncerConfig: Handler = (context) => {
  const project = projectFor(context, { service: 'bouncer' });
  return ok({
    ...project.bouncer,
    connection_string: `postgresql://postgres:[YOUR-PASSWORD]@db.${project.ref}.${PLATFORM_DOMAIN}:6543/postgres`,
  });
};

function poolerResponse(project: ProjectRecord, entry: PoolerEntry): Record<string, unknown> {
  const user = `postgres.${project.ref}`;
  const connection = `postgresql://${user}:[YOUR-PASSWORD]@${entry.dbHost}:6543/postgres`;
  return {
    identifier: entry.identifier,
    database_type: entry.databaseType,
    is_using_scram_auth: true,
    db_user: user,
    db_host: entry.dbHost,
    db_port: 6543,
    db_name: 'postgres',
    connection_string: connection,
    connectionString: connection,
    default_pool_size: entry.defaultPoolSize,
    max_client_conn: entry.maxClientConn,
    pool_mode: entry.poolMode,
  };
}

export const getPoolerConfig: Handler = (context) => {
  const project = projectFor(context, { service: 'pooler' });
  return ok(project.pooler.map((entry) => poolerResponse(project, entry)));
};

export const updatePoolerConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'pooler' });
  applyPoolerUpdate(project, context.body as { default_pool_size?: number | null; pool_mode?: string });
  const primary = project.pooler.find((p) => p.databaseType === 'PRIMARY')!;
  return ok({ default_pool_size: primary.defaultPoolSize, pool_mode: primary.poolMode });
};

export const getReadonlyStatus: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  const until = project.readonly.overrideUntil;
  const active = until !== null && until > context.now;
  return ok({ enabled: project.readonly.enabled, override_enabled: active, override_active_until: active ? iso(until) : '' });
};

export const disableReadonlyTemporarily: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  if (project.status === 'INACTIVE') throw badRequest(`Project ${project.ref} is paused; restore it first`);
  project.readonly.overrideUntil = context.now + context.durations.readonlyOverride;
  return created({});
};

function sslResponse(project: ProjectRecord): Record<string, unknown> {
  return { currentConfig: { database: project.sslEnforcement }, appliedSuccessfully: true };
}

export const getSslEnforcement: Handler = (context) => ok(sslResponse(projectFor(context, { service: 'db' })));

export const updateSslEnforcement: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  project.sslEnforcement = (context.body as { requestedConfig: { database: boolean } }).requestedConfig.database;
  return ok(sslResponse(project));
};

export const getRestapiConfig: Handler = (context) => ok({ ...projectFor(context, { service: 'rest' }).restapi });

export const updateRestapiConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'rest' });
  const body = context.body as { db_schema?: string; db_extra_search_path?: string; max_rows?: number; db_pool?: number };
  if (body.db_schema !== undefined && body.db_schema.split(',').some((s) => s.trim() === '')) {
    throw badRequest('`db_schema` must be a comma-separated list of schema names');
  }
  Object.assign(project.restapi, body);
  const { jwt_secret: _secret, ...rest } = project.restapi;
  return ok(rest);
};

export const getCryptoextConfig: Handler = (context) => ok({ root_key: projectFor(context, { service: 'db' }).cryptoextRootKey });

export const updateCryptoextConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const { root_key } = context.body as { root_key: string };
  if (!/^[0-9a-f]{64}$/.test(root_key)) throw badRequest('`root_key` must be 64 lowercase hexadecimal characters (32 bytes)');
  project.cryptoextRootKey = root_key;
  return ok({ root_key });
};

export const setupReadReplica: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  if (project.status !== 'ACTIVE_HEALTHY') throw badRequest(`Project ${project.ref} is ${project.status}: read replicas need an ACTIVE_HEALTHY project`);
  const region = (context.body as { read_replica_region: string }).read_replica_region;
  const identifier = `${project.ref}-rr-${region}-${newRef().slice(0, 5)}`;
  const primary = project.pooler.find((p) => p.databaseType === 'PRIMARY')!;
  project.pooler.push({
    identifier,
    databaseType: 'READ_REPLICA',
    region,
    dbHost: `aws-0-${region}.pooler.${PLATFORM_DOMAIN}`,
    defaultPoolSize: primary.defaultPoolSize,
    maxClientConn: primary.maxClientConn,
    poolMode: primary.poolMode,
  });
  return created({});
};

export const removeReadReplica: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const identifier = (context.body as { database_identifier: string }).database_identifier;
  const index = project.pooler.findIndex((p) => p.databaseType === 'READ_REPLICA' && p.identifier === identifier);
  if (index < 0) throw notFound(`No read replica with identifier ${identifier} in project ${project.ref}`);
  project.pooler.splice(index, 1);
  return created({});
};
