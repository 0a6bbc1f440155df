import { badRequest } from '../errors.js';
import { hmacForProject, isSecretAuthField } from '../masking.js';
import { componentSchema } from '../openapi.js';
import type { ProjectRecord } from '../state.js';
import { ok, projectFor, type Handler } from './context.js';

/** The auth config as the service answers it: secret-bearing fields as HMAC-SHA256 keyed by the ref. */
function maskedAuthConfig(project: ProjectRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(project.authConfig)) {
    out[field] = isSecretAuthField(field) && typeof value === 'string' ? hmacForProject(project.ref, value) : value;
  }
  return out;
}

let updatable: Set<string> | undefined;

export const getAuthConfig: Handler = (context) => ok(maskedAuthConfig(projectFor(context, { service: 'auth' })));

export const updateAuthConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'auth' });
  const body = context.body as Record<string, unknown>;
  updatable ??= new Set(Object.keys((componentSchema('UpdateAuthConfigBody') as { properties: object }).properties));
  const unknown = Object.keys(body).filter((field) => !updatable!.has(field));
  if (unknown.length > 0) throw badRequest(`Invalid request body: ${unknown.map((f) => `\`${f}\``).join(', ')} ${unknown.length === 1 ? 'is not an' : 'are not'} updatable auth field${unknown.length === 1 ? '' : 's'}`);
  Object.assign(project.authConfig, body);
  return ok(maskedAuthConfig(project));
};
