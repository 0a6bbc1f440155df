// The manifest contract: every part of the program reads manifests through these names.
// The JSON Schemas in schemas/ are the source of truth for fields, their documentation
// and validation; the spec types below are generated from them (schema-types.ts).

export const API_VERSION = 'reconciler/v1';

/** The document kinds: one per schema file, as `npm run generate:schemas` lists them (from the registry's modules). */
export type ManifestKind = (typeof SCHEMA_KINDS)[number];
export const MANIFEST_KINDS: readonly ManifestKind[] = SCHEMA_KINDS;

// The spec types are generated from the JSON Schemas (src/manifests/schema-types.ts, by
// src/tools/generate-schemas.ts): the names below are the contract, the shapes come from
// schemas/*.schema.json, so validation, editors and the code cannot disagree.
import type * as Schema from './schema-types.js';
import { SCHEMA_KINDS } from './schema-types.js';

/** A secret-bearing value is never a literal in git: it names where the value comes from. */
export type SecretRef = Schema.SecretRef;

/** Per-resource policy (every kind): management full|observe, deletion orphan|delete, suspend. */
export type Policy = Schema.Policy;

export type Metadata = Schema.Metadata;

/** Where a document came from, for located errors and for paths relative to its file. */
interface SourceLocation {
  /** Path relative to the manifests root. */
  file: string;
  /** 1-based. */
  line: number;
  column: number;
  /** Absolute directory of the file: relative paths in the document resolve against it. */
  dir: string;
  /** A document a ProjectSet made (then `file` and `line` are the set's template): the set and the element. */
  set?: GeneratedFrom;
}

/** The ProjectSet and the element a generated document was made for. */
export interface GeneratedFrom {
  /** metadata.name of the ProjectSet. */
  set: string;
  /** The element's key: the identity the project is pinned to in the inventory. */
  key: string;
  /** Where the element was written, as messages name it (`tenants/acme.yaml:1`, `element 2 of spec.generators[0].list (set.yaml:9)`). */
  element: string;
  /** The values files the element was read from (relative to the root), besides the set's own file. */
  files?: string[];
}

/** A ProjectSet of the checkout and the projects it made. */
export interface ProjectSetSummary {
  name: string;
  file: string;
  line: number;
  projects: Array<{ name: string; key: string; element: string }>;
}

interface ManifestDocument<K extends ManifestKind = ManifestKind, S = unknown> {
  apiVersion: string;
  kind: K;
  metadata: Metadata;
  spec: S;
  source: SourceLocation;
}

// ---- Organization
export type OrganizationSpec = Schema.OrganizationSpec;

// ---- Project
/** Auth configuration: the API's UpdateAuthConfigBody fields, secret-bearing ones as SecretRef. */
export type AuthSpec = Schema.AuthSpec;
/** Postgres parameters plus `restart_database` (restart when this section changes; default false). */
export type PostgresSpec = Schema.PostgresSpec;
export type PoolerSpec = Schema.PoolerSpec;
export type RestapiSpec = Schema.RestapiSpec;
export type StorageSpec = Schema.StorageSpec;
export type NetworkRestrictionsSpec = Schema.NetworkRestrictionsSpec;
export type SslEnforcementSpec = Schema.SslEnforcementSpec;
/** `activate` (default true): activate once the hostname is verified. */
export type CustomHostnameSpec = Schema.CustomHostnameSpec;
export type VanitySubdomainSpec = Schema.VanitySubdomainSpec;
/**
 * `confirm_root_key_change` must equal `I understand encrypted data may become unreadable`
 * (ROOT_KEY_CHANGE_CONFIRMATION) for a change of an existing root key to be applied.
 */
export type CryptoextSpec = Schema.CryptoextSpec;
export type ReadReplicaSpec = Schema.ReadReplicaSpec;
/**
 * organization (Organization metadata.name), name (default metadata.name), ref (adopt), region,
 * desired_instance_size, db_pass (for creation), paused (true: pause, false: restore, unset: not
 * managed), postgres_version (upgrade target), the configuration sections, read_replicas (the
 * complete set), prune (functions/ssoProviders/branches, default false each), branching_disabled
 * (the only way to disable branching), policy.
 */
export type ProjectSpec = Schema.ProjectSpec;

// ---- Secrets
/** project, values (name -> SecretRef), prune (true: the set is complete), policy. */
export type SecretsSpec = Schema.SecretsSpec;

// ---- Function
/** project, slug (default metadata.name), name, source (relative to the manifest file), entrypoint, import_map and static_patterns (relative to source), verify_jwt, policy. */
export type FunctionSpec = Schema.FunctionSpec;

// ---- SsoProvider
/** project, type `saml`, metadata_url or metadata_xml, domains (match the live provider), attribute_mapping, name_id_format, policy. */
export type SsoProviderSpec = Schema.SsoProviderSpec;

// ---- Branch
/** project, branch_name (default metadata.name), git_branch, persistent, region, desired_instance_size, policy. */
export type BranchSpec = Schema.BranchSpec;

// ---- Migrations
/** project or selector (labels, organization), path (a directory of `<version>_<name>.sql`), table (the history), outOfOrder, policy. */
export type MigrationsSpec = Schema.MigrationsSpec;

// ---- Rollout
/** waves (label selectors, optional share), soak, maintenance windows, approval rules. */
export type RolloutSpec = Schema.RolloutSpec;

// ---- ProjectSet (expanded while loading: never among a set's documents)
/** generators (list, values directory, matrix of two), maxProjects, template (metadata, spec, secrets, functions, ssoProviders). */
export type ProjectSetSpec = Schema.ProjectSetSpec;

export type OrganizationDocument = ManifestDocument<'Organization', OrganizationSpec>;
export type ProjectDocument = ManifestDocument<'Project', ProjectSpec>;
export type SecretsDocument = ManifestDocument<'Secrets', SecretsSpec>;
export type FunctionDocument = ManifestDocument<'Function', FunctionSpec>;
export type SsoProviderDocument = ManifestDocument<'SsoProvider', SsoProviderSpec>;
export type BranchDocument = ManifestDocument<'Branch', BranchSpec>;
export type MigrationsDocument = ManifestDocument<'Migrations', MigrationsSpec>;
export type RolloutDocument = ManifestDocument<'Rollout', RolloutSpec>;
export type AnyDocument =
  | OrganizationDocument
  | ProjectDocument
  | SecretsDocument
  | FunctionDocument
  | SsoProviderDocument
  | BranchDocument
  | MigrationsDocument
  | RolloutDocument;

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
  /** Default `error`. `warning` only where a command says so (validate: an unset environment variable). */
  severity?: 'error' | 'warning';
  /** For a secret reference problem: `env:NAME` or `file:PATH` (never a value). */
  reference?: string;
}

export interface ManifestSet {
  /** Absolute path that was read (symlinks resolved once). */
  root: string;
  /** The commit, when the directory is a git checkout or a git-sync worktree. */
  revision?: string;
  /** Documents that passed validation (a document with a schema error is left out). */
  documents: AnyDocument[];
  errors: ManifestError[];
  /** Manifest files read, relative to `root`. */
  files?: string[];
  /**
   * Every file the documents read (manifests, migration files, function sources), by path
   * relative to `root`, with its content's SHA-256, as the checkout's walker recorded them
   * (checkout-files.ts): the revision covers them all.
   */
  inputs?: ReadonlyMap<string, string>;
  /** The ProjectSets of the checkout (their documents are among `documents`, each with `source.set`). */
  sets?: ProjectSetSummary[];
  /** With a shard map and `--shard`: the shard the documents were narrowed to, and what the rest of the checkout declares. */
  shard?: ShardScope;
}

/**
 * What a shard's process knows of the whole checkout. Ownership is a property of the whole
 * checkout: a project whose document another shard now owns is handed over, never removed.
 */
export interface ShardScope {
  /** This process's shard. */
  name: string;
  /** The shard map as messages name it. */
  mapFile: string;
  /** The Project documents of the checkout that other shards own, each with its owner. */
  elsewhere: Array<{ document: ProjectDocument; shard: string }>;
  /** The one shard that creates each organization, by Organization manifest name. */
  organizationOwners: Record<string, string>;
}
