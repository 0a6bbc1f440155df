// The one table of managed kinds; `ResourceKind` is the union of the kinds declared here
// (`npm run generate:schemas` writes them to src/reconcile/resource-kinds.ts, in this order).
// What the layers around a pass know of a kind is the module's too (KindModule's facets: its
// load-time checks, files, metrics, status facts, plan markdown): they iterate KIND_MODULES,
// never name a kind (loading a checkout: src/reconcile/load-manifests.ts).
//   - FLEET_MODULES: Organization, then Project (src/reconcile/kinds/organization.ts and
//     project.ts), planned from the pass's one observation of the fleet, in this order.
//   - KIND_MODULES: the kinds within a project. The engine runs, for every existing or
//     to-be-created project, each module whose `manages()` is true, in the order of this list
//     (which is also the apply order within a project: configuration sections first, then
//     sub-resources).
//
// A module is registered with one import and one line in an array:
//   - configuration sections: src/reconcile/kinds/config/<section>.ts, in CONFIG_SECTIONS (the
//     Project schema, `servicesNeeded` and the export read that list too)
//   - secrets, functions, SSO providers, branches: src/reconcile/kinds/<name>.ts
import { organizationModule } from './kinds/organization.js';
import { projectModule } from './kinds/project.js';
import type { ManifestKind } from '../manifests/types.js';

// --- configuration sections ---
import { authConfig } from './kinds/config/auth.js';
import { postgresConfig } from './kinds/config/postgres.js';
import { poolerConfig } from './kinds/config/pooler.js';
import { restapiConfig } from './kinds/config/restapi.js';
import { storageConfig } from './kinds/config/storage.js';
import { networkRestrictionsConfig } from './kinds/config/network-restrictions.js';
import { sslEnforcementConfig } from './kinds/config/ssl-enforcement.js';
import { cryptoextConfig } from './kinds/config/cryptoext.js';
import { readReplicasConfig } from './kinds/config/read-replicas.js';
import { vanitySubdomainConfig } from './kinds/config/vanity-subdomain.js';
import { customHostnameConfig } from './kinds/config/custom-hostname.js';
import { postgresVersionConfig } from './kinds/config/postgres-version.js';
// --- sub-resources ---
import { secretsKind } from './kinds/secrets.js';
import { functionsKind } from './kinds/functions.js';
import { ssoProvidersKind } from './kinds/sso-providers.js';
import { branchesKind } from './kinds/branches.js';
import { migrationsKind } from './kinds/migrations.js';
// --- the Rollout document (orders the writes of the others) ---
import { rolloutDocument } from './rollout/schema.js';
// --- the ProjectSet document (expanded into ordinary documents while loading) ---
import { projectSetDocument } from '../manifests/project-set-schema.js';

/** The configuration sections, in apply order. */
export const CONFIG_SECTIONS = [
  authConfig,
  postgresConfig,
  poolerConfig,
  restapiConfig,
  storageConfig,
  networkRestrictionsConfig,
  sslEnforcementConfig,
  cryptoextConfig,
  readReplicasConfig,
  vanitySubdomainConfig,
  customHostnameConfig,
  postgresVersionConfig,
] as const;

/** The fleet-level kinds, in plan and apply order: a project is created in its organization. */
export const FLEET_MODULES = [organizationModule, projectModule] as const;

/** The sub-resource kinds of a project, in apply order. */
export const SUB_RESOURCES = [
  // Secrets before functions: a deployed function may read its secrets as soon as it starts.
  secretsKind,
  // Migrations after the configuration sections (the project is ready and configured) and
  // before functions, which depend on the schema.
  migrationsKind,
  functionsKind,
  ssoProvidersKind,
  branchesKind,
] as const;

export const KIND_MODULES = [...CONFIG_SECTIONS, ...SUB_RESOURCES] as const;

/** The manifest document kinds the modules are declared in, in the order of the field reference. */
export const DOCUMENT_KINDS: readonly ManifestKind[] = [
  ...FLEET_MODULES.map((module) => module.document),
  ...KIND_MODULES.flatMap((module) => (module.document ? [module.document.kind as ManifestKind] : [])),
  // Not a managed kind: it orders the writes of the others (src/reconcile/rollout/).
  rolloutDocument.kind as ManifestKind,
  // Not a managed kind: loading expands it into Project (and Secrets, Function, SsoProvider) documents.
  projectSetDocument.kind as ManifestKind,
];

/** The document kinds the per-project modules and the rollout declare, with their schemas (the schema generator's input). */
export const DOCUMENT_SCHEMAS = [...KIND_MODULES.flatMap((module) => (module.document ? [module.document] : [])), rolloutDocument, projectSetDocument];
