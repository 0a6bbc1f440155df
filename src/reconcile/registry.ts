// The one table of per-project kinds. The engine runs, for every existing or to-be-created
// project, each module whose `manages()` is true, in the order of this list (which is also
// the apply order within a project: configuration sections first, then sub-resources).
//
// To register a module: add ONE import line in the block below and ONE line in the array,
// keeping your lines together (several engineers edit this file; never reorder others' lines).
//   - configuration sections (engineer D2): src/reconcile/kinds/config/<section>.ts
//   - secrets, functions, SSO providers, branches, observed (engineer E): src/reconcile/kinds/<name>.ts
import type { KindModule } from './types.js';

// --- imports: configuration sections (D2) ---
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
// --- imports: sub-resources (E) ---
import { secretsKind } from './kinds/secrets.js';
import { functionsKind } from './kinds/functions.js';
import { ssoProvidersKind } from './kinds/sso-providers.js';
import { branchesKind } from './kinds/branches.js';

export const KIND_MODULES: readonly KindModule[] = [
  // --- configuration sections (D2), in apply order ---
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
  // --- sub-resources (E), in apply order ---
  // Secrets before functions: a deployed function may read its secrets as soon as it starts.
  secretsKind,
  functionsKind,
  ssoProvidersKind,
  branchesKind,
];
