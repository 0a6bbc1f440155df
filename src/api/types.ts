// Generated from schemas/api/openapi.json: request and response shapes with the spec's names.
// Enumerations are open sets (the service may add members), hence `(string & {})`.
/* eslint-disable */

export type BranchDetailResponse = {
  ref: string;
  postgres_version: string;
  postgres_engine: string;
  release_channel: string;
  status: "INACTIVE" | "ACTIVE_HEALTHY" | "ACTIVE_UNHEALTHY" | "COMING_UP" | "UNKNOWN" | "GOING_DOWN" | "INIT_FAILED" | "REMOVED" | "RESTORING" | "UPGRADING" | "PAUSING" | "RESTORE_FAILED" | "RESTARTING" | "PAUSE_FAILED" | "RESIZING" | (string & {});
  db_host: string;
  db_port: number;
  db_user?: string;
  db_pass?: string;
  jwt_secret?: string;
};

export type UpdateBranchBody = {
  branch_name?: string;
  git_branch?: string;
  reset_on_push?: boolean;
  persistent?: boolean;
  status?: "CREATING_PROJECT" | "RUNNING_MIGRATIONS" | "MIGRATIONS_PASSED" | "MIGRATIONS_FAILED" | "FUNCTIONS_DEPLOYED" | "FUNCTIONS_FAILED" | (string & {});
  request_review?: boolean;
  notify_url?: string;
};

export type BranchResponse = {
  id: string;
  name: string;
  project_ref: string;
  parent_project_ref: string;
  is_default: boolean;
  git_branch?: string;
  pr_number?: number;
  latest_check_run_id?: number;
  persistent: boolean;
  status: "CREATING_PROJECT" | "RUNNING_MIGRATIONS" | "MIGRATIONS_PASSED" | "MIGRATIONS_FAILED" | "FUNCTIONS_DEPLOYED" | "FUNCTIONS_FAILED" | (string & {});
  created_at: string;
  updated_at: string;
  review_requested_at?: string;
  with_data: boolean;
  notify_url?: string;
  deletion_scheduled_at?: string;
  preview_project_status?: "INACTIVE" | "ACTIVE_HEALTHY" | "ACTIVE_UNHEALTHY" | "COMING_UP" | "UNKNOWN" | "GOING_DOWN" | "INIT_FAILED" | "REMOVED" | "RESTORING" | "UPGRADING" | "PAUSING" | "RESTORE_FAILED" | "RESTARTING" | "PAUSE_FAILED" | "RESIZING" | (string & {});
};

export type BranchDeleteResponse = {
  message: "ok" | (string & {});
};

export type BranchActionBody = {
  migration_version?: string;
};

export type BranchUpdateResponse = {
  workflow_run_id: string;
  message: "ok" | (string & {});
};

export type V1ProjectWithDatabaseResponse = {
  id: string;
  ref: string;
  organization_id: string;
  organization_slug: string;
  name: string;
  region: string;
  created_at: string;
  status: "INACTIVE" | "ACTIVE_HEALTHY" | "ACTIVE_UNHEALTHY" | "COMING_UP" | "UNKNOWN" | "GOING_DOWN" | "INIT_FAILED" | "REMOVED" | "RESTORING" | "UPGRADING" | "PAUSING" | "RESTORE_FAILED" | "RESTARTING" | "PAUSE_FAILED" | "RESIZING" | (string & {});
  database: {
    host: string;
    version: string;
    postgres_engine: string;
    release_channel: string;
  };
};

export type V1CreateProjectBody = {
  db_pass: string;
  name: string;
  organization_id: string;
  plan?: "free" | "pro" | (string & {});
  region: "us-east-1" | "us-east-2" | "us-west-1" | "us-west-2" | "ap-east-1" | "ap-southeast-1" | "ap-northeast-1" | "ap-northeast-2" | "ap-southeast-2" | "eu-west-1" | "eu-west-2" | "eu-west-3" | "eu-north-1" | "eu-central-1" | "eu-central-2" | "ca-central-1" | "ap-south-1" | "sa-east-1" | (string & {});
  kps_enabled?: boolean;
  desired_instance_size?: "nano" | "micro" | "small" | "medium" | "large" | "xlarge" | "2xlarge" | "4xlarge" | "8xlarge" | "12xlarge" | "16xlarge" | "24xlarge" | "24xlarge_optimized_memory" | "24xlarge_optimized_cpu" | "24xlarge_high_memory" | "48xlarge" | "48xlarge_optimized_memory" | "48xlarge_optimized_cpu" | "48xlarge_high_memory" | (string & {});
  template_url?: string;
};

export type V1ProjectResponse = {
  id: string;
  ref: string;
  organization_id: string;
  organization_slug: string;
  name: string;
  region: string;
  created_at: string;
  status: "INACTIVE" | "ACTIVE_HEALTHY" | "ACTIVE_UNHEALTHY" | "COMING_UP" | "UNKNOWN" | "GOING_DOWN" | "INIT_FAILED" | "REMOVED" | "RESTORING" | "UPGRADING" | "PAUSING" | "RESTORE_FAILED" | "RESTARTING" | "PAUSE_FAILED" | "RESIZING" | (string & {});
};

export type OrganizationResponseV1 = {
  id: string;
  slug: string;
  name: string;
};

export type CreateOrganizationV1 = {
  name: string;
};

export type OAuthTokenBody = {
  grant_type?: "authorization_code" | "refresh_token" | (string & {});
  client_id?: string;
  client_secret?: string;
  code?: string;
  code_verifier?: string;
  redirect_uri?: string;
  refresh_token?: string;
  resource?: string;
  scope?: string;
};

export type OAuthTokenResponse = {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: "Bearer" | (string & {});
};

export type OAuthRevokeTokenBody = {
  client_id: string;
  client_secret: string;
  refresh_token: string;
};

export type SnippetList = {
  data: Array<{
    id: string;
    inserted_at: string;
    updated_at: string;
    type: "sql" | (string & {});
    visibility: "user" | "project" | "org" | "public" | (string & {});
    name: string;
    description: string | null;
    project: {
      id: number;
      name: string;
    };
    owner: {
      id: number;
      username: string;
    };
    updated_by: {
      id: number;
      username: string;
    };
    favorite: boolean;
  }>;
  cursor?: string;
};

export type SnippetResponse = {
  id: string;
  inserted_at: string;
  updated_at: string;
  type: "sql" | (string & {});
  visibility: "user" | "project" | "org" | "public" | (string & {});
  name: string;
  description: string | null;
  project: {
    id: number;
    name: string;
  };
  owner: {
    id: number;
    username: string;
  };
  updated_by: {
    id: number;
    username: string;
  };
  favorite: boolean;
  content: {
    favorite?: boolean;
    schema_version: string;
    sql: string;
  };
};

export type ApiKeyResponse = {
  api_key?: string | null;
  id?: string | null;
  type?: "legacy" | "publishable" | "secret" | (string & {});
  prefix?: string | null;
  name: string;
  description?: string | null;
  hash?: string | null;
  secret_jwt_template?: Record<string, Record<string, unknown>> | null;
  inserted_at?: string | null;
  updated_at?: string | null;
};

export type CreateBranchBody = {
  branch_name: string;
  git_branch?: string;
  is_default?: boolean;
  persistent?: boolean;
  region?: string;
  desired_instance_size?: "pico" | "nano" | "micro" | "small" | "medium" | "large" | "xlarge" | "2xlarge" | "4xlarge" | "8xlarge" | "12xlarge" | "16xlarge" | "24xlarge" | "24xlarge_optimized_memory" | "24xlarge_optimized_cpu" | "24xlarge_high_memory" | "48xlarge" | "48xlarge_optimized_memory" | "48xlarge_optimized_cpu" | "48xlarge_high_memory" | (string & {});
  release_channel?: "internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {});
  postgres_engine?: "15" | "17" | (string & {});
  secrets?: Record<string, string>;
  with_data?: boolean;
  notify_url?: string;
};

export type UpdateCustomHostnameResponse = {
  status: "1_not_started" | "2_initiated" | "3_challenge_verified" | "4_origin_setup_completed" | "5_services_reconfigured" | (string & {});
  custom_hostname: string;
  data: {
    success: boolean;
    errors: Array<Record<string, unknown>>;
    messages: Array<Record<string, unknown>>;
    result: {
      id: string;
      hostname: string;
      ssl: {
        status: string;
        validation_records: Array<{
          txt_name: string;
          txt_value: string;
        }>;
        validation_errors?: Array<{
          message: string;
        }>;
      };
      ownership_verification: {
        type: string;
        name: string;
        value: string;
      };
      custom_origin_server: string;
      verification_errors?: Array<string>;
      status: string;
    };
  };
};

export type UpdateCustomHostnameBody = {
  custom_hostname: string;
};

export type NetworkBanResponse = {
  banned_ipv4_addresses: Array<string>;
};

export type RemoveNetworkBanRequest = {
  ipv4_addresses: Array<string>;
  requester_ip?: boolean;
  identifier?: string;
};

export type NetworkRestrictionsResponse = {
  entitlement: "disallowed" | "allowed" | (string & {});
  config: {
    dbAllowedCidrs?: Array<string>;
    dbAllowedCidrsV6?: Array<string>;
  };
  old_config?: {
    dbAllowedCidrs?: Array<string>;
    dbAllowedCidrsV6?: Array<string>;
  };
  status: "stored" | "applied" | (string & {});
  updated_at?: string;
  applied_at?: string;
};

export type NetworkRestrictionsRequest = {
  dbAllowedCidrs?: Array<string>;
  dbAllowedCidrsV6?: Array<string>;
};

export type CryptoextConfigResponse = {
  root_key: string;
};

export type UpdateCryptoextConfigBody = {
  root_key: string;
};

export type RestapiConfigWithJWTSecretResponse = {
  db_schema: string;
  max_rows: number;
  db_extra_search_path: string;
  db_pool: number | null;
  jwt_secret?: string;
};

export type V1UpdateRestapiConfigBody = {
  db_extra_search_path?: string;
  db_schema?: string;
  max_rows?: number;
  db_pool?: number;
};

export type V1RestapiConfigResponse = {
  db_schema: string;
  max_rows: number;
  db_extra_search_path: string;
  db_pool: number | null;
};

export type V1ProjectRefResponse = {
  id: number;
  ref: string;
  name: string;
};

export type SecretResponse = {
  name: string;
  value: string;
  updated_at?: string;
};

export type CreateSecretBody = Array<{
  name: string;
  value: string;
}>;

export type DeleteSecretsBody = Array<string>;

export type SslEnforcementResponse = {
  currentConfig: {
    database: boolean;
  };
  appliedSuccessfully: boolean;
};

export type SslEnforcementRequest = {
  requestedConfig: {
    database: boolean;
  };
};

export type TypescriptResponse = {
  types: string;
};

export type VanitySubdomainConfigResponse = {
  status: "not-used" | "custom-domain-used" | "active" | (string & {});
  custom_domain?: string;
};

export type VanitySubdomainBody = {
  vanity_subdomain: string;
};

export type SubdomainAvailabilityResponse = {
  available: boolean;
};

export type ActivateVanitySubdomainResponse = {
  custom_domain: string;
};

export type UpgradeDatabaseBody = {
  target_version: string;
  release_channel?: "internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {});
};

export type ProjectUpgradeInitiateResponse = {
  tracking_id: string;
};

export type ProjectUpgradeEligibilityResponse = {
  eligible: boolean;
  current_app_version: string;
  current_app_version_release_channel: "internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {});
  latest_app_version: string;
  target_upgrade_versions: Array<{
    postgres_version: "13" | "14" | "15" | "17" | (string & {});
    release_channel: "internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {});
    app_version: string;
  }>;
  duration_estimate_hours: number;
  legacy_auth_custom_roles: Array<string>;
  objects_to_be_dropped: Array<string>;
  unsupported_extensions: Array<string>;
  user_defined_objects_in_internal_schemas: Array<string>;
  validation_errors: Array<{
    type: "objects_depending_on_pg_cron" | (string & {});
    dependents: Array<string>;
  } | {
    type: "indexes_referencing_ll_to_earth" | (string & {});
    schema_name: string;
    table_name: string;
    index_name: string;
  } | {
    type: "function_using_obsolete_lang" | (string & {});
    schema_name: string;
    function_name: string;
    lang_name: string;
  } | {
    type: "unsupported_extension" | (string & {});
    extension_name: string;
  } | {
    type: "unsupported_fdw_handler" | (string & {});
    fdw_name: string;
    fdw_handler_name: string;
  } | {
    type: "unlogged_table_with_persistent_sequence" | (string & {});
    schema_name: string;
    table_name: string;
    sequence_name: string;
  } | {
    type: "user_defined_objects_in_internal_schemas" | (string & {});
    obj_type: "table" | "function" | (string & {});
    schema_name: string;
    obj_name: string;
  } | {
    type: "active_replication_slot" | (string & {});
    slot_name: string;
  } | {
    type: "x86_architecture" | (string & {});
  } | {
    type: "project_hibernating" | (string & {});
  }>;
  warnings: Array<{
    type: string;
  }>;
};

export type DatabaseUpgradeStatusResponse = {
  databaseUpgradeStatus: {
    initiated_at: string;
    latest_status_at: string;
    target_version: number;
    error?: "1_upgraded_instance_launch_failed" | "2_volume_detachchment_from_upgraded_instance_failed" | "3_volume_attachment_to_original_instance_failed" | "4_data_upgrade_initiation_failed" | "5_data_upgrade_completion_failed" | "6_volume_detachchment_from_original_instance_failed" | "7_volume_attachment_to_upgraded_instance_failed" | "8_upgrade_completion_failed" | "9_post_physical_backup_failed" | (string & {});
    progress?: "0_requested" | "1_started" | "2_launched_upgraded_instance" | "3_detached_volume_from_upgraded_instance" | "4_attached_volume_to_original_instance" | "5_initiated_data_upgrade" | "6_completed_data_upgrade" | "7_detached_volume_from_original_instance" | "8_attached_volume_to_upgraded_instance" | "9_completed_upgrade" | "10_completed_post_physical_backup" | (string & {});
    status: number;
  } | null;
};

export type ReadOnlyStatusResponse = {
  enabled: boolean;
  override_enabled: boolean;
  override_active_until: string;
};

export type SetUpReadReplicaBody = {
  read_replica_region: "us-east-1" | "us-east-2" | "us-west-1" | "us-west-2" | "ap-east-1" | "ap-southeast-1" | "ap-northeast-1" | "ap-northeast-2" | "ap-southeast-2" | "eu-west-1" | "eu-west-2" | "eu-west-3" | "eu-north-1" | "eu-central-1" | "eu-central-2" | "ca-central-1" | "ap-south-1" | "sa-east-1" | (string & {});
};

export type RemoveReadReplicaBody = {
  database_identifier: string;
};

export type V1ServiceHealthResponse = {
  name: "auth" | "db" | "db_postgres_user" | "pooler" | "realtime" | "rest" | "storage" | "bouncer" | (string & {});
  healthy: boolean;
  status: "COMING_UP" | "ACTIVE_HEALTHY" | "UNHEALTHY" | (string & {});
  info?: {
    name: string;
    version: string;
    description: string;
  } | {
    healthy: boolean;
    db_connected: boolean;
    replication_connected: boolean;
    connected_cluster: number;
  } | {
    db_schema: string;
  };
  error?: string;
};

export type AuthConfigResponse = {
  api_max_request_duration: number | null;
  db_max_pool_size: number | null;
  disable_signup: boolean | null;
  external_anonymous_users_enabled: boolean | null;
  external_idp01_additional_client_ids: string | null;
  external_idp01_client_id: string | null;
  external_idp01_email_optional: boolean | null;
  external_idp01_enabled: boolean | null;
  external_idp01_secret: string | null;
  external_idp02_client_id: string | null;
  external_idp02_email_optional: boolean | null;
  external_idp02_enabled: boolean | null;
  external_idp02_secret: string | null;
  external_idp02_url: string | null;
  external_idp03_client_id: string | null;
  external_idp03_email_optional: boolean | null;
  external_idp03_enabled: boolean | null;
  external_idp03_secret: string | null;
  external_idp04_client_id: string | null;
  external_idp04_email_optional: boolean | null;
  external_idp04_enabled: boolean | null;
  external_idp04_secret: string | null;
  external_email_enabled: boolean | null;
  external_idp05_client_id: string | null;
  external_idp05_email_optional: boolean | null;
  external_idp05_enabled: boolean | null;
  external_idp05_secret: string | null;
  external_idp06_client_id: string | null;
  external_idp06_email_optional: boolean | null;
  external_idp06_enabled: boolean | null;
  external_idp06_secret: string | null;
  external_idp07_client_id: string | null;
  external_idp07_email_optional: boolean | null;
  external_idp07_enabled: boolean | null;
  external_idp07_secret: string | null;
  external_idp08_client_id: string | null;
  external_idp08_email_optional: boolean | null;
  external_idp08_enabled: boolean | null;
  external_idp08_secret: string | null;
  external_idp08_url: string | null;
  external_idp09_additional_client_ids: string | null;
  external_idp09_client_id: string | null;
  external_idp09_email_optional: boolean | null;
  external_idp09_enabled: boolean | null;
  external_idp09_secret: string | null;
  external_idp09_skip_nonce_check: boolean | null;
  external_idp10_client_id: string | null;
  external_idp10_email_optional: boolean | null;
  external_idp10_enabled: boolean | null;
  external_idp10_secret: string | null;
  external_idp11_client_id: string | null;
  external_idp11_email_optional: boolean | null;
  external_idp11_enabled: boolean | null;
  external_idp11_secret: string | null;
  external_idp11_url: string | null;
  external_idp12_client_id: string | null;
  external_idp12_email_optional: boolean | null;
  external_idp12_enabled: boolean | null;
  external_idp12_secret: string | null;
  external_idp15_client_id: string | null;
  external_idp15_email_optional: boolean | null;
  external_idp15_enabled: boolean | null;
  external_idp15_secret: string | null;
  external_idp13_client_id: string | null;
  external_idp13_email_optional: boolean | null;
  external_idp13_enabled: boolean | null;
  external_idp13_secret: string | null;
  external_phone_enabled: boolean | null;
  external_idp14_client_id: string | null;
  external_idp14_email_optional: boolean | null;
  external_idp14_enabled: boolean | null;
  external_idp14_secret: string | null;
  external_idp16_client_id: string | null;
  external_idp16_email_optional: boolean | null;
  external_idp16_enabled: boolean | null;
  external_idp16_secret: string | null;
  external_idp17_client_id: string | null;
  external_idp17_email_optional: boolean | null;
  external_idp17_enabled: boolean | null;
  external_idp17_secret: string | null;
  external_idp18_client_id: string | null;
  external_idp18_email_optional: boolean | null;
  external_idp18_enabled: boolean | null;
  external_idp18_secret: string | null;
  external_idp19_client_id: string | null;
  external_idp19_enabled: boolean | null;
  external_idp19_secret: string | null;
  external_idp19_url: string | null;
  external_idp20_client_id: string | null;
  external_idp20_email_optional: boolean | null;
  external_idp20_enabled: boolean | null;
  external_idp20_secret: string | null;
  hook_custom_access_token_enabled: boolean | null;
  hook_custom_access_token_uri: string | null;
  hook_custom_access_token_secrets: string | null;
  hook_mfa_verification_attempt_enabled: boolean | null;
  hook_mfa_verification_attempt_uri: string | null;
  hook_mfa_verification_attempt_secrets: string | null;
  hook_password_verification_attempt_enabled: boolean | null;
  hook_password_verification_attempt_uri: string | null;
  hook_password_verification_attempt_secrets: string | null;
  hook_send_sms_enabled: boolean | null;
  hook_send_sms_uri: string | null;
  hook_send_sms_secrets: string | null;
  hook_send_email_enabled: boolean | null;
  hook_send_email_uri: string | null;
  hook_send_email_secrets: string | null;
  jwt_exp: number | null;
  mailer_allow_unverified_email_sign_ins: boolean | null;
  mailer_autoconfirm: boolean | null;
  mailer_otp_exp: number;
  mailer_otp_length: number | null;
  mailer_secure_email_change_enabled: boolean | null;
  mailer_subjects_confirmation: string | null;
  mailer_subjects_email_change: string | null;
  mailer_subjects_invite: string | null;
  mailer_subjects_magic_link: string | null;
  mailer_subjects_reauthentication: string | null;
  mailer_subjects_recovery: string | null;
  mailer_templates_confirmation_content: string | null;
  mailer_templates_email_change_content: string | null;
  mailer_templates_invite_content: string | null;
  mailer_templates_magic_link_content: string | null;
  mailer_templates_reauthentication_content: string | null;
  mailer_templates_recovery_content: string | null;
  mfa_max_enrolled_factors: number | null;
  mfa_totp_enroll_enabled: boolean | null;
  mfa_totp_verify_enabled: boolean | null;
  mfa_phone_enroll_enabled: boolean | null;
  mfa_phone_verify_enabled: boolean | null;
  mfa_web_authn_enroll_enabled: boolean | null;
  mfa_web_authn_verify_enabled: boolean | null;
  mfa_phone_otp_length: number;
  mfa_phone_template: string | null;
  mfa_phone_max_frequency: number | null;
  password_hibp_enabled: boolean | null;
  password_min_length: number | null;
  password_required_characters: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789" | "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789" | "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789:!@#$%^&*()_+-=[]{};'\\\\:\"|<>?,./`~" | "" | (string & {});
  rate_limit_anonymous_users: number | null;
  rate_limit_email_sent: number | null;
  rate_limit_sms_sent: number | null;
  rate_limit_token_refresh: number | null;
  rate_limit_verify: number | null;
  rate_limit_otp: number | null;
  refresh_token_rotation_enabled: boolean | null;
  saml_enabled: boolean | null;
  saml_external_url: string | null;
  saml_allow_encrypted_assertions: boolean | null;
  security_captcha_enabled: boolean | null;
  security_captcha_provider: string | null;
  security_captcha_secret: string | null;
  security_manual_linking_enabled: boolean | null;
  security_refresh_token_reuse_interval: number | null;
  security_update_password_require_reauthentication: boolean | null;
  sessions_inactivity_timeout: number | null;
  sessions_single_per_user: boolean | null;
  sessions_tags: string | null;
  sessions_timebox: number | null;
  site_url: string | null;
  sms_autoconfirm: boolean | null;
  sms_max_frequency: number | null;
  sms_smsA_access_key: string | null;
  sms_smsA_originator: string | null;
  sms_otp_exp: number | null;
  sms_otp_length: number;
  sms_provider: "smsA" | "smsB" | "smsC" | "smsD" | "smsE" | (string & {});
  sms_template: string | null;
  sms_test_otp: string | null;
  sms_test_otp_valid_until: string | null;
  sms_smsB_api_key: string | null;
  sms_smsB_sender: string | null;
  sms_smsC_account_sid: string | null;
  sms_smsC_auth_token: string | null;
  sms_smsC_content_sid: string | null;
  sms_smsC_message_service_sid: string | null;
  sms_smsD_account_sid: string | null;
  sms_smsD_auth_token: string | null;
  sms_smsD_message_service_sid: string | null;
  sms_smsE_api_key: string | null;
  sms_smsE_api_secret: string | null;
  sms_smsE_from: string | null;
  smtp_admin_email: string | null;
  smtp_host: string | null;
  smtp_max_frequency: number | null;
  smtp_pass: string | null;
  smtp_port: string | null;
  smtp_sender_name: string | null;
  smtp_user: string | null;
  uri_allow_list: string | null;
};

export type UpdateAuthConfigBody = {
  site_url?: string | null;
  disable_signup?: boolean | null;
  jwt_exp?: number | null;
  smtp_admin_email?: string | null;
  smtp_host?: string | null;
  smtp_port?: string | null;
  smtp_user?: string | null;
  smtp_pass?: string | null;
  smtp_max_frequency?: number | null;
  smtp_sender_name?: string | null;
  mailer_allow_unverified_email_sign_ins?: boolean | null;
  mailer_autoconfirm?: boolean | null;
  mailer_subjects_invite?: string | null;
  mailer_subjects_confirmation?: string | null;
  mailer_subjects_recovery?: string | null;
  mailer_subjects_email_change?: string | null;
  mailer_subjects_magic_link?: string | null;
  mailer_subjects_reauthentication?: string | null;
  mailer_templates_invite_content?: string | null;
  mailer_templates_confirmation_content?: string | null;
  mailer_templates_recovery_content?: string | null;
  mailer_templates_email_change_content?: string | null;
  mailer_templates_magic_link_content?: string | null;
  mailer_templates_reauthentication_content?: string | null;
  mfa_max_enrolled_factors?: number | null;
  uri_allow_list?: string | null;
  external_anonymous_users_enabled?: boolean | null;
  external_email_enabled?: boolean | null;
  external_phone_enabled?: boolean | null;
  saml_enabled?: boolean | null;
  saml_external_url?: string | null;
  security_captcha_enabled?: boolean | null;
  security_captcha_provider?: string | null;
  security_captcha_secret?: string | null;
  sessions_timebox?: number | null;
  sessions_inactivity_timeout?: number | null;
  sessions_single_per_user?: boolean | null;
  sessions_tags?: string | null;
  rate_limit_anonymous_users?: number | null;
  rate_limit_email_sent?: number | null;
  rate_limit_sms_sent?: number | null;
  rate_limit_verify?: number | null;
  rate_limit_token_refresh?: number | null;
  rate_limit_otp?: number | null;
  mailer_secure_email_change_enabled?: boolean | null;
  refresh_token_rotation_enabled?: boolean | null;
  password_hibp_enabled?: boolean | null;
  password_min_length?: number | null;
  password_required_characters?: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789" | "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789" | "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789:!@#$%^&*()_+-=[]{};'\\\\:\"|<>?,./`~" | "" | (string & {});
  security_manual_linking_enabled?: boolean | null;
  security_update_password_require_reauthentication?: boolean | null;
  security_refresh_token_reuse_interval?: number | null;
  mailer_otp_exp?: number;
  mailer_otp_length?: number | null;
  sms_autoconfirm?: boolean | null;
  sms_max_frequency?: number | null;
  sms_otp_exp?: number | null;
  sms_otp_length?: number;
  sms_provider?: "smsA" | "smsB" | "smsC" | "smsD" | "smsE" | (string & {});
  sms_smsA_access_key?: string | null;
  sms_smsA_originator?: string | null;
  sms_test_otp?: string | null;
  sms_test_otp_valid_until?: string | null;
  sms_smsB_api_key?: string | null;
  sms_smsB_sender?: string | null;
  sms_smsC_account_sid?: string | null;
  sms_smsC_auth_token?: string | null;
  sms_smsC_content_sid?: string | null;
  sms_smsC_message_service_sid?: string | null;
  sms_smsD_account_sid?: string | null;
  sms_smsD_auth_token?: string | null;
  sms_smsD_message_service_sid?: string | null;
  sms_smsE_api_key?: string | null;
  sms_smsE_api_secret?: string | null;
  sms_smsE_from?: string | null;
  sms_template?: string | null;
  hook_mfa_verification_attempt_enabled?: boolean | null;
  hook_mfa_verification_attempt_uri?: string | null;
  hook_mfa_verification_attempt_secrets?: string | null;
  hook_password_verification_attempt_enabled?: boolean | null;
  hook_password_verification_attempt_uri?: string | null;
  hook_password_verification_attempt_secrets?: string | null;
  hook_custom_access_token_enabled?: boolean | null;
  hook_custom_access_token_uri?: string | null;
  hook_custom_access_token_secrets?: string | null;
  hook_send_sms_enabled?: boolean | null;
  hook_send_sms_uri?: string | null;
  hook_send_sms_secrets?: string | null;
  hook_send_email_enabled?: boolean | null;
  hook_send_email_uri?: string | null;
  hook_send_email_secrets?: string | null;
  external_idp01_enabled?: boolean | null;
  external_idp01_client_id?: string | null;
  external_idp01_email_optional?: boolean | null;
  external_idp01_secret?: string | null;
  external_idp01_additional_client_ids?: string | null;
  external_idp02_enabled?: boolean | null;
  external_idp02_client_id?: string | null;
  external_idp02_email_optional?: boolean | null;
  external_idp02_secret?: string | null;
  external_idp02_url?: string | null;
  external_idp03_enabled?: boolean | null;
  external_idp03_client_id?: string | null;
  external_idp03_email_optional?: boolean | null;
  external_idp03_secret?: string | null;
  external_idp04_enabled?: boolean | null;
  external_idp04_client_id?: string | null;
  external_idp04_email_optional?: boolean | null;
  external_idp04_secret?: string | null;
  external_idp05_enabled?: boolean | null;
  external_idp05_client_id?: string | null;
  external_idp05_email_optional?: boolean | null;
  external_idp05_secret?: string | null;
  external_idp06_enabled?: boolean | null;
  external_idp06_client_id?: string | null;
  external_idp06_email_optional?: boolean | null;
  external_idp06_secret?: string | null;
  external_idp07_enabled?: boolean | null;
  external_idp07_client_id?: string | null;
  external_idp07_email_optional?: boolean | null;
  external_idp07_secret?: string | null;
  external_idp08_enabled?: boolean | null;
  external_idp08_client_id?: string | null;
  external_idp08_email_optional?: boolean | null;
  external_idp08_secret?: string | null;
  external_idp08_url?: string | null;
  external_idp09_enabled?: boolean | null;
  external_idp09_client_id?: string | null;
  external_idp09_email_optional?: boolean | null;
  external_idp09_secret?: string | null;
  external_idp09_additional_client_ids?: string | null;
  external_idp09_skip_nonce_check?: boolean | null;
  external_idp10_enabled?: boolean | null;
  external_idp10_client_id?: string | null;
  external_idp10_email_optional?: boolean | null;
  external_idp10_secret?: string | null;
  external_idp11_enabled?: boolean | null;
  external_idp11_client_id?: string | null;
  external_idp11_email_optional?: boolean | null;
  external_idp11_secret?: string | null;
  external_idp11_url?: string | null;
  external_idp12_enabled?: boolean | null;
  external_idp12_client_id?: string | null;
  external_idp12_email_optional?: boolean | null;
  external_idp12_secret?: string | null;
  external_idp15_enabled?: boolean | null;
  external_idp15_client_id?: string | null;
  external_idp15_email_optional?: boolean | null;
  external_idp15_secret?: string | null;
  external_idp13_enabled?: boolean | null;
  external_idp13_client_id?: string | null;
  external_idp13_email_optional?: boolean | null;
  external_idp13_secret?: string | null;
  external_idp14_enabled?: boolean | null;
  external_idp14_client_id?: string | null;
  external_idp14_email_optional?: boolean | null;
  external_idp14_secret?: string | null;
  external_idp16_enabled?: boolean | null;
  external_idp16_client_id?: string | null;
  external_idp16_email_optional?: boolean | null;
  external_idp16_secret?: string | null;
  external_idp17_enabled?: boolean | null;
  external_idp17_client_id?: string | null;
  external_idp17_email_optional?: boolean | null;
  external_idp17_secret?: string | null;
  external_idp18_enabled?: boolean | null;
  external_idp18_client_id?: string | null;
  external_idp18_email_optional?: boolean | null;
  external_idp18_secret?: string | null;
  external_idp19_enabled?: boolean | null;
  external_idp19_client_id?: string | null;
  external_idp19_secret?: string | null;
  external_idp19_url?: string | null;
  external_idp20_enabled?: boolean | null;
  external_idp20_client_id?: string | null;
  external_idp20_email_optional?: boolean | null;
  external_idp20_secret?: string | null;
  db_max_pool_size?: number | null;
  api_max_request_duration?: number | null;
  mfa_totp_enroll_enabled?: boolean | null;
  mfa_totp_verify_enabled?: boolean | null;
  mfa_web_authn_enroll_enabled?: boolean | null;
  mfa_web_authn_verify_enabled?: boolean | null;
  mfa_phone_enroll_enabled?: boolean | null;
  mfa_phone_verify_enabled?: boolean | null;
  mfa_phone_max_frequency?: number | null;
  mfa_phone_otp_length?: number | null;
  mfa_phone_template?: string | null;
};

export type GetProjectAvailableRestoreVersionsResponse = {
  available_versions: Array<{
    version: string;
    release_channel: "internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {});
    postgres_engine: "13" | "14" | "15" | "17" | (string & {});
  }>;
};

export type V1RunQueryBody = {
  query: string;
  parameters?: Array<Record<string, unknown>>;
  read_only?: boolean;
};

export type FunctionResponse = {
  id: string;
  slug: string;
  name: string;
  status: "ACTIVE" | "REMOVED" | "THROTTLED" | (string & {});
  version: number;
  created_at: number;
  updated_at: number;
  verify_jwt?: boolean;
  import_map?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  ezbr_sha256?: string;
};

export type V1CreateFunctionBody = {
  slug: string;
  name: string;
  body: string;
  verify_jwt?: boolean;
};

export type BulkUpdateFunctionBody = Array<{
  id: string;
  slug: string;
  name: string;
  status: "ACTIVE" | "REMOVED" | "THROTTLED" | (string & {});
  version: number;
  created_at?: number;
  verify_jwt?: boolean;
  import_map?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  ezbr_sha256?: string;
}>;

export type BulkUpdateFunctionResponse = {
  functions: Array<{
    id: string;
    slug: string;
    name: string;
    status: "ACTIVE" | "REMOVED" | "THROTTLED" | (string & {});
    version: number;
    created_at: number;
    updated_at: number;
    verify_jwt?: boolean;
    import_map?: boolean;
    entrypoint_path?: string;
    import_map_path?: string;
    ezbr_sha256?: string;
  }>;
};

export type FunctionDeployBody = {
  file?: Array<string>;
  metadata: {
    entrypoint_path: string;
    import_map_path?: string;
    static_patterns?: Array<string>;
    verify_jwt?: boolean;
    name?: string;
  };
};

export type DeployFunctionResponse = {
  id: string;
  slug: string;
  name: string;
  status: "ACTIVE" | "REMOVED" | "THROTTLED" | (string & {});
  version: number;
  created_at?: number;
  updated_at?: number;
  verify_jwt?: boolean;
  import_map?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  ezbr_sha256?: string;
};

export type FunctionSlugResponse = {
  id: string;
  slug: string;
  name: string;
  status: "ACTIVE" | "REMOVED" | "THROTTLED" | (string & {});
  version: number;
  created_at: number;
  updated_at: number;
  verify_jwt?: boolean;
  import_map?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  ezbr_sha256?: string;
};

export type StreamableFile = Record<string, unknown>;

export type V1UpdateFunctionBody = {
  name?: string;
  body?: string;
  verify_jwt?: boolean;
};

export type V1StorageBucketResponse = {
  id: string;
  name: string;
  owner: string;
  created_at: string;
  updated_at: string;
  public: boolean;
};

export type StorageConfigResponse = {
  fileSizeLimit: number;
  features: {
    imageTransformation: {
      enabled: boolean;
    };
    s3Protocol: {
      enabled: boolean;
    };
    icebergCatalog: {
      enabled: boolean;
      maxNamespaces: number;
      maxTables: number;
      maxCatalogs: number;
    };
    vectorBuckets: {
      enabled: boolean;
      maxBuckets: number;
      maxIndexes: number;
    };
  };
  capabilities: {
    list_v2: boolean;
    iceberg_catalog: boolean;
  };
  external: {
    upstreamTarget: "main" | "canary" | (string & {});
  };
  migrationVersion: string;
  databasePoolMode: string;
};

export type UpdateStorageConfigBody = {
  fileSizeLimit?: number;
  features?: {
    imageTransformation?: {
      enabled: boolean;
    };
    s3Protocol?: {
      enabled: boolean;
    };
    icebergCatalog?: {
      enabled: boolean;
      maxNamespaces: number;
      maxTables: number;
      maxCatalogs: number;
    };
    vectorBuckets?: {
      enabled: boolean;
      maxBuckets: number;
      maxIndexes: number;
    };
  };
  external?: {
    upstreamTarget: "main" | "canary" | (string & {});
  };
};

export type V1BouncerConfigResponse = {
  default_pool_size?: number;
  ignore_startup_parameters?: string;
  max_client_conn?: number;
  pool_mode?: "transaction" | "session" | "statement" | (string & {});
  connection_string?: string;
  server_idle_timeout?: number;
  server_lifetime?: number;
  query_wait_timeout?: number;
  reserve_pool_size?: number;
};

export type PoolerConfigResponse = {
  identifier: string;
  database_type: "PRIMARY" | "READ_REPLICA" | (string & {});
  is_using_scram_auth: boolean;
  db_user: string;
  db_host: string;
  db_port: number;
  db_name: string;
  connection_string: string;
  connectionString: string;
  default_pool_size: number | null;
  max_client_conn: number | null;
  pool_mode: "transaction" | "session" | (string & {});
};

export type UpdatePoolerConfigBody = {
  default_pool_size?: number | null;
  pool_mode?: "transaction" | "session" | (string & {});
};

export type UpdatePoolerConfigResponse = {
  default_pool_size: number | null;
  pool_mode: string;
};

export type PostgresConfigResponse = {
  effective_cache_size?: string;
  logical_decoding_work_mem?: string;
  maintenance_work_mem?: string;
  track_activity_query_size?: string;
  max_connections?: number;
  max_locks_per_transaction?: number;
  max_parallel_maintenance_workers?: number;
  max_parallel_workers?: number;
  max_parallel_workers_per_gather?: number;
  max_replication_slots?: number;
  max_slot_wal_keep_size?: string;
  max_standby_archive_delay?: string;
  max_standby_streaming_delay?: string;
  max_wal_size?: string;
  max_wal_senders?: number;
  max_worker_processes?: number;
  session_replication_role?: "origin" | "replica" | "local" | (string & {});
  shared_buffers?: string;
  statement_timeout?: string;
  track_commit_timestamp?: boolean;
  wal_keep_size?: string;
  wal_sender_timeout?: string;
  work_mem?: string;
  checkpoint_timeout?: string;
  hot_standby_feedback?: boolean;
};

export type UpdatePostgresConfigBody = {
  effective_cache_size?: string;
  logical_decoding_work_mem?: string;
  maintenance_work_mem?: string;
  track_activity_query_size?: string;
  max_connections?: number;
  max_locks_per_transaction?: number;
  max_parallel_maintenance_workers?: number;
  max_parallel_workers?: number;
  max_parallel_workers_per_gather?: number;
  max_replication_slots?: number;
  max_slot_wal_keep_size?: string;
  max_standby_archive_delay?: string;
  max_standby_streaming_delay?: string;
  max_wal_size?: string;
  max_wal_senders?: number;
  max_worker_processes?: number;
  session_replication_role?: "origin" | "replica" | "local" | (string & {});
  shared_buffers?: string;
  statement_timeout?: string;
  track_commit_timestamp?: boolean;
  wal_keep_size?: string;
  wal_sender_timeout?: string;
  work_mem?: string;
  checkpoint_timeout?: string;
  hot_standby_feedback?: boolean;
  restart_database?: boolean;
};

export type CreateProviderBody = {
  type: "saml" | (string & {});
  metadata_xml?: string;
  metadata_url?: string;
  domains?: Array<string>;
  attribute_mapping?: {
    keys: Record<string, {
      name?: string;
      names?: Array<string>;
      default?: Record<string, unknown> | number | string | boolean;
      array?: boolean;
    }>;
  };
  name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
};

export type CreateProviderResponse = {
  id: string;
  saml?: {
    id: string;
    entity_id: string;
    metadata_url?: string;
    metadata_xml?: string;
    attribute_mapping?: {
      keys: Record<string, {
        name?: string;
        names?: Array<string>;
        default?: Record<string, unknown> | number | string | boolean;
        array?: boolean;
      }>;
    };
    name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
  };
  domains?: Array<{
    id: string;
    domain?: string;
    created_at?: string;
    updated_at?: string;
  }>;
  created_at?: string;
  updated_at?: string;
};

export type ListProvidersResponse = {
  items: Array<{
    id: string;
    saml?: {
      id: string;
      entity_id: string;
      metadata_url?: string;
      metadata_xml?: string;
      attribute_mapping?: {
        keys: Record<string, {
          name?: string;
          names?: Array<string>;
          default?: Record<string, unknown> | number | string | boolean;
          array?: boolean;
        }>;
      };
      name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
    };
    domains?: Array<{
      id: string;
      domain?: string;
      created_at?: string;
      updated_at?: string;
    }>;
    created_at?: string;
    updated_at?: string;
  }>;
};

export type GetProviderResponse = {
  id: string;
  saml?: {
    id: string;
    entity_id: string;
    metadata_url?: string;
    metadata_xml?: string;
    attribute_mapping?: {
      keys: Record<string, {
        name?: string;
        names?: Array<string>;
        default?: Record<string, unknown> | number | string | boolean;
        array?: boolean;
      }>;
    };
    name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
  };
  domains?: Array<{
    id: string;
    domain?: string;
    created_at?: string;
    updated_at?: string;
  }>;
  created_at?: string;
  updated_at?: string;
};

export type UpdateProviderBody = {
  metadata_xml?: string;
  metadata_url?: string;
  domains?: Array<string>;
  attribute_mapping?: {
    keys: Record<string, {
      name?: string;
      names?: Array<string>;
      default?: Record<string, unknown> | number | string | boolean;
      array?: boolean;
    }>;
  };
  name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
};

export type UpdateProviderResponse = {
  id: string;
  saml?: {
    id: string;
    entity_id: string;
    metadata_url?: string;
    metadata_xml?: string;
    attribute_mapping?: {
      keys: Record<string, {
        name?: string;
        names?: Array<string>;
        default?: Record<string, unknown> | number | string | boolean;
        array?: boolean;
      }>;
    };
    name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
  };
  domains?: Array<{
    id: string;
    domain?: string;
    created_at?: string;
    updated_at?: string;
  }>;
  created_at?: string;
  updated_at?: string;
};

export type DeleteProviderResponse = {
  id: string;
  saml?: {
    id: string;
    entity_id: string;
    metadata_url?: string;
    metadata_xml?: string;
    attribute_mapping?: {
      keys: Record<string, {
        name?: string;
        names?: Array<string>;
        default?: Record<string, unknown> | number | string | boolean;
        array?: boolean;
      }>;
    };
    name_id_format?: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" | "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" | "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" | "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" | (string & {});
  };
  domains?: Array<{
    id: string;
    domain?: string;
    created_at?: string;
    updated_at?: string;
  }>;
  created_at?: string;
  updated_at?: string;
};

export type V1BackupsResponse = {
  region: string;
  walg_enabled: boolean;
  pitr_enabled: boolean;
  backups: Array<{
    id: number;
    is_physical_backup: boolean;
    status: "COMPLETED" | "FAILED" | "PENDING" | "REMOVED" | "ARCHIVED" | "CANCELLED" | (string & {});
    inserted_at: string;
  }>;
  physical_backup_data: {
    earliest_physical_backup_date_unix?: number;
    latest_physical_backup_date_unix?: number;
  };
};

export type V1RestorePitrBody = {
  recovery_time_target_unix: number;
};

export type V1OrganizationMemberResponse = {
  user_id: string;
  user_name: string;
  email?: string;
  role_name: string;
  mfa_enabled: boolean;
};

export type V1OrganizationSlugResponse = {
  id: string;
  name: string;
  plan?: "free" | "pro" | "team" | "enterprise" | "platform" | (string & {});
  opt_in_tags: Array<"AI_SQL_GENERATOR_OPT_IN" | "AI_DATA_GENERATOR_OPT_IN" | "AI_LOG_GENERATOR_OPT_IN" | (string & {})>;
  allowed_release_channels: Array<"internal" | "alpha" | "beta" | "ga" | "withdrawn" | "preview" | (string & {})>;
};

