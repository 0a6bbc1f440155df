// Bounds on what the loader reads, so hostile or broken input answers quickly with a located
// error instead of exhausting memory or the stack. Documented in docs/manifests.md.

/** Largest manifest file read (bigger files are rejected from their size, without reading them). */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** Deepest nesting of mappings and sequences in a document (the deepest schema needs 8). */
export const MAX_NESTING_DEPTH = 64;

/**
 * Brackets nested deeper than this are refused before the YAML parser sees them: the parser
 * recurses per level, and a megabyte of `[` would exhaust the stack.
 */
export const MAX_FLOW_DEPTH_PRESCAN = 256;

/** Most alias expansions per document (YAML alias bombs, "billion laughs"). */
export const MAX_ALIAS_COUNT = 100;

/** Most documents in one file. */
export const MAX_DOCUMENTS_PER_FILE = 1000;

/** Most manifest files under the directory. */
export const MAX_FILES = 10_000;
