// The parsed documents of the files a process has read, keyed by path and a digest of the
// content: a daemon loading each new commit parses again only the files the commit changed.
// Bounded by the bytes of text it holds (least recently used out first). Every load gets
// values of its own (a copy), so nothing a pass does to a document reaches the next load.
import { createHash } from 'node:crypto';
import { parseYamlFile, type ParsedFile } from './yaml-source.js';

/** The text a cache holds at most by default, in bytes (the texts of its files). */
export const DEFAULT_PARSE_CACHE_BYTES = 64 * 2 ** 20;

interface CachedParse {
  digest: string;
  bytes: number;
  parsed: ParsedFile;
  /** The documents' values as first parsed, never handed out. */
  values: unknown[];
}

export class ParseCache {
  readonly #maxBytes: number;
  readonly #files = new Map<string, CachedParse>();
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(maxBytes = DEFAULT_PARSE_CACHE_BYTES) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new TypeError(`Expected \`maxBytes\` to be a non-negative integer, got \`${String(maxBytes)}\``);
    this.#maxBytes = maxBytes;
  }

  /** Files held now. */
  get size(): number {
    return this.#files.size;
  }

  /** The file parsed, from the cache when this path last had this very content. */
  parse(path: string, text: string): ParsedFile {
    const digest = createHash('sha256').update(text).digest('base64url');
    const cached = this.#files.get(path);
    if (cached?.digest === digest) {
      this.hits += 1;
      // Most recently used last.
      this.#files.delete(path);
      this.#files.set(path, cached);
      return { ...cached.parsed, documents: cached.parsed.documents.map((document, i) => ({ ...document, value: structuredClone(cached.values[i]) })) };
    }
    this.misses += 1;
    this.#drop(path);
    const parsed = parseYamlFile(text);
    // Files with problems are parsed again each time: their errors are rare and located afresh.
    if (parsed.problems.length > 0) return parsed;
    const bytes = text.length;
    if (bytes <= this.#maxBytes) {
      this.#files.set(path, { digest, bytes, parsed, values: parsed.documents.map((document) => structuredClone(document.value)) });
      this.#bytes += bytes;
      while (this.#bytes > this.#maxBytes) this.#drop(this.#files.keys().next().value!);
    }
    return parsed;
  }

  #drop(path: string): void {
    const cached = this.#files.get(path);
    if (!cached) return;
    this.#files.delete(path);
    this.#bytes -= cached.bytes;
  }
}
