// The fleet-level contract: what a pass observes of the fleet (the matching of Organization and
// Project documents to live objects) and the interface of the modules that plan and apply from
// it (Organization, then Project: src/reconcile/kinds/organization.ts and project.ts). Types
// only; it imports no module of src/reconcile that implements them.
import type { ManagementApi } from '../api/endpoints.js';
import type { Priority } from '../api/request.js';
import type { OrganizationResponseV1, V1ProjectWithDatabaseResponse } from '../api/types.js';
import type { OrganizationDocument, ProjectDocument, ManifestKind, ShardScope } from '../manifests/types.js';
import type { Clock } from '../util/clock.js';
import type { IntentLog } from './intents.js';
import type { Inventory } from './inventory.js';
import type { ConfigSection, SectionExportContext } from './kinds/config/section.js';
import type { EffectivePolicy } from './policy.js';
import type { ResourceKind } from './resource-kinds.js';
import type { SecretResolver } from './secret-check.js';
import type { Logger, PlanEntry, StateStore } from './types.js';

export type LiveProject = V1ProjectWithDatabaseResponse;

export interface ProjectUnit {
  /** Manifest name. */
  name: string;
  document: ProjectDocument;
  /** Name in the API. */
  apiName: string;
  organization: string;
  policy: EffectivePolicy;
  live?: LiveProject;
  /** How the live project was found. */
  foundBy?: 'ref' | 'inventory' | 'intent' | 'name';
  /** The inventory record (manifest name) of the same live project under a name no document declares any more. */
  renamedFrom?: string;
  entry?: PlanEntry;
  lifecycle?: PlanEntry;
  /** Set once this pass created the project: its ref and the status the create answered. */
  created?: { ref: string; status: string };
}

export interface OrganizationUnit {
  /** Manifest name, also the organization's name in the API. */
  name: string;
  document: OrganizationDocument;
  policy: EffectivePolicy;
  /** Known id (slug): from the manifest, the inventory cache, the list, or the create answer. */
  id?: string;
  /** The id was confirmed by the project list or the organization list this pass. */
  confirmed: boolean;
  /** Set once planned. */
  entry?: PlanEntry;
  /** In a sharded fleet, the other shard that alone creates this organization (absent: this process may create it). */
  createdBy?: string;
  /** The shard map that names that owner, as messages show it. */
  shardMap?: string;
  /** How long this pass waited for the owner's creation (ms), once it gave up. */
  waitedMs?: number;
}

export interface FleetObservation {
  live: LiveProject[];
  /** Live projects by ref and by id. */
  liveByRef: Map<string, LiveProject>;
  organizations: OrganizationUnit[];
  projects: ProjectUnit[];
  /** Manifest names whose API name matches more than one live project in the organization (how many). */
  ambiguous: Map<string, number>;
  /** Manifest names that claim the same live project (or name) as another document, with the reason. */
  conflicts: Map<string, string>;
  /** Refs claimed by a current document: never deleted, whatever else happens. */
  claimedBy: Map<string, ProjectUnit>;
  /**
   * Entries for inventoried projects whose manifest is gone (delete, orphan note, or blocked),
   * filled when the Project module plans. `keep`: a current document still claims the
   * project, so its record stays.
   */
  removals: Array<{ name: string; entry: PlanEntry; live: LiveProject; keep?: boolean }>;
  /** Inventoried projects whose manifest is gone and that are gone from the live list too. */
  vanished: string[];
  /**
   * Inventory records of projects whose document another shard now owns (filled when the
   * Project module plans): handed over, the record dropped and the live project untouched.
   */
  handovers: Array<{ name: string; shard: string; entry: PlanEntry }>;
  organizationsListed: boolean;
}

export interface FleetInput {
  api: ManagementApi;
  organizationDocuments: OrganizationDocument[];
  /** Active (not suspended, within the pass's selection) Project documents. */
  projectDocuments: ProjectDocument[];
  /** Every Project document, suspended and unselected ones included: their projects are never removals. */
  declaredDocuments: ProjectDocument[];
  /** The whole checkout was read without an error: the one condition under which anything is deleted. */
  checkoutClean: boolean;
  /** Limit removals to these names (the pass's selection); undefined: all. */
  selection?: Set<string>;
  inventory: Inventory;
  intents: IntentLog;
  manifestsEmpty: boolean;
  allowEmpty: boolean;
  readPriority: Priority;
  /** With `--shard`: this shard, the rest of the checkout and the owner of each organization. */
  shard?: ShardScope;
  /**
   * An apply of a shard waits up to `ms` (clock time) for a missing organization that another
   * shard creates, re-reading the organization list every `intervalMs`. Absent: no wait (a dry run).
   */
  organizationWait?: { ms: number; intervalMs: number; clock: Clock };
  signal?: AbortSignal;
  log: Logger;
}

/** What a fleet-level module applies with: the pass's observation and its shared state. */
export interface FleetApplyContext {
  fleet: FleetObservation;
  /** The pass's API. */
  api: ManagementApi;
  /** The API as the kinds of that project use it (its requests are counted and tagged under it). */
  apiFor(project: string): ManagementApi;
  inventory: Inventory;
  intents: IntentLog;
  state: StateStore;
  secrets: SecretResolver;
  clock: Clock;
  log: Logger;
  /** Live project refs by project manifest name: a creation adds its project's. */
  projectRefs: Map<string, string>;
  /** This process's shard, in a sharded fleet. */
  shard?: string;
  /** Projects with a change the rollout held in this pass: their records keep the labels they were last applied with. */
  held?: ReadonlySet<string>;
  signal?: AbortSignal;
}

/**
 * One module per fleet-level kind (Organization, then Project: the registry's order is the
 * order in which they plan and apply). The pass observes the fleet once (observe.ts: the
 * project list, the organization list when needed, the matching of documents to live
 * objects); `plan` diffs that observation into entries, plain data, without a request. The
 * engine applies `leading` entries before any project's own changes and `trailing` ones after
 * all of them; a project's own entries (its creation, its lifecycle) are applied with that
 * project (apply-project.ts). Every write goes through `apply`. After the apply, `record`
 * brings the inventory up to date with what the pass found and did; `exportDocuments` is the
 * module's part of `export`.
 */
export interface FleetModule<K extends string = ResourceKind, P extends string = K> {
  readonly kind: K;
  /** The kind of manifest document it is declared in. */
  readonly document: ManifestKind;
  /** Every kind of entry the module plans, its own first. */
  readonly produces: readonly P[];
  plan(fleet: FleetObservation, input: FleetInput): PlanEntry[];
  leading(fleet: FleetObservation): PlanEntry[];
  trailing(fleet: FleetObservation): PlanEntry[];
  /** Performs one entry of a kind it produces whose action is a write (never one under the observe policy). */
  apply(entry: PlanEntry, ctx: FleetApplyContext): Promise<void>;
  /**
   * Records in `ctx.inventory` (and clears from `ctx.intents`) what this pass established of
   * the module's kind, after the apply (never in a dry run); `now` is the time the pass
   * records. The engine calls each module in registry order, then saves the inventory.
   */
  record(ctx: FleetApplyContext, now: number): Promise<void>;
  /** The module's documents for the live fleet, in the order `export` writes them. */
  exportDocuments(context: FleetExportContext): AsyncIterable<FleetExportDocument>;
}

/** What a fleet-level module's export works with: the live fleet selected for export. */
export interface FleetExportContext {
  api: ManagementApi;
  /** The live projects selected for export, in the order of the project list. */
  projects: readonly V1ProjectWithDatabaseResponse[];
  /** Every organization visible to the token. */
  organizations: readonly OrganizationResponseV1[];
  /** Each selected project's manifest name (unique within the export), by ref. */
  projectNames: ReadonlyMap<string, string>;
  /**
   * Manifest names of the exported organizations, by id: the Organization module fills it,
   * and the Project module names each project's organization with it.
   */
  organizationNames: Map<string, string>;
  /** The configuration sections to export. */
  sections: readonly ConfigSection[];
  /** What each section's export works with, for one project (`name` is its manifest name). */
  sectionContexts(project: V1ProjectWithDatabaseResponse, name: string): (section: string) => SectionExportContext;
  log: Logger;
}

/** One document of a fleet-level module's export. */
export interface FleetExportDocument {
  document: Record<string, unknown>;
  /**
   * The live project the document declares (a Project document's): the project's documents
   * share a file named after it, and those of the per-project kinds follow it when the
   * service serves its configuration (`readable`).
   */
  project?: { ref: string; name: string; status: string; state: 'readable' | 'paused' | 'unreadable' };
}
