// The reconciler's contract. The plan is a value: observe + diff produce PlanEntries,
// `--dry-run` renders them, apply executes them. Every managed kind is a module registered in
// one table (src/reconcile/registry.ts): the kinds within a project implement KindModule (here),
// Organization and Project FleetModule (fleet.ts). This file is a leaf of src/reconcile: it
// imports nothing of it but the leaf list of kinds (resource-kinds.ts).
import type { ManagementApi } from '../api/endpoints.js';
import type { Clock } from '../util/clock.js';
import type { KindCheck, LoadRead } from '../manifests/load-facets.js';
import type { DocumentSchema } from '../manifests/schema-source.js';
import type { AnyDocument, ManifestError, ManifestKind, ProjectDocument, SecretRef } from '../manifests/types.js';
import type { ResourceKind } from './resource-kinds.js';

export type { ResourceKind } from './resource-kinds.js';

export type PlanAction = 'create' | 'update' | 'delete' | 'noop' | 'blocked';

export interface FieldChange {
  /** Dotted field path inside the resource, for example `auth.site_url`. */
  path: string;
  /** Absent for sensitive fields and for additions. */
  before?: unknown;
  /** Absent for sensitive fields and for removals. */
  after?: unknown;
  /** The value is secret: renderers print `(sensitive value changed)` and never a value. */
  sensitive?: boolean;
}

export interface PlanEntry {
  /** Stable id: `<kind>/<project>/<name>` (project omitted for organizations and projects). */
  id: string;
  kind: ResourceKind;
  /** Manifest name of the project this resource belongs to. */
  project?: string;
  name: string;
  action: PlanAction;
  changes: FieldChange[];
  /** Why: for blocked, noop-with-note, delete (policy), and dependency waits. */
  reason?: string;
  /** The resource is under the observe policy: drift is reported, never written. */
  observeOnly?: boolean;
  /**
   * A project whose manifest is gone, under the deletion policy `orphan`: left in place and no
   * longer managed (the status record drops it, as it does any project the manifests no longer name).
   */
  released?: boolean;
  /**
   * The resource converges on the service's side (DNS verification of a custom hostname,
   * a Postgres upgrade in progress): its status is `pending` with `reason`, not drift and
   * never a failure. The action says whether this pass writes anything to move it on.
   */
  pending?: boolean;
  /** Ids of entries that must succeed before this one is applied. */
  dependsOn?: string[];
  /** Where the desired state came from; for a project a ProjectSet made, the set and the element key. */
  source?: { file: string; line: number; set?: { name: string; key: string } };
  /**
   * Live values observed at plan time that the apply needs and cannot read from the manifests:
   * the id of a live item to update or delete, the live part a whole-object write keeps. Never
   * a secret: values the apply sends that are secret are resolved again when it runs.
   */
  target?: Record<string, unknown>;
  /**
   * Change classes the module names for this write beyond those the rollout derives from its
   * kind and action (src/reconcile/rollout/change-class.ts): `disruptive-migration`, ...
   */
  changeClasses?: string[];
  /** The rollout wave of the entry's project (a Rollout document with waves). */
  wave?: string;
  /**
   * Held back by the rollout: planned, not written in this pass. `wave`: a later wave waits
   * for the gate of the wave before (or the rollout is halted); `window`: a disruptive change
   * outside its maintenance window; `approval`: a change its revision's approval has not covered.
   */
  held?: { reason: 'wave' | 'window' | 'approval'; message: string; until?: number; /** The approval rule's or the window's name. */ name?: string };
}

export interface Plan {
  entries: PlanEntry[];
  /** Counts by action (entries under observe count as drift, not as changes). */
  summary: Record<PlanAction, number>;
  /** True when an apply would write anything. */
  hasChanges: boolean;
  /** Entries under the observe policy whose live state differs (reported, never written). */
  drift?: number;
}

/**
 * `interrupted`: the change was under way when the process started stopping (a signal, a lost
 * lock) and did not finish; not a failure, the next pass plans it again.
 */
export type OutcomeResult = 'success' | 'failed' | 'skipped' | 'interrupted';

/**
 * What an outcome ran: a plan entry's action, or a step of the apply that writes nothing:
 * `wait`, the wait until a new or restored project is ready (`Project/<name>#ready`), and
 * `verify`, the read-back of a project's writes (`Project/<name>#verify`), which fails when
 * it cannot be read. Only `create`, `update` and `delete` outcomes are writes
 * (`isWriteOutcome` in summary.ts): the apply counts and the metrics count those alone.
 */
export type OutcomeAction = PlanAction | 'wait' | 'verify';

export interface ApplyOutcome {
  entryId: string;
  kind: ResourceKind;
  action: OutcomeAction;
  result: OutcomeResult;
  /** Error class name and a message free of secrets. */
  error?: { type: string; message: string };
  durationMs?: number;
}

/**
 * `in_sync`; `drifted`: the live state differs and nothing holds the change back (out-of-band
 * drift, a dry run, the observe policy); `held`: a change the rollout holds back (its wave has
 * not started, outside its maintenance window, waiting for an approval); `pending`: converging
 * on the service's side or not made yet for another reason; `failed`.
 */
export type ResourceState = 'in_sync' | 'drifted' | 'held' | 'pending' | 'failed';

/** Every state, in the order counts are shown. */
export const RESOURCE_STATES: readonly ResourceState[] = ['in_sync', 'drifted', 'held', 'pending', 'failed'];

/** What a pass knows of each managed resource: `reconcile status` and the metrics read it. */
export interface ResourceStatus {
  id: string;
  kind: ResourceKind;
  project?: string;
  name: string;
  state: ResourceState;
  /** Drifted field paths. */
  fields?: string[];
  message?: string;
  /** ms since epoch of the last observation. */
  observedAt?: number;
}

export interface ProjectObservation {
  /** Manifest name. */
  name: string;
  ref?: string;
  status?: string;
  /** Service health as last observed (service -> healthy). */
  health?: Record<string, boolean>;
  observedAt?: number;
}

export interface PassResult {
  startedAt: number;
  finishedAt: number;
  dryRun: boolean;
  revision?: string;
  manifestErrors: ManifestError[];
  plan: Plan;
  outcomes: ApplyOutcome[];
  resources: ResourceStatus[];
  projects: ProjectObservation[];
  /** `success`: all applied (or nothing to do); `failed`: any error; `invalid`: manifests did not load. */
  result: 'success' | 'failed' | 'invalid';
  /** Requests sent during the pass. */
  requests: number;
  /** The rollout as the pass leaves it (a Rollout document): waves, a halt, waiting changes, applied revisions. */
  rollout?: RolloutSummary;
  /** The pass was stopped before it finished (the process is stopping): what it did not do is planned again. */
  interrupted?: boolean;
}

/** What kinds get to work with. */
export interface KindContext {
  api: ManagementApi;
  clock: Clock;
  /** Persistent state directory helpers (inventory, intents, digests). */
  state: StateStore;
  /** All loaded documents (cross references). */
  documents: AnyDocument[];
  /** Resolves a secret reference of a document to its value (never logged). */
  resolveSecret(ref: unknown, document: AnyDocument): Promise<string>;
  /** Live project refs by project manifest name, filled as projects are observed or created. */
  projectRefs: Map<string, string>;
  /** What the pass knows beyond its plan (pass-state.ts): one per pass, shared by every kind of it. */
  pass: PassMemory;
  signal?: AbortSignal;
  log: Logger;
}

/**
 * Pass-scoped memory the engine owns (src/reconcile/pass-state.ts implements it). Kinds keep
 * nothing of a pass in module state: what must live exactly as long as one pass lives here.
 */
export interface PassMemory {
  /** True when this pass creates the project: it was planned before it existed, and holds no user data yet. */
  creates(project: string): boolean;
  /** Runs `send` once per pass and key, however many entries share it (a bulk request behind several entries). */
  once(key: string, send: () => Promise<void>): Promise<void>;
  /** A value kinds share within the pass under `key` (one read serving two sections), made by `create` on first use. */
  shared<T>(key: string, create: () => T): T;
  /** The pass is a scheduled drift re-check (priority `drift`), not a new revision, a trigger or a run by hand: failed writes back off. */
  readonly scheduled: boolean;
}

/** Minimal structured logger (pino-compatible). */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Persistent, atomically written state. Anything in it makes a pass cheaper or safer, never different in outcome. */
export interface StateStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
}

/** The project a per-project kind works within. */
export interface ProjectScope {
  /** Manifest name. */
  name: string;
  document: ProjectDocument;
  /** Live ref; undefined when the project does not exist yet (a dry run of its creation). */
  ref?: string;
  /** Live status from the project list. */
  status?: string;
  /** Live `database` object from the project list (version, engine, release channel); absent before creation. */
  database?: { version?: string; postgres_engine?: string; release_channel?: string; host?: string };
  /** Documents of this project, by kind (Secrets, Function, SsoProvider, Branch). */
  documents: AnyDocument[];
}

/**
 * One module per managed kind. `plan` observes (reads only, as few as possible: list
 * endpoints over per-item reads) and diffs into entries, which are plain data; the engine
 * orders and renders them and, unless it is a dry run, hands each write back to `apply`.
 * `apply` computes what it sends from the entry, the project's documents and the context
 * (secrets through `ctx.resolveSecret`), never from anything the plan kept aside.
 */
export interface KindModule<K extends string = ResourceKind> {
  readonly kind: K;
  /**
   * The kind of manifest document the module's resources are declared in, when it is its own
   * (a sub-resource's; a section is a field of the Project): the schema and the field
   * reference are generated for every document kind of the registry.
   */
  readonly document?: DocumentSchema;
  /**
   * Services (names of the health endpoint: `auth`, `rest`, ...) a new or restored project must
   * report healthy before the project's documents of this kind are written; none when absent.
   */
  readonly services?: readonly string[];
  /**
   * Its writes make the project unreadable for a while (a Postgres upgrade: the project is
   * UPGRADING): the engine applies them after the read-back of the project's other writes, and
   * they are not read back in the same pass. The one ordering need a module declares; otherwise
   * a project's kinds are applied in registry order.
   */
  readonly appliesAfterReadBack?: boolean;
  /**
   * The checks of the kind's documents against each other and the rest of the fleet (a name
   * or a claim once per project, a field another document must allow), when a checkout is
   * loaded, after the unique names and project references every kind gets: the loader runs the
   * registry's (src/reconcile/load-manifests.ts), each with every document of the module's
   * `document` kind.
   */
  readonly checks?: KindCheck;
  /**
   * The files of the checkout a document of this kind reads besides its own manifest file, and
   * the projects a change to the document or to those files affects: the daemon's change
   * detection and the revision ask the registry (src/reconcile/document-files.ts), never the kind
   * by name. Absent: the document reads no file and affects the project its `spec.project` names.
   */
  readonly files?: KindFiles;
  /**
   * The kind's own metrics: the daemon registers every kind's definitions and hands each pass
   * to its `record` (src/daemon/metrics.ts iterates the registry, never names a kind).
   */
  readonly metrics?: KindMetrics;
  /**
   * What a pass tells of a project beyond its resources (the schema version of its
   * migrations): the status record keeps it, the fleet view and `reconcile status` show it
   * (src/status/ and the live report iterate the registry, never name a kind).
   */
  readonly status?: KindStatus;
  /** The plan's markdown (`--output markdown`): blocks of the kind's own after the table of entries. */
  readonly render?: KindRender;
  /** True when the manifests manage anything of this kind for the project (else no reads at all). */
  manages(project: ProjectScope, ctx: KindContext): boolean;
  plan(project: ProjectScope, ctx: KindContext): Promise<PlanEntry[]>;
  /** Performs one entry of this kind whose action is a write (never one under the observe policy). */
  apply(entry: PlanEntry, project: ProjectScope, ctx: KindContext): Promise<void>;
  /** The kind's documents for one readable live project, as `export` writes them (a sub-resource's own documents). */
  exportDocuments?(context: KindExportContext): Promise<KindExport>;
}

/** KindModule.files: what a kind's documents read of the checkout, and whom it concerns. */
export type KindFiles = KindFilesReadAtLoad | KindFilesReadAtPass;

interface KindFilesOf {
  /**
   * Paths relative to the checkout's root (`root`, `/`-separated) a document reads; a path
   * ending in `/` stands for every file below that directory.
   */
  reads(document: AnyDocument, root: string): string[];
  /** The Project manifest names (among `documents`) a change to the document or its files affects. */
  affects(document: AnyDocument, documents: readonly AnyDocument[]): string[];
}

/** Files the loader reads: `read` reads them through the checkout's walker, which records them (ManifestSet.inputs). */
export interface KindFilesReadAtLoad extends KindFilesOf {
  readAt: 'load';
  /**
   * Reads a valid document's files when the checkout is loaded, after the revision's secret
   * files are sealed, and returns their problems as located errors; what it read is the pass's.
   */
  read: LoadRead;
}

/** Files only a pass reads: the revision hashes them through the checkout's walker when it is asked for. */
export interface KindFilesReadAtPass extends KindFilesOf {
  readAt: 'pass';
}

/** One metric of a kind: its type, label names and help text (the public interface: docs/operations.md documents each). */
export interface KindMetricDefinition {
  type: 'gauge' | 'counter';
  labels: readonly string[];
  help: string;
}

/** The series of a kind's metrics, by metric name (one of its `definitions`, of the right type). */
export interface KindMetricSeries {
  /** Sets a gauge's series. */
  set(name: string, labels: Record<string, string>, value: number): void;
  /** Adds `by` (default 1; 0 makes the series exist) to a counter's series. */
  inc(name: string, labels: Record<string, string>, by?: number): void;
  /** Removes a gauge's series. */
  remove(name: string, labels: Record<string, string>): void;
}

/** KindModule.metrics: the kind's metrics and how a pass changes them. */
export interface KindMetrics {
  /** Metric name (`reconciler_...`) to its definition. */
  readonly definitions: Readonly<Record<string, KindMetricDefinition>>;
  /**
   * Records a finished pass that loaded (an invalid revision records nothing): `projects`, the
   * projects the pass was limited to (undefined: the whole fleet); series of other projects stay.
   */
  record(result: PassResult, projects: readonly string[] | undefined, series: KindMetricSeries): void;
}

/** KindModule.status: facts of a project a pass leaves, by fact name; values are names and versions, never a secret. */
export interface KindStatus {
  /**
   * The facts of each project after the pass (project manifest name to fact name to value):
   * the status record keeps them as fields of the project (`schemaVersion`) until a pass that
   * covers the project replaces them, and the fleet view copies them. Names must not collide
   * with the record's own fields or another kind's.
   */
  facts(result: PassResult): Map<string, Record<string, string>>;
  /** The fact names `facts` may give, in the order the record and the view list them. */
  readonly fields: readonly string[];
  /** `reconcile status` (the recorded view) as text: a table under `heading`, one row per project that has a fact. */
  readonly table: {
    heading: string;
    /** Column headers after PROJECT. */
    columns: readonly string[];
    /** The cells after the project's name, from its facts; undefined: the project has none and gets no row. */
    row(facts: Readonly<Record<string, unknown>>): string[] | undefined;
  };
  /**
   * `reconcile status --live`: a field of each project's report made from the kind's plan
   * entries of that project (none: no field), and the lines it prints under the project.
   */
  readonly report?: {
    field: string;
    of(entries: readonly PlanEntry[]): unknown;
    lines(value: unknown): string[];
  };
}

/** KindModule.render: how the plan's renderers show what only this kind has. */
export interface KindRender {
  /**
   * Markdown blocks after the plan's table, for the entries the table lists (all kinds');
   * `inline` escapes text for a table cell or a `<summary>`.
   */
  markdown(entries: readonly PlanEntry[], inline: (text: string) => string): string[];
}

/** What a kind's export works with: one readable live project, whose Project document is exported already. */
export interface KindExportContext {
  api: ManagementApi;
  ref: string;
  /** The project's manifest name. */
  name: string;
  /** The exported Project spec (its configuration sections included). */
  spec: Record<string, unknown>;
  /**
   * Reads through `fetch`; an answer the service does not give for this project (404, other
   * client errors) is logged under `what` and yields undefined.
   */
  read<T>(fetch: () => Promise<T>, what: string): Promise<T | undefined>;
  /** The reference a secret is exported as: an environment variable named after the project and `field`. */
  secretRef(field: string): SecretRef;
  /** Function sources are exported; false: live functions are only named (`leftOut`). */
  functions: boolean;
  /** A directory for the project's function sources, unique within the export (asked for only when there are some). */
  functionDir(): string;
  log: Logger;
}

/** A file an export writes beside the documents (a function's source), relative to the output directory. */
export interface ExportedFile {
  path: string;
  content: Uint8Array;
}

export interface KindExport {
  documents: Array<Record<string, unknown>>;
  /** Files the documents point at (function sources), relative to the output directory. */
  files?: ExportedFile[];
  /** `project/slug` of what was not exported because `functions` was false. */
  leftOut?: string[];
}

// ---- The rollout as a pass leaves it (src/reconcile/rollout/ computes it; the plan, status,
// metrics and notifications read it).

export type WaveState = 'waiting' | 'applying' | 'soaking' | 'done' | 'halted';

export interface WaitingChange {
  reason: 'window' | 'approval';
  project?: string;
  since: number;
  message: string;
  /** When the window opens (window), ms. */
  until?: number;
}

/** Each project's applied revision, by project manifest name. */
export type ProjectRevisions = Record<string, { revision: string; appliedAt: number }>;

export type RolloutEventType = 'rollout_wave_started' | 'rollout_halted' | 'rollout_done' | 'approval_needed' | 'change_waiting';

/** What the rollout tells (notifications): names, ids and field paths, never a value. */
export interface RolloutEvent {
  type: RolloutEventType;
  rollout: string;
  revision: string;
  wave?: string;
  reason?: string;
  /** approval_needed and change_waiting: the entries, each `id (paths)`. */
  entries?: string[];
  projects?: string[];
}

/** The rollout as a pass leaves it: the plan, status and metrics show it. */
export interface RolloutSummary {
  name: string;
  revision: string;
  /** `projects`: how many; `members`: their manifest names. */
  waves: Array<{ name: string; state: WaveState; projects: number; members: string[]; soakUntil?: number; reason?: string }>;
  halted?: { wave: string; reason: string; at: number };
  waiting: Array<{ id: string } & WaitingChange>;
  /** Each managed project's applied revision (absent: none recorded yet). */
  revisions: ProjectRevisions;
  /** When the rollout can move on by itself: the end of a soak, a wave that may start now, a window that opens. */
  next?: { at: number; reason: 'soak' | 'wave' | 'window'; projects?: string[] };
  /** How long each wave soaks once applied (ms): the plan's forecast counts it. */
  soakMs?: number;
  events: RolloutEvent[];
}
