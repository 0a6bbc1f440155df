// The emulator's one consistent state: every handler reads and writes these records, and
// lifecycle transitions are mutations scheduled at an emulator-clock time, applied (in time
// order) before each request is served. No timers: a ManualClock or a scaled clock drives it.

export const SERVICES = ['auth', 'db', 'db_postgres_user', 'pooler', 'realtime', 'rest', 'storage', 'bouncer'] as const;
export type ServiceName = (typeof SERVICES)[number];

export type ProjectStatus =
  | 'INACTIVE' | 'ACTIVE_HEALTHY' | 'ACTIVE_UNHEALTHY' | 'COMING_UP' | 'UNKNOWN' | 'GOING_DOWN' | 'INIT_FAILED'
  | 'REMOVED' | 'RESTORING' | 'UPGRADING' | 'PAUSING' | 'RESTORE_FAILED' | 'RESTARTING' | 'PAUSE_FAILED' | 'RESIZING';

export interface UserRecord {
  id: string;
  name: string;
  email: string;
  mfaEnabled: boolean;
}

interface TokenRecord {
  token: string;
  userId: string;
  kind: 'personal' | 'oauth';
  /** Wall-clock expiry (OAuth access tokens). */
  expiresAt?: number;
  /** The OAuth grant this token belongs to (revoking the grant ends it). */
  grantId?: string;
}

export type MemberRole = 'Owner' | 'Administrator' | 'Developer' | 'Read-only';
export const MEMBER_ROLES: readonly MemberRole[] = ['Owner', 'Administrator', 'Developer', 'Read-only'];

export interface OrganizationRecord {
  slug: string;
  name: string;
  plan: 'free' | 'pro' | 'team' | 'enterprise' | 'platform';
  optInTags: string[];
  allowedReleaseChannels: string[];
  members: Array<{ userId: string; role: MemberRole }>;
}

export interface FunctionRecord {
  id: string;
  slug: string;
  name: string;
  status: 'ACTIVE' | 'REMOVED' | 'THROTTLED';
  version: number;
  createdAt: number;
  updatedAt: number;
  verifyJwt: boolean;
  entrypointPath?: string;
  importMapPath?: string;
  staticPatterns: string[];
  /** Relative path -> content. */
  files: Map<string, Buffer>;
  ezbrSha256?: string;
}

interface SecretRecord {
  value: string;
  updatedAt: string;
}

export interface SsoProviderRecord {
  id: string;
  samlId: string;
  entityId: string;
  metadataUrl?: string;
  metadataXml?: string;
  attributeMapping?: { keys: Record<string, unknown> };
  nameIdFormat?: string;
  domains: Array<{ id: string; domain: string; created_at: string; updated_at: string }>;
  createdAt: string;
  updatedAt: string;
}

export type BranchStatus = 'CREATING_PROJECT' | 'RUNNING_MIGRATIONS' | 'MIGRATIONS_PASSED' | 'MIGRATIONS_FAILED' | 'FUNCTIONS_DEPLOYED' | 'FUNCTIONS_FAILED';

export interface BranchRecord {
  id: string;
  name: string;
  projectRef: string;
  parentRef: string;
  isDefault: boolean;
  gitBranch?: string;
  prNumber?: number;
  persistent: boolean;
  status: BranchStatus;
  previewStatus: ProjectStatus;
  createdAt: string;
  updatedAt: string;
  withData: boolean;
  notifyUrl?: string;
  dbPass: string;
  jwtSecret: string;
  postgresEngine: string;
  postgresVersion: string;
  releaseChannel: string;
  /** Bumped by every action so a stale scheduled step does nothing. */
  generation: number;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  type: 'legacy' | 'publishable' | 'secret';
  apiKey: string;
  prefix?: string;
  description?: string;
  hash?: string;
  secretJwtTemplate?: Record<string, unknown>;
  insertedAt: string;
  updatedAt: string;
}

export interface PoolerEntry {
  identifier: string;
  databaseType: 'PRIMARY' | 'READ_REPLICA';
  region: string;
  dbHost: string;
  defaultPoolSize: number | null;
  maxClientConn: number | null;
  poolMode: 'transaction' | 'session';
}

export interface CustomHostnameRecord {
  status: '1_not_started' | '2_initiated' | '3_challenge_verified' | '4_origin_setup_completed' | '5_services_reconfigured';
  hostname: string;
  id: string;
  txtName: string;
  txtValue: string;
  ownershipValue: string;
  /** Emulator time at which the DNS records count as published (reverify succeeds after it). */
  verifiableAt: number;
  generation: number;
}

export interface UpgradeRecord {
  trackingId: string;
  targetVersion: string;
  targetEngine: string;
  releaseChannel: string;
  initiatedAt: string;
  latestStatusAt: string;
  progress: string;
  error?: string;
  /** 1 = in progress, 2 = completed, 0 = failed. */
  status: number;
}

interface BackupRecord {
  id: number;
  isPhysical: boolean;
  status: 'COMPLETED' | 'FAILED' | 'PENDING' | 'REMOVED' | 'ARCHIVED' | 'CANCELLED';
  insertedAt: string;
}

interface BucketRecord {
  id: string;
  name: string;
  owner: string;
  public: boolean;
  createdAt: string;
  updatedAt: string;
}

interface NetworkRestrictionsRecord {
  entitlement: 'disallowed' | 'allowed';
  config: { dbAllowedCidrs: string[]; dbAllowedCidrsV6: string[] };
  oldConfig?: { dbAllowedCidrs: string[]; dbAllowedCidrsV6: string[] };
  status: 'stored' | 'applied';
  updatedAt?: string;
  appliedAt?: string;
}

export interface ProjectRecord {
  numericId: number;
  ref: string;
  name: string;
  orgSlug: string;
  region: string;
  createdAt: number;
  status: ProjectStatus;
  instanceSize: string;
  database: { version: string; postgresEngine: string; releaseChannel: string };
  /** Emulator time at which each service reports healthy (while the project is active). */
  serviceReadyAt: Record<ServiceName, number>;
  /** Bumped by every lifecycle operation so a stale scheduled transition does nothing. */
  generation: number;
  authConfig: Record<string, unknown>;
  postgresConfig: Record<string, unknown>;
  bouncer: { default_pool_size: number; ignore_startup_parameters: string; max_client_conn: number; pool_mode: 'transaction' | 'session' | 'statement' };
  pooler: PoolerEntry[];
  restapi: { db_schema: string; max_rows: number; db_extra_search_path: string; db_pool: number | null; jwt_secret: string };
  storage: Record<string, unknown>;
  buckets: BucketRecord[];
  networkRestrictions: NetworkRestrictionsRecord;
  networkBans: string[];
  sslEnforcement: boolean;
  cryptoextRootKey: string;
  readonly: { enabled: boolean; overrideUntil: number | null };
  customHostname: CustomHostnameRecord;
  vanity: { subdomain: string | null };
  upgrades: UpgradeRecord[];
  backups: BackupRecord[];
  pitrEnabled: boolean;
  walgEnabled: boolean;
  secrets: Map<string, SecretRecord>;
  functions: Map<string, FunctionRecord>;
  ssoProviders: Map<string, SsoProviderRecord>;
  apiKeys: ApiKeyRecord[];
  webhooksEnabled: boolean;
  branchingEnabled: boolean;
  dbPassword: string;
}

export interface SnippetRecord {
  id: string;
  name: string;
  description: string | null;
  visibility: 'user' | 'project' | 'org' | 'public';
  projectRef: string;
  ownerId: string;
  sql: string;
  favorite: boolean;
  insertedAt: string;
  updatedAt: string;
}

export interface OAuthAppRecord {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUris: string[];
}

interface OAuthCodeRecord {
  code: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  challenge?: string;
  challengeMethod?: 'plain' | 'S256';
  expiresAt: number;
  scope?: string;
}

export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  userId: string;
  /** The one refresh token that currently works for this grant. */
  refreshToken: string;
  revoked: boolean;
}

interface ScheduledMutation {
  at: number;
  seq: number;
  apply: () => void;
}

export class EmulatorState {
  users = new Map<string, UserRecord>();
  tokens = new Map<string, TokenRecord>();
  organizations = new Map<string, OrganizationRecord>();
  projects = new Map<string, ProjectRecord>();
  branches = new Map<string, BranchRecord>();
  snippets = new Map<string, SnippetRecord>();
  oauthApps = new Map<string, OAuthAppRecord>();
  oauthCodes = new Map<string, OAuthCodeRecord>();
  oauthGrants = new Map<string, OAuthGrantRecord>();
  /** Refresh token -> grant id, for every refresh token ever issued (old ones are refused). */
  refreshTokens = new Map<string, string>();
  defaultUserId = '';
  #nextNumericId = 1000;
  #scheduled: ScheduledMutation[] = [];
  #seq = 0;

  nextNumericId(): number {
    return this.#nextNumericId++;
  }

  /** Runs `apply` once the emulator clock reaches `at` (on the next settle). */
  schedule(at: number, apply: () => void): void {
    this.#scheduled.push({ at, seq: this.#seq++, apply });
  }

  /** Applies every scheduled mutation due by `now`, in time order. */
  settle(now: number): void {
    for (;;) {
      let next: ScheduledMutation | undefined;
      for (const item of this.#scheduled) {
        if (item.at <= now && (!next || item.at < next.at || (item.at === next.at && item.seq < next.seq))) next = item;
      }
      if (!next) return;
      this.#scheduled = this.#scheduled.filter((item) => item !== next);
      next.apply();
    }
  }

  get pendingTransitions(): number {
    return this.#scheduled.length;
  }

  /** Time of the next scheduled transition, if any. */
  nextTransitionAt(): number | undefined {
    return this.#scheduled.reduce<number | undefined>((min, item) => (min === undefined || item.at < min ? item.at : min), undefined);
  }

  userOrganizations(userId: string): OrganizationRecord[] {
    return [...this.organizations.values()].filter((org) => org.members.some((m) => m.userId === userId));
  }

  memberRole(org: OrganizationRecord, userId: string): MemberRole | undefined {
    return org.members.find((m) => m.userId === userId)?.role;
  }
}
