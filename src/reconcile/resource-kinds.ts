// The kinds of managed resources: the kind of a plan entry, a status and the metrics. A leaf
// list, so the contract (types.ts) does not depend on the modules that implement it; the
// registry's modules declare exactly these kinds (test/reconcile/resource-kinds.test.ts).
export const RESOURCE_KINDS = [
  // fleet-level: Organization; Project and its lifecycle (pause and restore)
  'Organization',
  'Project',
  'ProjectLifecycle',
  // configuration sections
  'ProjectAuth',
  'ProjectPostgres',
  'ProjectPooler',
  'ProjectRestapi',
  'ProjectStorage',
  'ProjectNetworkRestrictions',
  'ProjectSslEnforcement',
  'ProjectCryptoext',
  'ProjectReadReplicas',
  'ProjectVanitySubdomain',
  'ProjectCustomHostname',
  'ProjectPostgresVersion',
  // sub-resources
  'Secret',
  'Migration',
  'Function',
  'SsoProvider',
  'Branch',
] as const;

export type ResourceKind = (typeof RESOURCE_KINDS)[number];
