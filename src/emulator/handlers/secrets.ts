import { badRequest } from '../errors.js';
import { PLATFORM_DOMAIN } from '../defaults.js';
import { sha256Hex } from '../masking.js';
import type { ProjectRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler } from './context.js';

/** Names the service reserves for the secrets it provides itself; users can neither set nor delete them. */
export const RESERVED_SECRET_PREFIX = 'PLATFORM_';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function builtInSecrets(project: ProjectRecord): Array<[string, string]> {
  const key = (name: string) => project.apiKeys.find((k) => k.type === 'legacy' && k.name === name)?.apiKey ?? '';
  return [
    ['PLATFORM_URL', `https://${project.ref}.${PLATFORM_DOMAIN}`],
    ['PLATFORM_ANON_KEY', key('anon')],
    ['PLATFORM_SERVICE_ROLE_KEY', key('service_role')],
    ['PLATFORM_DB_URL', `postgresql://postgres:${project.dbPassword}@db.${project.ref}.${PLATFORM_DOMAIN}:5432/postgres`],
  ];
}

function checkName(name: string, field: string): void {
  if (!NAME.test(name)) throw badRequest(`\`${field}\` is not a valid secret name: ${JSON.stringify(name)} (letters, digits and underscores, not starting with a digit)`);
  if (name.startsWith(RESERVED_SECRET_PREFIX)) throw badRequest(`\`${field}\`: secret names must not start with ${RESERVED_SECRET_PREFIX} (reserved): ${name}`);
}

export const listSecrets: Handler = (context) => {
  const project = projectFor(context);
  const stamp = iso(project.createdAt);
  return ok([
    ...builtInSecrets(project).map(([name, value]) => ({ name, value: sha256Hex(value), updated_at: stamp })),
    ...[...project.secrets.entries()].map(([name, secret]) => ({ name, value: sha256Hex(secret.value), updated_at: secret.updatedAt })),
  ]);
};

export const createSecrets: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const secrets = context.body as Array<{ name: string; value: string }>;
  secrets.forEach((secret, index) => checkName(secret.name, `[${index}].name`));
  const stamp = iso(context.now);
  for (const secret of secrets) project.secrets.set(secret.name, { value: secret.value, updatedAt: stamp });
  return created({});
};

export const deleteSecrets: Handler = (context) => {
  const project = projectFor(context, { write: true });
  const names = context.body as string[];
  names.forEach((name, index) => checkName(name, `[${index}]`));
  for (const name of names) project.secrets.delete(name);
  return ok({});
};
