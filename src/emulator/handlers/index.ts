import type { Handler } from './context.js';
import * as projects from './projects.js';
import * as organizations from './organizations.js';
import * as authConfig from './auth-config.js';
import * as sso from './sso-providers.js';
import * as database from './database-config.js';
import * as db from './database.js';
import * as backups from './backups.js';
import * as snippets from './snippets.js';
import * as hostname from './custom-hostname.js';
import * as vanity from './vanity-subdomain.js';
import * as functions from './functions.js';
import * as secrets from './secrets.js';
import * as apiKeys from './api-keys.js';
import * as storage from './storage.js';
import * as branches from './branches.js';
import * as network from './network.js';
import * as upgrades from './upgrades.js';
import * as oauth from './oauth.js';

/** One handler per operationId of the spec; a test checks that none is missing. */
export function buildHandlers(settings: { oauthTokenTtlSeconds: () => number }): Record<string, Handler> {
  return {
    'v1-list-all-projects': projects.listProjects,
    'v1-create-a-project': projects.createProject,
    'v1-get-project': projects.getProject,
    'v1-delete-a-project': projects.deleteProject,
    'v1-pause-a-project': projects.pauseProject,
    'v1-list-available-restore-versions': projects.listRestoreVersions,
    'v1-restore-a-project': projects.restoreProject,
    'v1-cancel-a-project-restoration': projects.cancelRestoration,
    'v1-get-services-health': projects.servicesHealth,
    'v1-generate-typescript-types': db.generateTypes,
    'v1-run-a-query': db.runQuery,
    'v1-enable-database-webhook': db.enableWebhooks,
    'v1-create-an-organization': organizations.createOrganization,
    'v1-list-all-organizations': organizations.listOrganizations,
    'v1-get-an-organization': organizations.getOrganization,
    'v1-list-organization-members': organizations.listMembers,
    'v1-get-auth-service-config': authConfig.getAuthConfig,
    'v1-update-auth-service-config': authConfig.updateAuthConfig,
    'v1-create-a-sso-provider': sso.createProvider,
    'v1-list-all-sso-provider': sso.listProviders,
    'v1-get-a-sso-provider': sso.getProvider,
    'v1-update-a-sso-provider': sso.updateProvider,
    'v1-delete-a-sso-provider': sso.deleteProvider,
    'v1-get-postgres-config': database.getPostgresConfig,
    'v1-update-postgres-config': database.updatePostgresConfig,
    'v1-get-project-bouncer-config': database.getBouncerConfig,
    'v1-get-pooler-config': database.getPoolerConfig,
    'v1-update-pooler-config': database.updatePoolerConfig,
    'v1-get-readonly-mode-status': database.getReadonlyStatus,
    'v1-disable-readonly-mode-temporarily': database.disableReadonlyTemporarily,
    'v1-get-ssl-enforcement-config': database.getSslEnforcement,
    'v1-update-ssl-enforcement-config': database.updateSslEnforcement,
    'v1-get-restapi-service-config': database.getRestapiConfig,
    'v1-update-restapi-service-config': database.updateRestapiConfig,
    'v1-get-cryptoext-config': database.getCryptoextConfig,
    'v1-update-cryptoext-config': database.updateCryptoextConfig,
    'v1-list-all-backups': backups.listBackups,
    'v1-restore-pitr-backup': backups.restorePitr,
    'v1-setup-a-read-replica': database.setupReadReplica,
    'v1-remove-a-read-replica': database.removeReadReplica,
    'v1-list-all-snippets': snippets.listSnippets,
    'v1-get-a-snippet': snippets.getSnippet,
    'v1-get-hostname-config': hostname.getHostname,
    'v1-update-hostname-config': hostname.initializeHostname,
    'v1-verify-dns-config': hostname.reverifyHostname,
    'v1-activate-custom-hostname': hostname.activateHostname,
    'v1-get-vanity-subdomain-config': vanity.getVanity,
    'v1-deactivate-vanity-subdomain-config': vanity.deactivateVanity,
    'v1-check-vanity-subdomain-availability': vanity.checkAvailability,
    'v1-activate-vanity-subdomain-config': vanity.activateVanity,
    'v1-list-all-functions': functions.listFunctions,
    'v1-bulk-update-functions': functions.bulkUpdateFunctions,
    'v1-create-a-function': functions.createFunction,
    'v1-deploy-a-function': functions.deployFunction,
    'v1-get-a-function': functions.getFunction,
    'v1-update-a-function': functions.updateFunction,
    'v1-delete-a-function': functions.deleteFunction,
    'v1-get-a-function-body': functions.getFunctionBody,
    'v1-list-all-secrets': secrets.listSecrets,
    'v1-bulk-create-secrets': secrets.createSecrets,
    'v1-bulk-delete-secrets': secrets.deleteSecrets,
    'v1-get-project-api-keys': apiKeys.listApiKeys,
    'v1-get-storage-config': storage.getStorageConfig,
    'v1-update-storage-config': storage.updateStorageConfig,
    'v1-list-all-buckets': storage.listBuckets,
    'v1-create-a-branch': branches.createBranch,
    'v1-list-all-branches': branches.listBranches,
    'v1-disable-preview-branching': branches.disableBranching,
    'v1-get-a-branch-config': branches.getBranchConfig,
    'v1-update-a-branch-config': branches.updateBranch,
    'v1-delete-a-branch': branches.deleteBranch,
    'v1-push-a-branch': branches.pushBranch,
    'v1-reset-a-branch': branches.resetBranch,
    'v1-get-network-restrictions': network.getNetworkRestrictions,
    'v1-update-network-restrictions': network.applyRestrictions,
    'v1-list-all-network-bans': network.listNetworkBans,
    'v1-delete-network-bans': network.deleteNetworkBans,
    'v1-get-postgres-upgrade-eligibility': upgrades.getEligibility,
    'v1-upgrade-postgres-version': upgrades.startUpgrade,
    'v1-get-postgres-upgrade-status': upgrades.getUpgradeStatus,
    'v1-authorize-user': oauth.authorize,
    'v1-exchange-oauth-token': oauth.tokenHandler(settings.oauthTokenTtlSeconds),
    'v1-revoke-token': oauth.revoke,
  };
}
