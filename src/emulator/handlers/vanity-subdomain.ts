import { badRequest } from '../errors.js';
import { vanityDomain } from '../section-updates.js';
import type { ProjectRecord } from '../state.js';
import { created, ok, projectFor, type Handler, type HandlerContext } from './context.js';

const NAME = /^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/;
const RESERVED = new Set(['www', 'api', 'app', 'admin', 'db', 'dashboard', 'status', 'mail', 'platform', 'support', 'docs']);

function vanityStatus(project: ProjectRecord): 'not-used' | 'custom-domain-used' | 'active' {
  if (project.vanity.subdomain) return 'active';
  if (project.customHostname.status === '5_services_reconfigured') return 'custom-domain-used';
  return 'not-used';
}

function checkName(name: string): void {
  if (!NAME.test(name) || name.includes('--')) {
    throw badRequest('`vanity_subdomain` must be 3 to 63 lowercase letters, digits or single hyphens, starting and ending with a letter or digit');
  }
}

function available(context: HandlerContext, project: ProjectRecord, name: string): boolean {
  if (RESERVED.has(name)) return false;
  for (const other of context.state.projects.values()) if (other !== project && other.vanity.subdomain === name) return false;
  return true;
}

export const getVanity: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  const status = vanityStatus(project);
  return ok(status === 'active' ? { status, custom_domain: vanityDomain(project.vanity.subdomain!) } : { status });
};

export const checkAvailability: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  const name = (context.body as { vanity_subdomain: string }).vanity_subdomain;
  checkName(name);
  return created({ available: available(context, project, name) });
};

export const activateVanity: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const name = (context.body as { vanity_subdomain: string }).vanity_subdomain;
  checkName(name);
  if (vanityStatus(project) === 'custom-domain-used') throw badRequest('A custom hostname is active on this project; a vanity subdomain cannot be used with it');
  if (!available(context, project, name)) throw badRequest(`The vanity subdomain ${name} is not available`);
  project.vanity.subdomain = name;
  return created({ custom_domain: vanityDomain(name) });
};

export const deactivateVanity: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  if (!project.vanity.subdomain) throw badRequest('No vanity subdomain is active on this project');
  project.vanity.subdomain = null;
  return ok({});
};
