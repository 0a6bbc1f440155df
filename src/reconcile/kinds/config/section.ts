import type { ManagementApi } from '../../../api/endpoints.js';
import type { V1ProjectWithDatabaseResponse } from '../../../api/types.js';
import type { SectionSchema } from '../../../manifests/schema-source.js';
import type { SecretRef } from '../../../manifests/types.js';
import type { KindModule } from '../../types.js';

/**
 * Everything about one configuration section of the Project spec, in its module: how it is
 * planned and applied (KindModule), its part of the Project schema, the services it needs,
 * how it is exported. Registered in CONFIG_SECTIONS (src/reconcile/registry.ts); the schema
 * generator, `servicesNeeded`, `ResourceKind` and the export read that list.
 */
export interface ConfigSection<K extends `Project${string}` = `Project${string}`> extends KindModule<K> {
  readonly kind: K;
  /** The section's field in the Project spec (for example `ssl_enforcement`). */
  readonly key: string;
  readonly schema: SectionSchema;
  /**
   * Services (names of the health endpoint) that must report healthy before the section is
   * written to a new or restored project: ACTIVE_HEALTHY alone does not mean a write succeeds.
   */
  readonly services: readonly string[];
  /** The section's live value as a manifest would spell it; undefined leaves the field out. */
  export(context: SectionExportContext): Promise<unknown>;
}

/** What a section's export works with: one readable live project. */
export interface SectionExportContext {
  api: ManagementApi;
  /** The live project, from the project list. */
  project: V1ProjectWithDatabaseResponse;
  ref: string;
  /** The project's manifest name. */
  name: string;
  /**
   * Reads through `fetch`; an answer the service does not give for this project (404, other
   * client errors) is logged and yields undefined. Sections passing the same `share` key get
   * one request between them.
   */
  read<T>(fetch: () => Promise<T>, share?: string): Promise<T | undefined>;
  /** Keeps only what the Project schema's definition `def` knows (recursively), dropping nulls; undefined when nothing is left. */
  prune(value: unknown, def: string): unknown;
  /** Field names the Project schema's definition `def` knows. */
  fieldsOf(def: string): readonly string[];
  /** The reference a secret-bearing field is exported as: an environment variable named after the project and the field. */
  secretRef(field: string): SecretRef;
}
