// One method per operation of schemas/api/openapi.json; the name is the operationId without
// its `v1-` prefix, in camelCase. Path parameters come first in path order, then the body
// (where the operation takes one), then call options. These functions know paths and shapes
// only: transport, authentication, the budget and retries live in the caller below them.
import type * as T from './types.js';
import type { CallOptions, RequestCaller, BinaryBody } from './request.js';

export type QueryValue = string | number | boolean | string[] | undefined;

export class ManagementApi {
  /** The caller below: transport, authentication, the budget and retries. */
  constructor(readonly caller: RequestCaller) {}

  /** GET /v1/projects */
  async listAllProjects(options: CallOptions = {}): Promise<Array<T.V1ProjectWithDatabaseResponse>> {
    const response = await this.caller.call<Array<T.V1ProjectWithDatabaseResponse>>({
      operationId: 'v1-list-all-projects',
      method: 'GET',
      route: '/v1/projects',
      params: {  },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects */
  async createAProject(body: T.V1CreateProjectBody, options: CallOptions = {}): Promise<T.V1ProjectResponse> {
    const response = await this.caller.call<T.V1ProjectResponse>({
      operationId: 'v1-create-a-project',
      method: 'POST',
      route: '/v1/projects',
      params: {  },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref} */
  async getProject(ref: string, options: CallOptions = {}): Promise<T.V1ProjectWithDatabaseResponse> {
    const response = await this.caller.call<T.V1ProjectWithDatabaseResponse>({
      operationId: 'v1-get-project',
      method: 'GET',
      route: '/v1/projects/{ref}',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref} */
  async deleteAProject(ref: string, options: CallOptions = {}): Promise<T.V1ProjectRefResponse> {
    const response = await this.caller.call<T.V1ProjectRefResponse>({
      operationId: 'v1-delete-a-project',
      method: 'DELETE',
      route: '/v1/projects/{ref}',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/pause */
  async pauseAProject(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-pause-a-project',
      method: 'POST',
      route: '/v1/projects/{ref}/pause',
      params: { ref },
      bodyKind: 'none',
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/restore */
  async listAvailableRestoreVersions(ref: string, options: CallOptions = {}): Promise<T.GetProjectAvailableRestoreVersionsResponse> {
    const response = await this.caller.call<T.GetProjectAvailableRestoreVersionsResponse>({
      operationId: 'v1-list-available-restore-versions',
      method: 'GET',
      route: '/v1/projects/{ref}/restore',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/restore */
  async restoreAProject(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-restore-a-project',
      method: 'POST',
      route: '/v1/projects/{ref}/restore',
      params: { ref },
      bodyKind: 'none',
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/restore/cancel */
  async cancelAProjectRestoration(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-cancel-a-project-restoration',
      method: 'POST',
      route: '/v1/projects/{ref}/restore/cancel',
      params: { ref },
      bodyKind: 'none',
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/health */
  async getServicesHealth(ref: string, options: CallOptions<{ services?: QueryValue; timeout_ms?: QueryValue }> = {}): Promise<Array<T.V1ServiceHealthResponse>> {
    const response = await this.caller.call<Array<T.V1ServiceHealthResponse>>({
      operationId: 'v1-get-services-health',
      method: 'GET',
      route: '/v1/projects/{ref}/health',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/types/typescript */
  async generateTypescriptTypes(ref: string, options: CallOptions<{ included_schemas?: QueryValue }> = {}): Promise<T.TypescriptResponse> {
    const response = await this.caller.call<T.TypescriptResponse>({
      operationId: 'v1-generate-typescript-types',
      method: 'GET',
      route: '/v1/projects/{ref}/types/typescript',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/database/query */
  async runAQuery(ref: string, body: T.V1RunQueryBody, options: CallOptions = {}): Promise<Array<Record<string, unknown>> | Record<string, unknown>> {
    const response = await this.caller.call<Array<Record<string, unknown>> | Record<string, unknown>>({
      operationId: 'v1-run-a-query',
      method: 'POST',
      route: '/v1/projects/{ref}/database/query',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/database/webhooks/enable */
  async enableDatabaseWebhook(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-enable-database-webhook',
      method: 'POST',
      route: '/v1/projects/{ref}/database/webhooks/enable',
      params: { ref },
      bodyKind: 'none',
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/organizations */
  async createAnOrganization(body: T.CreateOrganizationV1, options: CallOptions = {}): Promise<T.OrganizationResponseV1> {
    const response = await this.caller.call<T.OrganizationResponseV1>({
      operationId: 'v1-create-an-organization',
      method: 'POST',
      route: '/v1/organizations',
      params: {  },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/organizations */
  async listAllOrganizations(options: CallOptions = {}): Promise<Array<T.OrganizationResponseV1>> {
    const response = await this.caller.call<Array<T.OrganizationResponseV1>>({
      operationId: 'v1-list-all-organizations',
      method: 'GET',
      route: '/v1/organizations',
      params: {  },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/organizations/{slug} */
  async getAnOrganization(slug: string, options: CallOptions = {}): Promise<T.V1OrganizationSlugResponse> {
    const response = await this.caller.call<T.V1OrganizationSlugResponse>({
      operationId: 'v1-get-an-organization',
      method: 'GET',
      route: '/v1/organizations/{slug}',
      params: { slug },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/organizations/{slug}/members */
  async listOrganizationMembers(slug: string, options: CallOptions = {}): Promise<Array<T.V1OrganizationMemberResponse>> {
    const response = await this.caller.call<Array<T.V1OrganizationMemberResponse>>({
      operationId: 'v1-list-organization-members',
      method: 'GET',
      route: '/v1/organizations/{slug}/members',
      params: { slug },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/auth */
  async getAuthServiceConfig(ref: string, options: CallOptions = {}): Promise<T.AuthConfigResponse> {
    const response = await this.caller.call<T.AuthConfigResponse>({
      operationId: 'v1-get-auth-service-config',
      method: 'GET',
      route: '/v1/projects/{ref}/config/auth',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/projects/{ref}/config/auth */
  async updateAuthServiceConfig(ref: string, body: T.UpdateAuthConfigBody, options: CallOptions = {}): Promise<T.AuthConfigResponse> {
    const response = await this.caller.call<T.AuthConfigResponse>({
      operationId: 'v1-update-auth-service-config',
      method: 'PATCH',
      route: '/v1/projects/{ref}/config/auth',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/config/auth/sso/providers */
  async createASsoProvider(ref: string, body: T.CreateProviderBody, options: CallOptions = {}): Promise<T.CreateProviderResponse> {
    const response = await this.caller.call<T.CreateProviderResponse>({
      operationId: 'v1-create-a-sso-provider',
      method: 'POST',
      route: '/v1/projects/{ref}/config/auth/sso/providers',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/auth/sso/providers */
  async listAllSsoProvider(ref: string, options: CallOptions = {}): Promise<T.ListProvidersResponse> {
    const response = await this.caller.call<T.ListProvidersResponse>({
      operationId: 'v1-list-all-sso-provider',
      method: 'GET',
      route: '/v1/projects/{ref}/config/auth/sso/providers',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/auth/sso/providers/{provider_id} */
  async getASsoProvider(ref: string, provider_id: string, options: CallOptions = {}): Promise<T.GetProviderResponse> {
    const response = await this.caller.call<T.GetProviderResponse>({
      operationId: 'v1-get-a-sso-provider',
      method: 'GET',
      route: '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}',
      params: { ref, provider_id },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PUT /v1/projects/{ref}/config/auth/sso/providers/{provider_id} */
  async updateASsoProvider(ref: string, provider_id: string, body: T.UpdateProviderBody, options: CallOptions = {}): Promise<T.UpdateProviderResponse> {
    const response = await this.caller.call<T.UpdateProviderResponse>({
      operationId: 'v1-update-a-sso-provider',
      method: 'PUT',
      route: '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}',
      params: { ref, provider_id },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/config/auth/sso/providers/{provider_id} */
  async deleteASsoProvider(ref: string, provider_id: string, options: CallOptions = {}): Promise<T.DeleteProviderResponse> {
    const response = await this.caller.call<T.DeleteProviderResponse>({
      operationId: 'v1-delete-a-sso-provider',
      method: 'DELETE',
      route: '/v1/projects/{ref}/config/auth/sso/providers/{provider_id}',
      params: { ref, provider_id },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/database/postgres */
  async getPostgresConfig(ref: string, options: CallOptions = {}): Promise<T.PostgresConfigResponse> {
    const response = await this.caller.call<T.PostgresConfigResponse>({
      operationId: 'v1-get-postgres-config',
      method: 'GET',
      route: '/v1/projects/{ref}/config/database/postgres',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PUT /v1/projects/{ref}/config/database/postgres */
  async updatePostgresConfig(ref: string, body: T.UpdatePostgresConfigBody, options: CallOptions = {}): Promise<T.PostgresConfigResponse> {
    const response = await this.caller.call<T.PostgresConfigResponse>({
      operationId: 'v1-update-postgres-config',
      method: 'PUT',
      route: '/v1/projects/{ref}/config/database/postgres',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/database/bouncer */
  async getProjectBouncerConfig(ref: string, options: CallOptions = {}): Promise<T.V1BouncerConfigResponse> {
    const response = await this.caller.call<T.V1BouncerConfigResponse>({
      operationId: 'v1-get-project-bouncer-config',
      method: 'GET',
      route: '/v1/projects/{ref}/config/database/bouncer',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/database/pooler */
  async getPoolerConfig(ref: string, options: CallOptions = {}): Promise<Array<T.PoolerConfigResponse>> {
    const response = await this.caller.call<Array<T.PoolerConfigResponse>>({
      operationId: 'v1-get-pooler-config',
      method: 'GET',
      route: '/v1/projects/{ref}/config/database/pooler',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/projects/{ref}/config/database/pooler */
  async updatePoolerConfig(ref: string, body: T.UpdatePoolerConfigBody, options: CallOptions = {}): Promise<T.UpdatePoolerConfigResponse> {
    const response = await this.caller.call<T.UpdatePoolerConfigResponse>({
      operationId: 'v1-update-pooler-config',
      method: 'PATCH',
      route: '/v1/projects/{ref}/config/database/pooler',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/readonly */
  async getReadonlyModeStatus(ref: string, options: CallOptions = {}): Promise<T.ReadOnlyStatusResponse> {
    const response = await this.caller.call<T.ReadOnlyStatusResponse>({
      operationId: 'v1-get-readonly-mode-status',
      method: 'GET',
      route: '/v1/projects/{ref}/readonly',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/readonly/temporary-disable */
  async disableReadonlyModeTemporarily(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-disable-readonly-mode-temporarily',
      method: 'POST',
      route: '/v1/projects/{ref}/readonly/temporary-disable',
      params: { ref },
      bodyKind: 'none',
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/ssl-enforcement */
  async getSslEnforcementConfig(ref: string, options: CallOptions = {}): Promise<T.SslEnforcementResponse> {
    const response = await this.caller.call<T.SslEnforcementResponse>({
      operationId: 'v1-get-ssl-enforcement-config',
      method: 'GET',
      route: '/v1/projects/{ref}/ssl-enforcement',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PUT /v1/projects/{ref}/ssl-enforcement */
  async updateSslEnforcementConfig(ref: string, body: T.SslEnforcementRequest, options: CallOptions = {}): Promise<T.SslEnforcementResponse> {
    const response = await this.caller.call<T.SslEnforcementResponse>({
      operationId: 'v1-update-ssl-enforcement-config',
      method: 'PUT',
      route: '/v1/projects/{ref}/ssl-enforcement',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/restapi */
  async getRestapiServiceConfig(ref: string, options: CallOptions = {}): Promise<T.RestapiConfigWithJWTSecretResponse> {
    const response = await this.caller.call<T.RestapiConfigWithJWTSecretResponse>({
      operationId: 'v1-get-restapi-service-config',
      method: 'GET',
      route: '/v1/projects/{ref}/restapi',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/projects/{ref}/restapi */
  async updateRestapiServiceConfig(ref: string, body: T.V1UpdateRestapiConfigBody, options: CallOptions = {}): Promise<T.V1RestapiConfigResponse> {
    const response = await this.caller.call<T.V1RestapiConfigResponse>({
      operationId: 'v1-update-restapi-service-config',
      method: 'PATCH',
      route: '/v1/projects/{ref}/restapi',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/cryptoext */
  async getCryptoextConfig(ref: string, options: CallOptions = {}): Promise<T.CryptoextConfigResponse> {
    const response = await this.caller.call<T.CryptoextConfigResponse>({
      operationId: 'v1-get-cryptoext-config',
      method: 'GET',
      route: '/v1/projects/{ref}/cryptoext',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PUT /v1/projects/{ref}/cryptoext */
  async updateCryptoextConfig(ref: string, body: T.UpdateCryptoextConfigBody, options: CallOptions = {}): Promise<T.CryptoextConfigResponse> {
    const response = await this.caller.call<T.CryptoextConfigResponse>({
      operationId: 'v1-update-cryptoext-config',
      method: 'PUT',
      route: '/v1/projects/{ref}/cryptoext',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/database/backups */
  async listAllBackups(ref: string, options: CallOptions = {}): Promise<T.V1BackupsResponse> {
    const response = await this.caller.call<T.V1BackupsResponse>({
      operationId: 'v1-list-all-backups',
      method: 'GET',
      route: '/v1/projects/{ref}/database/backups',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/database/backups/restore-pitr */
  async restorePitrBackup(ref: string, body: T.V1RestorePitrBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-restore-pitr-backup',
      method: 'POST',
      route: '/v1/projects/{ref}/database/backups/restore-pitr',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/read-replicas/setup */
  async setupAReadReplica(ref: string, body: T.SetUpReadReplicaBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-setup-a-read-replica',
      method: 'POST',
      route: '/v1/projects/{ref}/read-replicas/setup',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/read-replicas/remove */
  async removeAReadReplica(ref: string, body: T.RemoveReadReplicaBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-remove-a-read-replica',
      method: 'POST',
      route: '/v1/projects/{ref}/read-replicas/remove',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/snippets */
  async listAllSnippets(options: CallOptions<{ project_ref?: QueryValue; cursor?: QueryValue; limit?: QueryValue; sort_by?: QueryValue; sort_order?: QueryValue }> = {}): Promise<T.SnippetList> {
    const response = await this.caller.call<T.SnippetList>({
      operationId: 'v1-list-all-snippets',
      method: 'GET',
      route: '/v1/snippets',
      params: {  },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/snippets/{id} */
  async getASnippet(id: string, options: CallOptions = {}): Promise<T.SnippetResponse> {
    const response = await this.caller.call<T.SnippetResponse>({
      operationId: 'v1-get-a-snippet',
      method: 'GET',
      route: '/v1/snippets/{id}',
      params: { id },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/custom-hostname */
  async getHostnameConfig(ref: string, options: CallOptions = {}): Promise<T.UpdateCustomHostnameResponse> {
    const response = await this.caller.call<T.UpdateCustomHostnameResponse>({
      operationId: 'v1-get-hostname-config',
      method: 'GET',
      route: '/v1/projects/{ref}/custom-hostname',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/custom-hostname/initialize */
  async updateHostnameConfig(ref: string, body: T.UpdateCustomHostnameBody, options: CallOptions = {}): Promise<T.UpdateCustomHostnameResponse> {
    const response = await this.caller.call<T.UpdateCustomHostnameResponse>({
      operationId: 'v1-update-hostname-config',
      method: 'POST',
      route: '/v1/projects/{ref}/custom-hostname/initialize',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/custom-hostname/reverify */
  async verifyDnsConfig(ref: string, options: CallOptions = {}): Promise<T.UpdateCustomHostnameResponse> {
    const response = await this.caller.call<T.UpdateCustomHostnameResponse>({
      operationId: 'v1-verify-dns-config',
      method: 'POST',
      route: '/v1/projects/{ref}/custom-hostname/reverify',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/custom-hostname/activate */
  async activateCustomHostname(ref: string, options: CallOptions = {}): Promise<T.UpdateCustomHostnameResponse> {
    const response = await this.caller.call<T.UpdateCustomHostnameResponse>({
      operationId: 'v1-activate-custom-hostname',
      method: 'POST',
      route: '/v1/projects/{ref}/custom-hostname/activate',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/vanity-subdomain */
  async getVanitySubdomainConfig(ref: string, options: CallOptions = {}): Promise<T.VanitySubdomainConfigResponse> {
    const response = await this.caller.call<T.VanitySubdomainConfigResponse>({
      operationId: 'v1-get-vanity-subdomain-config',
      method: 'GET',
      route: '/v1/projects/{ref}/vanity-subdomain',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/vanity-subdomain */
  async deactivateVanitySubdomainConfig(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-deactivate-vanity-subdomain-config',
      method: 'DELETE',
      route: '/v1/projects/{ref}/vanity-subdomain',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/vanity-subdomain/check-availability */
  async checkVanitySubdomainAvailability(ref: string, body: T.VanitySubdomainBody, options: CallOptions = {}): Promise<T.SubdomainAvailabilityResponse> {
    const response = await this.caller.call<T.SubdomainAvailabilityResponse>({
      operationId: 'v1-check-vanity-subdomain-availability',
      method: 'POST',
      route: '/v1/projects/{ref}/vanity-subdomain/check-availability',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/vanity-subdomain/activate */
  async activateVanitySubdomainConfig(ref: string, body: T.VanitySubdomainBody, options: CallOptions = {}): Promise<T.ActivateVanitySubdomainResponse> {
    const response = await this.caller.call<T.ActivateVanitySubdomainResponse>({
      operationId: 'v1-activate-vanity-subdomain-config',
      method: 'POST',
      route: '/v1/projects/{ref}/vanity-subdomain/activate',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/functions */
  async listAllFunctions(ref: string, options: CallOptions = {}): Promise<Array<T.FunctionResponse>> {
    const response = await this.caller.call<Array<T.FunctionResponse>>({
      operationId: 'v1-list-all-functions',
      method: 'GET',
      route: '/v1/projects/{ref}/functions',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PUT /v1/projects/{ref}/functions */
  async bulkUpdateFunctions(ref: string, body: T.BulkUpdateFunctionBody, options: CallOptions = {}): Promise<T.BulkUpdateFunctionResponse> {
    const response = await this.caller.call<T.BulkUpdateFunctionResponse>({
      operationId: 'v1-bulk-update-functions',
      method: 'PUT',
      route: '/v1/projects/{ref}/functions',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/functions */
  async createAFunction(ref: string, body: T.V1CreateFunctionBody, options: CallOptions<{ slug?: QueryValue; name?: QueryValue; verify_jwt?: QueryValue; import_map?: QueryValue; entrypoint_path?: QueryValue; import_map_path?: QueryValue; ezbr_sha256?: QueryValue }> = {}): Promise<T.FunctionResponse> {
    const response = await this.caller.call<T.FunctionResponse>({
      operationId: 'v1-create-a-function',
      method: 'POST',
      route: '/v1/projects/{ref}/functions',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/functions/deploy */
  async deployAFunction(ref: string, body: FormData, options: CallOptions<{ slug?: QueryValue; bundleOnly?: QueryValue }> = {}): Promise<T.DeployFunctionResponse> {
    const response = await this.caller.call<T.DeployFunctionResponse>({
      operationId: 'v1-deploy-a-function',
      method: 'POST',
      route: '/v1/projects/{ref}/functions/deploy',
      params: { ref },
      bodyKind: 'multipart',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/functions/{function_slug} */
  async getAFunction(ref: string, function_slug: string, options: CallOptions = {}): Promise<T.FunctionSlugResponse> {
    const response = await this.caller.call<T.FunctionSlugResponse>({
      operationId: 'v1-get-a-function',
      method: 'GET',
      route: '/v1/projects/{ref}/functions/{function_slug}',
      params: { ref, function_slug },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/projects/{ref}/functions/{function_slug} */
  async updateAFunction(ref: string, function_slug: string, body: T.V1UpdateFunctionBody, options: CallOptions<{ slug?: QueryValue; name?: QueryValue; verify_jwt?: QueryValue; import_map?: QueryValue; entrypoint_path?: QueryValue; import_map_path?: QueryValue; ezbr_sha256?: QueryValue }> = {}): Promise<T.FunctionResponse> {
    const response = await this.caller.call<T.FunctionResponse>({
      operationId: 'v1-update-a-function',
      method: 'PATCH',
      route: '/v1/projects/{ref}/functions/{function_slug}',
      params: { ref, function_slug },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/functions/{function_slug} */
  async deleteAFunction(ref: string, function_slug: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-delete-a-function',
      method: 'DELETE',
      route: '/v1/projects/{ref}/functions/{function_slug}',
      params: { ref, function_slug },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/functions/{function_slug}/body */
  async getAFunctionBody(ref: string, function_slug: string, options: CallOptions = {}): Promise<BinaryBody | Record<string, unknown>> {
    const response = await this.caller.call<BinaryBody | Record<string, unknown>>({
      operationId: 'v1-get-a-function-body',
      method: 'GET',
      route: '/v1/projects/{ref}/functions/{function_slug}/body',
      params: { ref, function_slug },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/secrets */
  async listAllSecrets(ref: string, options: CallOptions = {}): Promise<Array<T.SecretResponse>> {
    const response = await this.caller.call<Array<T.SecretResponse>>({
      operationId: 'v1-list-all-secrets',
      method: 'GET',
      route: '/v1/projects/{ref}/secrets',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/secrets */
  async bulkCreateSecrets(ref: string, body: T.CreateSecretBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-bulk-create-secrets',
      method: 'POST',
      route: '/v1/projects/{ref}/secrets',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/secrets */
  async bulkDeleteSecrets(ref: string, body: T.DeleteSecretsBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-bulk-delete-secrets',
      method: 'DELETE',
      route: '/v1/projects/{ref}/secrets',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/api-keys */
  async getProjectApiKeys(ref: string, options: CallOptions<{ reveal?: QueryValue }> = {}): Promise<Array<T.ApiKeyResponse>> {
    const response = await this.caller.call<Array<T.ApiKeyResponse>>({
      operationId: 'v1-get-project-api-keys',
      method: 'GET',
      route: '/v1/projects/{ref}/api-keys',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/config/storage */
  async getStorageConfig(ref: string, options: CallOptions = {}): Promise<T.StorageConfigResponse> {
    const response = await this.caller.call<T.StorageConfigResponse>({
      operationId: 'v1-get-storage-config',
      method: 'GET',
      route: '/v1/projects/{ref}/config/storage',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/projects/{ref}/config/storage */
  async updateStorageConfig(ref: string, body: T.UpdateStorageConfigBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-update-storage-config',
      method: 'PATCH',
      route: '/v1/projects/{ref}/config/storage',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/storage/buckets */
  async listAllBuckets(ref: string, options: CallOptions = {}): Promise<Array<T.V1StorageBucketResponse>> {
    const response = await this.caller.call<Array<T.V1StorageBucketResponse>>({
      operationId: 'v1-list-all-buckets',
      method: 'GET',
      route: '/v1/projects/{ref}/storage/buckets',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/branches */
  async createABranch(ref: string, body: T.CreateBranchBody, options: CallOptions = {}): Promise<T.BranchResponse> {
    const response = await this.caller.call<T.BranchResponse>({
      operationId: 'v1-create-a-branch',
      method: 'POST',
      route: '/v1/projects/{ref}/branches',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/branches */
  async listAllBranches(ref: string, options: CallOptions = {}): Promise<Array<T.BranchResponse>> {
    const response = await this.caller.call<Array<T.BranchResponse>>({
      operationId: 'v1-list-all-branches',
      method: 'GET',
      route: '/v1/projects/{ref}/branches',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/branches */
  async disablePreviewBranching(ref: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-disable-preview-branching',
      method: 'DELETE',
      route: '/v1/projects/{ref}/branches',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/branches/{branch_id} */
  async getABranchConfig(branch_id: string, options: CallOptions = {}): Promise<T.BranchDetailResponse> {
    const response = await this.caller.call<T.BranchDetailResponse>({
      operationId: 'v1-get-a-branch-config',
      method: 'GET',
      route: '/v1/branches/{branch_id}',
      params: { branch_id },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** PATCH /v1/branches/{branch_id} */
  async updateABranchConfig(branch_id: string, body: T.UpdateBranchBody, options: CallOptions = {}): Promise<T.BranchResponse> {
    const response = await this.caller.call<T.BranchResponse>({
      operationId: 'v1-update-a-branch-config',
      method: 'PATCH',
      route: '/v1/branches/{branch_id}',
      params: { branch_id },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/branches/{branch_id} */
  async deleteABranch(branch_id: string, options: CallOptions<{ force?: QueryValue }> = {}): Promise<T.BranchDeleteResponse> {
    const response = await this.caller.call<T.BranchDeleteResponse>({
      operationId: 'v1-delete-a-branch',
      method: 'DELETE',
      route: '/v1/branches/{branch_id}',
      params: { branch_id },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/branches/{branch_id}/push */
  async pushABranch(branch_id: string, body: T.BranchActionBody, options: CallOptions = {}): Promise<T.BranchUpdateResponse> {
    const response = await this.caller.call<T.BranchUpdateResponse>({
      operationId: 'v1-push-a-branch',
      method: 'POST',
      route: '/v1/branches/{branch_id}/push',
      params: { branch_id },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/branches/{branch_id}/reset */
  async resetABranch(branch_id: string, body: T.BranchActionBody, options: CallOptions = {}): Promise<T.BranchUpdateResponse> {
    const response = await this.caller.call<T.BranchUpdateResponse>({
      operationId: 'v1-reset-a-branch',
      method: 'POST',
      route: '/v1/branches/{branch_id}/reset',
      params: { branch_id },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/network-restrictions */
  async getNetworkRestrictions(ref: string, options: CallOptions = {}): Promise<T.NetworkRestrictionsResponse> {
    const response = await this.caller.call<T.NetworkRestrictionsResponse>({
      operationId: 'v1-get-network-restrictions',
      method: 'GET',
      route: '/v1/projects/{ref}/network-restrictions',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/network-restrictions/apply */
  async updateNetworkRestrictions(ref: string, body: T.NetworkRestrictionsRequest, options: CallOptions = {}): Promise<T.NetworkRestrictionsResponse> {
    const response = await this.caller.call<T.NetworkRestrictionsResponse>({
      operationId: 'v1-update-network-restrictions',
      method: 'POST',
      route: '/v1/projects/{ref}/network-restrictions/apply',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/network-bans/retrieve */
  async listAllNetworkBans(ref: string, options: CallOptions = {}): Promise<T.NetworkBanResponse> {
    const response = await this.caller.call<T.NetworkBanResponse>({
      operationId: 'v1-list-all-network-bans',
      method: 'POST',
      route: '/v1/projects/{ref}/network-bans/retrieve',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** DELETE /v1/projects/{ref}/network-bans */
  async deleteNetworkBans(ref: string, body: T.RemoveNetworkBanRequest, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-delete-network-bans',
      method: 'DELETE',
      route: '/v1/projects/{ref}/network-bans',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/upgrade/eligibility */
  async getPostgresUpgradeEligibility(ref: string, options: CallOptions = {}): Promise<T.ProjectUpgradeEligibilityResponse> {
    const response = await this.caller.call<T.ProjectUpgradeEligibilityResponse>({
      operationId: 'v1-get-postgres-upgrade-eligibility',
      method: 'GET',
      route: '/v1/projects/{ref}/upgrade/eligibility',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/projects/{ref}/upgrade */
  async upgradePostgresVersion(ref: string, body: T.UpgradeDatabaseBody, options: CallOptions = {}): Promise<T.ProjectUpgradeInitiateResponse> {
    const response = await this.caller.call<T.ProjectUpgradeInitiateResponse>({
      operationId: 'v1-upgrade-postgres-version',
      method: 'POST',
      route: '/v1/projects/{ref}/upgrade',
      params: { ref },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/projects/{ref}/upgrade/status */
  async getPostgresUpgradeStatus(ref: string, options: CallOptions<{ tracking_id?: QueryValue }> = {}): Promise<T.DatabaseUpgradeStatusResponse> {
    const response = await this.caller.call<T.DatabaseUpgradeStatusResponse>({
      operationId: 'v1-get-postgres-upgrade-status',
      method: 'GET',
      route: '/v1/projects/{ref}/upgrade/status',
      params: { ref },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** GET /v1/oauth/authorize */
  async authorizeUser(options: CallOptions<{ client_id?: QueryValue; response_type?: QueryValue; redirect_uri?: QueryValue; scope?: QueryValue; state?: QueryValue; response_mode?: QueryValue; code_challenge?: QueryValue; code_challenge_method?: QueryValue; organization_slug?: QueryValue; resource?: QueryValue }> = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-authorize-user',
      method: 'GET',
      route: '/v1/oauth/authorize',
      params: {  },
      bodyKind: 'none',
      idempotent: true,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/oauth/token */
  async exchangeOauthToken(body: T.OAuthTokenBody, options: CallOptions = {}): Promise<T.OAuthTokenResponse> {
    const response = await this.caller.call<T.OAuthTokenResponse>({
      operationId: 'v1-exchange-oauth-token',
      method: 'POST',
      route: '/v1/oauth/token',
      params: {  },
      bodyKind: 'form',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }

  /** POST /v1/oauth/revoke */
  async revokeToken(body: T.OAuthRevokeTokenBody, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const response = await this.caller.call<Record<string, unknown>>({
      operationId: 'v1-revoke-token',
      method: 'POST',
      route: '/v1/oauth/revoke',
      params: {  },
      bodyKind: 'json',
      body,
      idempotent: false,
      ...options,
    });
    return response.body;
  }
}

/** Every operation: method, route template, operationId, method name and whether it may be retried inline. */
export const OPERATIONS = [
  {
    "method": "GET",
    "route": "/v1/projects",
    "operationId": "v1-list-all-projects",
    "name": "listAllProjects",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects",
    "operationId": "v1-create-a-project",
    "name": "createAProject",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}",
    "operationId": "v1-get-project",
    "name": "getProject",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}",
    "operationId": "v1-delete-a-project",
    "name": "deleteAProject",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/pause",
    "operationId": "v1-pause-a-project",
    "name": "pauseAProject",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/restore",
    "operationId": "v1-list-available-restore-versions",
    "name": "listAvailableRestoreVersions",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/restore",
    "operationId": "v1-restore-a-project",
    "name": "restoreAProject",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/restore/cancel",
    "operationId": "v1-cancel-a-project-restoration",
    "name": "cancelAProjectRestoration",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/health",
    "operationId": "v1-get-services-health",
    "name": "getServicesHealth",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/types/typescript",
    "operationId": "v1-generate-typescript-types",
    "name": "generateTypescriptTypes",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/database/query",
    "operationId": "v1-run-a-query",
    "name": "runAQuery",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/database/webhooks/enable",
    "operationId": "v1-enable-database-webhook",
    "name": "enableDatabaseWebhook",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/organizations",
    "operationId": "v1-create-an-organization",
    "name": "createAnOrganization",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/organizations",
    "operationId": "v1-list-all-organizations",
    "name": "listAllOrganizations",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/organizations/{slug}",
    "operationId": "v1-get-an-organization",
    "name": "getAnOrganization",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/organizations/{slug}/members",
    "operationId": "v1-list-organization-members",
    "name": "listOrganizationMembers",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/auth",
    "operationId": "v1-get-auth-service-config",
    "name": "getAuthServiceConfig",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/projects/{ref}/config/auth",
    "operationId": "v1-update-auth-service-config",
    "name": "updateAuthServiceConfig",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/config/auth/sso/providers",
    "operationId": "v1-create-a-sso-provider",
    "name": "createASsoProvider",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/auth/sso/providers",
    "operationId": "v1-list-all-sso-provider",
    "name": "listAllSsoProvider",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/auth/sso/providers/{provider_id}",
    "operationId": "v1-get-a-sso-provider",
    "name": "getASsoProvider",
    "idempotent": true
  },
  {
    "method": "PUT",
    "route": "/v1/projects/{ref}/config/auth/sso/providers/{provider_id}",
    "operationId": "v1-update-a-sso-provider",
    "name": "updateASsoProvider",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/config/auth/sso/providers/{provider_id}",
    "operationId": "v1-delete-a-sso-provider",
    "name": "deleteASsoProvider",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/database/postgres",
    "operationId": "v1-get-postgres-config",
    "name": "getPostgresConfig",
    "idempotent": true
  },
  {
    "method": "PUT",
    "route": "/v1/projects/{ref}/config/database/postgres",
    "operationId": "v1-update-postgres-config",
    "name": "updatePostgresConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/database/bouncer",
    "operationId": "v1-get-project-bouncer-config",
    "name": "getProjectBouncerConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/database/pooler",
    "operationId": "v1-get-pooler-config",
    "name": "getPoolerConfig",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/projects/{ref}/config/database/pooler",
    "operationId": "v1-update-pooler-config",
    "name": "updatePoolerConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/readonly",
    "operationId": "v1-get-readonly-mode-status",
    "name": "getReadonlyModeStatus",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/readonly/temporary-disable",
    "operationId": "v1-disable-readonly-mode-temporarily",
    "name": "disableReadonlyModeTemporarily",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/ssl-enforcement",
    "operationId": "v1-get-ssl-enforcement-config",
    "name": "getSslEnforcementConfig",
    "idempotent": true
  },
  {
    "method": "PUT",
    "route": "/v1/projects/{ref}/ssl-enforcement",
    "operationId": "v1-update-ssl-enforcement-config",
    "name": "updateSslEnforcementConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/restapi",
    "operationId": "v1-get-restapi-service-config",
    "name": "getRestapiServiceConfig",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/projects/{ref}/restapi",
    "operationId": "v1-update-restapi-service-config",
    "name": "updateRestapiServiceConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/cryptoext",
    "operationId": "v1-get-cryptoext-config",
    "name": "getCryptoextConfig",
    "idempotent": true
  },
  {
    "method": "PUT",
    "route": "/v1/projects/{ref}/cryptoext",
    "operationId": "v1-update-cryptoext-config",
    "name": "updateCryptoextConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/database/backups",
    "operationId": "v1-list-all-backups",
    "name": "listAllBackups",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/database/backups/restore-pitr",
    "operationId": "v1-restore-pitr-backup",
    "name": "restorePitrBackup",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/read-replicas/setup",
    "operationId": "v1-setup-a-read-replica",
    "name": "setupAReadReplica",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/read-replicas/remove",
    "operationId": "v1-remove-a-read-replica",
    "name": "removeAReadReplica",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/snippets",
    "operationId": "v1-list-all-snippets",
    "name": "listAllSnippets",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/snippets/{id}",
    "operationId": "v1-get-a-snippet",
    "name": "getASnippet",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/custom-hostname",
    "operationId": "v1-get-hostname-config",
    "name": "getHostnameConfig",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/custom-hostname/initialize",
    "operationId": "v1-update-hostname-config",
    "name": "updateHostnameConfig",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/custom-hostname/reverify",
    "operationId": "v1-verify-dns-config",
    "name": "verifyDnsConfig",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/custom-hostname/activate",
    "operationId": "v1-activate-custom-hostname",
    "name": "activateCustomHostname",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/vanity-subdomain",
    "operationId": "v1-get-vanity-subdomain-config",
    "name": "getVanitySubdomainConfig",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/vanity-subdomain",
    "operationId": "v1-deactivate-vanity-subdomain-config",
    "name": "deactivateVanitySubdomainConfig",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/vanity-subdomain/check-availability",
    "operationId": "v1-check-vanity-subdomain-availability",
    "name": "checkVanitySubdomainAvailability",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/vanity-subdomain/activate",
    "operationId": "v1-activate-vanity-subdomain-config",
    "name": "activateVanitySubdomainConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/functions",
    "operationId": "v1-list-all-functions",
    "name": "listAllFunctions",
    "idempotent": true
  },
  {
    "method": "PUT",
    "route": "/v1/projects/{ref}/functions",
    "operationId": "v1-bulk-update-functions",
    "name": "bulkUpdateFunctions",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/functions",
    "operationId": "v1-create-a-function",
    "name": "createAFunction",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/functions/deploy",
    "operationId": "v1-deploy-a-function",
    "name": "deployAFunction",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/functions/{function_slug}",
    "operationId": "v1-get-a-function",
    "name": "getAFunction",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/projects/{ref}/functions/{function_slug}",
    "operationId": "v1-update-a-function",
    "name": "updateAFunction",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/functions/{function_slug}",
    "operationId": "v1-delete-a-function",
    "name": "deleteAFunction",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/functions/{function_slug}/body",
    "operationId": "v1-get-a-function-body",
    "name": "getAFunctionBody",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/secrets",
    "operationId": "v1-list-all-secrets",
    "name": "listAllSecrets",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/secrets",
    "operationId": "v1-bulk-create-secrets",
    "name": "bulkCreateSecrets",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/secrets",
    "operationId": "v1-bulk-delete-secrets",
    "name": "bulkDeleteSecrets",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/api-keys",
    "operationId": "v1-get-project-api-keys",
    "name": "getProjectApiKeys",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/config/storage",
    "operationId": "v1-get-storage-config",
    "name": "getStorageConfig",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/projects/{ref}/config/storage",
    "operationId": "v1-update-storage-config",
    "name": "updateStorageConfig",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/storage/buckets",
    "operationId": "v1-list-all-buckets",
    "name": "listAllBuckets",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/branches",
    "operationId": "v1-create-a-branch",
    "name": "createABranch",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/branches",
    "operationId": "v1-list-all-branches",
    "name": "listAllBranches",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/branches",
    "operationId": "v1-disable-preview-branching",
    "name": "disablePreviewBranching",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/branches/{branch_id}",
    "operationId": "v1-get-a-branch-config",
    "name": "getABranchConfig",
    "idempotent": true
  },
  {
    "method": "PATCH",
    "route": "/v1/branches/{branch_id}",
    "operationId": "v1-update-a-branch-config",
    "name": "updateABranchConfig",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/branches/{branch_id}",
    "operationId": "v1-delete-a-branch",
    "name": "deleteABranch",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/branches/{branch_id}/push",
    "operationId": "v1-push-a-branch",
    "name": "pushABranch",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/branches/{branch_id}/reset",
    "operationId": "v1-reset-a-branch",
    "name": "resetABranch",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/network-restrictions",
    "operationId": "v1-get-network-restrictions",
    "name": "getNetworkRestrictions",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/network-restrictions/apply",
    "operationId": "v1-update-network-restrictions",
    "name": "updateNetworkRestrictions",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/network-bans/retrieve",
    "operationId": "v1-list-all-network-bans",
    "name": "listAllNetworkBans",
    "idempotent": true
  },
  {
    "method": "DELETE",
    "route": "/v1/projects/{ref}/network-bans",
    "operationId": "v1-delete-network-bans",
    "name": "deleteNetworkBans",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/upgrade/eligibility",
    "operationId": "v1-get-postgres-upgrade-eligibility",
    "name": "getPostgresUpgradeEligibility",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/projects/{ref}/upgrade",
    "operationId": "v1-upgrade-postgres-version",
    "name": "upgradePostgresVersion",
    "idempotent": false
  },
  {
    "method": "GET",
    "route": "/v1/projects/{ref}/upgrade/status",
    "operationId": "v1-get-postgres-upgrade-status",
    "name": "getPostgresUpgradeStatus",
    "idempotent": true
  },
  {
    "method": "GET",
    "route": "/v1/oauth/authorize",
    "operationId": "v1-authorize-user",
    "name": "authorizeUser",
    "idempotent": true
  },
  {
    "method": "POST",
    "route": "/v1/oauth/token",
    "operationId": "v1-exchange-oauth-token",
    "name": "exchangeOauthToken",
    "idempotent": false
  },
  {
    "method": "POST",
    "route": "/v1/oauth/revoke",
    "operationId": "v1-revoke-token",
    "name": "revokeToken",
    "idempotent": false
  }
] as const;
