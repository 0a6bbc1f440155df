// What the generator needs to know that schemas/api/openapi.json does not say. Everything else
// (paths, methods, parameters, bodies, answers, shapes) comes from the spec.

/**
 * The operations the reconciler calls, by operationId. Only these become ManagementApi methods
 * (and only the schemas they reach become types): an operation nothing calls would be code
 * nothing exercises. To call another operation, add its operationId here and run
 * `npm run generate:api`.
 */
export const CLIENT_OPERATIONS: readonly string[] = [
  'v1-list-all-projects',
  'v1-create-a-project',
  'v1-get-project',
  'v1-delete-a-project',
  'v1-pause-a-project',
  'v1-restore-a-project',
  'v1-get-services-health',
  'v1-create-an-organization',
  'v1-list-all-organizations',
  'v1-get-an-organization',
  'v1-get-auth-service-config',
  'v1-update-auth-service-config',
  'v1-create-a-sso-provider',
  'v1-list-all-sso-provider',
  'v1-update-a-sso-provider',
  'v1-delete-a-sso-provider',
  'v1-get-postgres-config',
  'v1-update-postgres-config',
  'v1-get-pooler-config',
  'v1-update-pooler-config',
  'v1-get-readonly-mode-status',
  'v1-run-a-query',
  'v1-disable-readonly-mode-temporarily',
  'v1-get-ssl-enforcement-config',
  'v1-update-ssl-enforcement-config',
  'v1-get-restapi-service-config',
  'v1-update-restapi-service-config',
  'v1-get-cryptoext-config',
  'v1-update-cryptoext-config',
  'v1-list-all-backups',
  'v1-setup-a-read-replica',
  'v1-remove-a-read-replica',
  'v1-get-hostname-config',
  'v1-update-hostname-config',
  'v1-verify-dns-config',
  'v1-activate-custom-hostname',
  'v1-get-vanity-subdomain-config',
  'v1-deactivate-vanity-subdomain-config',
  'v1-check-vanity-subdomain-availability',
  'v1-activate-vanity-subdomain-config',
  'v1-list-all-functions',
  'v1-bulk-update-functions',
  'v1-deploy-a-function',
  'v1-update-a-function',
  'v1-delete-a-function',
  'v1-get-a-function-body',
  'v1-list-all-secrets',
  'v1-bulk-create-secrets',
  'v1-bulk-delete-secrets',
  'v1-get-project-api-keys',
  'v1-get-storage-config',
  'v1-update-storage-config',
  'v1-create-a-branch',
  'v1-list-all-branches',
  'v1-disable-preview-branching',
  'v1-update-a-branch-config',
  'v1-delete-a-branch',
  'v1-push-a-branch',
  'v1-reset-a-branch',
  'v1-get-network-restrictions',
  'v1-update-network-restrictions',
  'v1-list-all-network-bans',
  'v1-delete-network-bans',
  'v1-get-postgres-upgrade-eligibility',
  'v1-upgrade-postgres-version',
  'v1-get-postgres-upgrade-status',
  'v1-exchange-oauth-token',
];

/**
 * POST operations that may be retried inline after a lost answer: sending them twice leaves the
 * same state as sending them once. Every other POST creates something or starts a process, so a
 * blind retry could do it twice; GET, PUT, PATCH and DELETE are idempotent by their method.
 */
export const IDEMPOTENT_POSTS: ReadonlyMap<string, string> = new Map([
  ['v1-update-hostname-config', 'sets the project\'s one custom hostname to the value sent'],
  ['v1-verify-dns-config', 're-checks the DNS records; changes nothing else'],
  ['v1-activate-custom-hostname', 'activating an active hostname leaves it active'],
  ['v1-check-vanity-subdomain-availability', 'a read sent as POST'],
  ['v1-activate-vanity-subdomain-config', 'sets the project\'s one vanity subdomain to the value sent'],
  ['v1-deploy-a-function', 'replaces the function with the sources sent'],
  ['v1-bulk-create-secrets', 'an upsert by name'],
  ['v1-update-network-restrictions', 'replaces the whole restriction list'],
  ['v1-list-all-network-bans', 'a read sent as POST'],
]);

/**
 * Operations whose success answer may be other media than the JSON the spec documents: the
 * function body answers an opaque bundle, or multipart sources when asked for them.
 */
export const BINARY_ANSWERS: readonly string[] = ['v1-get-a-function-body'];
