import type { Handler } from './context.js';
import * as projects from './projects.js';
import * as organizations from './organizations.js';
import * as authConfig from './auth-config.js';

/** One handler per operationId of the spec; a test checks that none is missing. */
export const HANDLERS: Record<string, Handler> = {
  'v1-list-all-projects': projects.listProjects,
  'v1-create-a-project': projects.createProject,
  'v1-get-project': projects.getProject,
  'v1-delete-a-project': projects.deleteProject,
  'v1-pause-a-project': projects.pauseProject,
  'v1-list-available-restore-versions': projects.listRestoreVersions,
  'v1-restore-a-project': projects.restoreProject,
  'v1-cancel-a-project-restoration': projects.cancelRestoration,
  'v1-get-services-health': projects.servicesHealth,
  'v1-create-an-organization': organizations.createOrganization,
  'v1-list-all-organizations': organizations.listOrganizations,
  'v1-get-an-organization': organizations.getOrganization,
  'v1-list-organization-members': organizations.listMembers,
  'v1-get-auth-service-config': authConfig.getAuthConfig,
  'v1-update-auth-service-config': authConfig.updateAuthConfig,
};
