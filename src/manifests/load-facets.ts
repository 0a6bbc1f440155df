// What a kind of document adds to the loading of a checkout, beside its schema: checks of its
// documents against each other and the fleet, and the files of the checkout its documents read
// at load time. The loader (load.ts) takes these facets, by document kind, as a parameter: the
// manifests layer knows no kind module, and the reconcile layer hands it the registry's facets
// (src/reconcile/load-manifests.ts), which every caller goes through.
import type { CheckoutFiles } from './checkout-files.js';
import type { AnyDocument, ManifestError, ManifestKind } from './types.js';
import type { Position } from './yaml-source.js';

/** A document with a recognised kind, valid against its schema or not. */
export interface CheckedEntry {
  file: string;
  /** Absolute directory of the file. */
  dir: string;
  kind: ManifestKind;
  name: string | undefined;
  spec: Record<string, unknown>;
  /** Passed its schema: its fields have the documented types. */
  valid: boolean;
  locate(pointer: string, options?: { key?: boolean }): Position;
}

/** What a kind's check is given of the fleet, after the fleet-wide checks (unique names, references). */
export interface CrossCheckContext {
  /** The manifests directory (the checkout's root), resolved. */
  readonly root: string;
  /** Reports a located error at `pointer` of `entry`'s document. */
  error(entry: CheckedEntry, pointer: string, message: string, hint?: string): void;
  /**
   * Records the first entry that claims `value` under `kind` (nothing when `value` is
   * undefined); reports a later claim at its `pointer` with `message(first)`.
   */
  claim(kind: string, value: string | undefined, entry: CheckedEntry, pointer: string, message: (first: CheckedEntry) => string): void;
  /** `file:line:column` of a field of a document, for messages that point at another document. */
  where(entry: CheckedEntry, pointer: string): string;
  /** Documents already reported as duplicates: not reported again for their derived names. */
  readonly duplicates: ReadonlySet<CheckedEntry>;
  readonly organizations: readonly CheckedEntry[];
  readonly projects: readonly CheckedEntry[];
  readonly organizationNames: ReadonlySet<string>;
  readonly projectNames: ReadonlySet<string>;
  /** The first Project of each name, as a search in document order would find it. */
  readonly projectByName: ReadonlyMap<string | undefined, CheckedEntry>;
}

/**
 * Checks of one kind's documents (every document of the kind, valid against its schema or not,
 * in document order), reported through `context.error` and `context.claim`.
 */
export type KindCheck = (entries: readonly CheckedEntry[], context: CrossCheckContext) => void;

/** What a load-time reader is given: the checkout's walker, and the location of a field of the document. */
export interface LoadReadContext {
  /**
   * The walker every file of the checkout is read through: it refuses paths and links that leave
   * the checkout and the secret files of the revision (sealed before any reader runs), and
   * records what it reads for the revision.
   */
  readonly checkout: CheckoutFiles;
  /** The location of a field (JSON pointer) of the document, for an error about the document itself. */
  at(pointer: string): Omit<ManifestError, 'message'>;
}

/**
 * Reads the files a valid document names, when the checkout is loaded; returns their problems as
 * located errors (a file's own, located in that file). What it read for the pass it keeps by document.
 */
export type LoadRead = (document: AnyDocument, context: LoadReadContext) => Promise<ManifestError[]>;

/** What one document kind adds to loading. */
export interface DocumentFacets {
  check?: KindCheck;
  read?: LoadRead;
}

/** The facets of the document kinds that have any, by document kind (`kind:`). */
export type LoadFacets = ReadonlyMap<string, DocumentFacets>;

/** A string field's value, unless it is absent, empty or not a string. */
export function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
