// The manifest contract: every part of the program reads manifests through these names.
// The JSON Schemas in schemas/ are the source of truth for fields, their documentation
// and validation; these types mirror them (test/manifests checks the two agree).
import type * as Api from '../api/types.js';

export const API_VERSION = 'reconciler/v1';

export type ManifestKind = 'Organization' | 'Project' | 'Secrets' | 'Function' | 'SsoProvider' | 'Branch';
export const MANIFEST_KINDS: readonly ManifestKind[] = ['Organization', 'Project', 'Secrets', 'Function', 'SsoProvider', 'Branch'];

/** A secret-bearing value is never a literal in git: it names where the value comes from. */
export type SecretRef = { valueFrom: { env: string } } | { valueFrom: { file: string } };

/** Per-resource policy (every kind). */
export interface Policy {
  /** `full` (default): reconcile. `observe`: report drift, never write. */
  management?: 'full' | 'observe';
  /** `orphan` (default): leave the live resource when its manifest goes away. `delete`: delete it then. */
  deletion?: 'orphan' | 'delete';
  /** Skip this resource entirely (no reads, no writes) while true. */
  suspend?: boolean;
}

export interface Metadata {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Where a document came from, for located errors and for paths relative to its file. */
export interface SourceLocation {
  /** Path relative to the manifests root. */
  file: string;
  /** 1-based. */
  line: number;
  column: number;
  /** Absolute directory of the file: relative paths in the document resolve against it. */
  dir: string;
}

export interface ManifestDocument<K extends ManifestKind = ManifestKind, S = unknown> {
  apiVersion: string;
  kind: K;
  metadata: Metadata;
  spec: S;
  source: SourceLocation;
}

// ---- Organization
export interface OrganizationSpec {
  /** Adopt an existing organization by its slug (id). Otherwise it is found by name, or created. */
  slug?: string;
  policy?: Policy;
}

// ---- Project
/** Auth fields that carry secrets: in manifests they must be SecretRefs. */
export type SecretAuthField =
  | 'smtp_pass'
  | 'security_captcha_secret'
  | `sms_sms${'A'}_access_key`
  | `sms_sms${'B' | 'E'}_api_key`
  | `sms_sms${'C' | 'D'}_auth_token`
  | 'sms_smsE_api_secret'
  | `hook_${string}_secrets`
  | `external_${string}_secret`;

export type AuthSpec = {
  [K in keyof Api.UpdateAuthConfigBody]?: K extends SecretAuthField ? SecretRef : Api.UpdateAuthConfigBody[K];
};

export type PostgresSpec = Omit<Api.UpdatePostgresConfigBody, 'restart_database'> & {
  /** Restart the database when this section changes (sent as `restart_database`). Default false. */
  restart_database?: boolean;
};

export interface PoolerSpec {
  default_pool_size?: number;
}

export type RestapiSpec = Api.V1UpdateRestapiConfigBody;
export type StorageSpec = Api.UpdateStorageConfigBody;

export interface NetworkRestrictionsSpec {
  dbAllowedCidrs?: string[];
  dbAllowedCidrsV6?: string[];
}

export interface SslEnforcementSpec {
  database: boolean;
}

export interface CustomHostnameSpec {
  custom_hostname: string;
  /** Activate once the hostname is verified (default true). */
  activate?: boolean;
}

export interface VanitySubdomainSpec {
  vanity_subdomain: string;
}

export interface CryptoextSpec {
  root_key: SecretRef;
  /**
   * Must equal `I understand encrypted data may become unreadable` for a change of an
   * existing root key to be applied: a change can make data encrypted under the old key
   * unreadable.
   */
  confirm_root_key_change?: string;
}

export interface ReadReplicaSpec {
  read_replica_region: string;
}

export interface ProjectSpec {
  /** Name of the Organization document (metadata.name) this project belongs to. */
  organization: string;
  /** The project's name in the API; default metadata.name. */
  name?: string;
  /** Adopt an existing project by its ref instead of creating one. */
  ref?: string;
  region: string;
  desired_instance_size?: string;
  /** Database password for creation; never readable back. */
  db_pass?: SecretRef;
  /** true: pause the project; false: restore it when paused. Unset: not managed. */
  paused?: boolean;
  /** Target Postgres major version: upgrade when the live version is older and eligible. */
  postgres_version?: string;
  auth?: AuthSpec;
  postgres?: PostgresSpec;
  pooler?: PoolerSpec;
  restapi?: RestapiSpec;
  storage?: StorageSpec;
  network_restrictions?: NetworkRestrictionsSpec;
  ssl_enforcement?: SslEnforcementSpec;
  custom_hostname?: CustomHostnameSpec;
  vanity_subdomain?: VanitySubdomainSpec;
  cryptoext?: CryptoextSpec;
  /** The complete set of read replicas, one item each. */
  read_replicas?: ReadReplicaSpec[];
  /** Delete live functions, SSO providers or branches that no manifest declares (default false each). */
  prune?: { functions?: boolean; ssoProviders?: boolean; branches?: boolean };
  /** true: disable preview branching for the project (deletes every branch). Only through this field. */
  branching_disabled?: boolean;
  policy?: Policy;
}

// ---- Secrets
export interface SecretsSpec {
  /** Project document name. */
  project: string;
  /** Secret name -> reference. */
  values: Record<string, SecretRef>;
  /** true: the set is complete; live secrets not listed are deleted. Default false. */
  prune?: boolean;
  policy?: Policy;
}

// ---- Function
export interface FunctionSpec {
  project: string;
  /** Function slug; default metadata.name. */
  slug?: string;
  /** Display name; default the slug. */
  name?: string;
  /** Source directory, relative to the manifest file. */
  source: string;
  /** Entrypoint, relative to `source`. */
  entrypoint: string;
  /** Import map, relative to `source`. */
  import_map?: string;
  /** Globs (relative to `source`) of extra files to upload. */
  static_patterns?: string[];
  verify_jwt?: boolean;
  policy?: Policy;
}

// ---- SsoProvider
export interface SsoProviderSpec {
  project: string;
  type: 'saml';
  metadata_url?: string;
  metadata_xml?: string;
  /** Domains; the provider is matched to the live one by these (ids are assigned by the service). */
  domains: string[];
  attribute_mapping?: Api.CreateProviderBody['attribute_mapping'];
  policy?: Policy;
}

// ---- Branch
export interface BranchSpec {
  project: string;
  /** Branch name; default metadata.name. */
  branch_name?: string;
  git_branch?: string;
  persistent?: boolean;
  region?: string;
  desired_instance_size?: string;
  policy?: Policy;
}

export type OrganizationDocument = ManifestDocument<'Organization', OrganizationSpec>;
export type ProjectDocument = ManifestDocument<'Project', ProjectSpec>;
export type SecretsDocument = ManifestDocument<'Secrets', SecretsSpec>;
export type FunctionDocument = ManifestDocument<'Function', FunctionSpec>;
export type SsoProviderDocument = ManifestDocument<'SsoProvider', SsoProviderSpec>;
export type BranchDocument = ManifestDocument<'Branch', BranchSpec>;
export type AnyDocument =
  | OrganizationDocument
  | ProjectDocument
  | SecretsDocument
  | FunctionDocument
  | SsoProviderDocument
  | BranchDocument;

/** A located problem in the manifests. */
export interface ManifestError {
  file: string;
  line: number;
  column: number;
  /** JSON-pointer-like field path, for example `/spec/auth/site_ur`. Empty for file-level errors. */
  path: string;
  message: string;
  /** For example "did you mean `site_url`?" */
  hint?: string;
}

export interface ManifestSet {
  /** Absolute path that was read (symlinks resolved once). */
  root: string;
  /** The commit, when the directory is a git checkout or a git-sync worktree. */
  revision?: string;
  documents: AnyDocument[];
  errors: ManifestError[];
}
