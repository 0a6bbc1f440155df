// One real Postgres per emulated project: PGlite (Postgres compiled to WebAssembly, in this
// process). A project's database is created on its first query, from a template made once per
// machine (initdb runs once, its data directory is kept as a gzipped tarball in the system's
// temporary directory). At most `maxOpen` databases are open at once (each holds about 200 MB of
// WebAssembly memory): opening one more closes the least recently used idle one, after writing
// its data directory, gzipped, to the emulator's scratch directory when it was written to since
// it was opened; when every open one is in use, a request for another waits until one is idle.
// An evicted database is reopened from that file on its next query, with its data.
// Removing a project removes its database; reset and seed remove all of them.
// The template holds what a new project's database holds on the platform (roles, schemas,
// extensions, grants: src/emulator/postgres/platform-bootstrap.sql), and every session starts
// with the platform's search path.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite, types, type ParserOptions } from '@electric-sql/pglite';
import { BASE_MODULES, installStandIns, moduleOptions, STAND_INS } from './extensions.js';

/** Open databases at once by default. */
export const DEFAULT_OPEN_DATABASES = 4;

const require = createRequire(import.meta.url);
/** The installed PGlite's version (its package.json is not exported: read next to its entry point). */
const PGLITE_VERSION = (JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Rows as the service's JSON answers them: numbers for the integer and floating types, booleans,
 * parsed JSON, and the text Postgres prints for the rest (bigint and numeric keep their precision
 * as strings; dates and times, bytea as `\x...`).
 */
const AS_TEXT = [types.INT8, types.NUMERIC, types.DATE, types.TIMESTAMP, types.TIMESTAMPTZ, types.TIME, types.TIMETZ, types.BYTEA, types.INTERVAL];
const PARSERS: ParserOptions = Object.fromEntries(AS_TEXT.map((type) => [type, (text: string) => text]));

/** The platform's search path: every session starts with it (and `DISCARD ALL` returns to it). */
export const PLATFORM_SEARCH_PATH = '"$user", public, extensions';
const START_PARAMS = PGlite.defaultStartParams.map((parameter) => (parameter.startsWith('search_path=') ? `search_path=${PLATFORM_SEARCH_PATH}` : parameter));

const BOOTSTRAP = readFileSync(new URL('./postgres/platform-bootstrap.sql', import.meta.url), 'utf8');
/** Changes with the bootstrap and the stand-ins' scripts: a template made from older ones is not reused. */
const BOOTSTRAP_DIGEST = (() => {
  const hash = createHash('sha256').update(BOOTSTRAP);
  for (const name of Object.keys(STAND_INS)) hash.update(readFileSync(new URL(`./postgres/extensions/${name}.sql`, import.meta.url)));
  return hash.digest('hex').slice(0, 12);
})();

/** Opens a database from a data directory with the base modules and these ones, and the stand-ins installed. */
async function openPostgres(data: Blob | undefined, modules: Iterable<string>): Promise<PGlite> {
  const db = await PGlite.create({
    ...(data ? { loadDataDir: data } : {}),
    parsers: PARSERS,
    startParams: START_PARAMS,
    extensions: await moduleOptions(new Set([...BASE_MODULES, ...modules])),
  });
  installStandIns(db);
  return db;
}

/** Makes a template: initdb, then the platform's bootstrap; answers its data directory, gzipped. */
export async function createTemplate(): Promise<Blob> {
  const db = await openPostgres(undefined, []);
  try {
    await db.exec(BOOTSTRAP);
    return await db.dumpDataDir('gzip');
  } finally {
    await db.close();
  }
}

interface OpenDatabase {
  ready: Promise<PGlite>;
  /** Written to since it was opened: it is saved when evicted. */
  dirty: boolean;
  /** Requests using it (counted before they wait for it); an entry in use is never evicted. */
  users: number;
  lastUsed: number;
  /** Serialises the requests of one database (one session: a request's statements run together). */
  queue: Promise<unknown>;
  /** The extension modules it was opened with (beyond the base ones). */
  modules: Set<string>;
}

let templateOnce: Promise<Blob> | undefined;

/** The key of the shared database that answers read-only queries of projects without one. */
const PRISTINE = '\0pristine';

/** The data directory of a fresh database, made once per machine and PGlite version. */
function template(): Promise<Blob> {
  templateOnce ??= (async () => {
    const file = join(tmpdir(), `fleet-reconciler-pglite-${PGLITE_VERSION}-${BOOTSTRAP_DIGEST}-template.tar.gz`);
    try {
      return new Blob([await readFile(file)]);
    } catch {
      const dump = await createTemplate();
      const temporary = `${file}.${process.pid}.${Date.now()}`;
      await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()));
      await rename(temporary, file);
      return dump;
    }
  })();
  templateOnce.catch(() => (templateOnce = undefined));
  return templateOnce;
}

export interface DatabaseStats {
  /** The bound of open databases. */
  maxOpen: number;
  open: number;
  /** The most databases open (or closing) at once so far. */
  peakOpen: number;
  saved: number;
  /** Bytes of the saved databases on disk. */
  savedBytes: number;
  opened: number;
  evicted: number;
}

export class ProjectDatabases {
  readonly maxOpen: number;
  /** The scratch directory of saved databases, made on the first save. */
  #dir: string | undefined;
  readonly #open = new Map<string, OpenDatabase>();
  /** Refs with a saved data directory (evicted after a write). */
  readonly #saved = new Set<string>();
  readonly #sizes = new Map<string, number>();
  /** Evictions under way: the next open of the ref waits for its save. */
  readonly #closing = new Map<string, Promise<void>>();
  /** Slots taken by requests about to open a database. */
  #reserved = 0;
  /** Requests waiting for a database to be idle (every open one is in use). */
  readonly #waiters: Array<() => void> = [];
  /** Refs whose database exists (open or saved, or opened and never written). */
  readonly #known = new Set<string>();
  /** The extension modules each database needs (a query of it named them in `create extension`). */
  readonly #modules = new Map<string, Set<string>>();
  #generation = 0;
  #tick = 0;
  readonly stats: DatabaseStats;

  constructor(options: { maxOpen?: number } = {}) {
    this.maxOpen = options.maxOpen ?? DEFAULT_OPEN_DATABASES;
    this.stats = { maxOpen: this.maxOpen, open: 0, peakOpen: 0, saved: 0, savedBytes: 0, opened: 0, evicted: 0 };
  }

  /** The project has a database (it has received a query). */
  has(ref: string): boolean {
    return this.#known.has(ref);
  }

  /**
   * Runs `work` on the project's database, alone (no other request of that database runs
   * meanwhile), creating or reopening the database first. `wrote` marks it to be saved on eviction.
   * `modules` are the extension modules the work needs (the database is reopened with them once).
   */
  async use<T>(project: string, work: (db: PGlite) => Promise<T>, options: { wrote: boolean; modules?: string[] }): Promise<T> {
    const generation = this.#generation;
    // A read-only request to a project that has no database yet reads the template's empty
    // schemas: one shared pristine database answers it (read-only, rolled back: nothing stays).
    const ref = !options.wrote && !this.#known.has(project) && !this.#open.has(project) ? PRISTINE : project;
    let entry = this.#open.get(ref);
    let reserved = false;
    if (!entry) {
      await this.#slot();
      reserved = true;
      entry = this.#open.get(ref);
    }
    if (reserved) {
      this.#reserved--;
      if (entry) this.#wake();
    }
    if (!entry) {
      const closing = this.#closing.get(ref);
      const ready = (async () => {
        await closing;
        return this.#openDatabase(ref);
      })();
      entry = { ready, dirty: false, users: 0, lastUsed: 0, queue: ready, modules: new Set(this.#modules.get(ref)) };
      this.#open.set(ref, entry);
      this.stats.peakOpen = Math.max(this.stats.peakOpen, this.#open.size + this.#closing.size);
      const opened = entry;
      ready.catch(() => {
        if (this.#open.get(ref) === opened) this.#open.delete(ref);
        this.#wake();
      });
      this.stats.open = this.#open.size;
    }
    const current = entry;
    current.users++;
    current.lastUsed = ++this.#tick;
    try {
      await current.ready;
      const run = current.queue.then(async () => {
        if (generation !== this.#generation) throw new Error('the database was removed');
        const db = await this.#withModules(ref, current, options.modules ?? []);
        const result = await work(db);
        if (options.wrote) current.dirty = true;
        return result;
      });
      current.queue = run.catch(() => undefined);
      return await run;
    } finally {
      current.users--;
      current.lastUsed = ++this.#tick;
      if (current.users === 0) this.#wake();
    }
  }

  /**
   * Waits until one more database may be opened: while the open ones (and the ones being saved
   * and closed) reach the bound, the least recently used idle one is closed, or, when every one
   * is in use, the request waits for one to become idle.
   */
  async #slot(): Promise<void> {
    while (this.#open.size + this.#closing.size + this.#reserved >= this.maxOpen) {
      // One eviction at a time: the slot it frees goes to the first request that wakes.
      if (this.#closing.size === 0 && this.#evictOne()) continue;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    // Taken at once: requests woken together must not all see the same free slot.
    this.#reserved++;
  }

  #wake(): void {
    for (const resolve of this.#waiters.splice(0)) resolve();
  }

  /**
   * The entry's database with these modules loaded: PGlite loads modules only when a database
   * opens, so a database that lacks one is reopened from its current data with it (once).
   */
  async #withModules(ref: string, entry: OpenDatabase, modules: string[]): Promise<PGlite> {
    const db = await entry.ready;
    if (ref === PRISTINE) return db;
    const needed = this.#modules.get(ref) ?? new Set<string>();
    for (const name of modules) needed.add(name);
    if (needed.size > 0) this.#modules.set(ref, needed);
    const missing = [...needed].filter((name) => !entry.modules.has(name));
    if (missing.length === 0) return db;
    const data = await db.dumpDataDir('none');
    await db.close();
    const reopened = openPostgres(data, needed);
    reopened.catch(() => {
      if (this.#open.get(ref) === entry) this.#open.delete(ref);
      this.stats.open = this.#open.size;
      this.#wake();
    });
    entry.ready = reopened;
    entry.modules = new Set(needed);
    return reopened;
  }

  async #openDatabase(ref: string): Promise<PGlite> {
    const data = this.#saved.has(ref) ? new Blob([await readFile(this.#file(ref))]) : await template();
    const db = await openPostgres(data, ref === PRISTINE ? [] : (this.#modules.get(ref) ?? []));
    if (ref !== PRISTINE) this.#known.add(ref);
    this.stats.opened++;
    return db;
  }

  /** Starts closing the least recently used idle database (saving it first when it was written to); false when none is idle. */
  #evictOne(): boolean {
    {
      const idle = [...this.#open].filter(([, entry]) => entry.users === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      if (idle.length === 0) return false;
      const [ref, entry] = idle[0]!;
      // Taken out first: a request arriving meanwhile opens it again once it is saved.
      this.#open.delete(ref);
      this.stats.open = this.#open.size;
      const closing = (async () => {
        await entry.queue;
        const db = await entry.ready;
        if (entry.dirty) {
          const dump = await db.dumpDataDir('gzip');
          const temporary = `${this.#file(ref)}.tmp`;
          await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()));
          await rename(temporary, this.#file(ref));
          this.#saved.add(ref);
          this.stats.savedBytes += dump.size - (this.#sizes.get(ref) ?? 0);
          this.#sizes.set(ref, dump.size);
        }
        await db.close();
        this.stats.evicted++;
        this.stats.saved = this.#saved.size;
      })().catch(() => undefined).finally(() => {
        if (this.#closing.get(ref) === closing) this.#closing.delete(ref);
        this.#wake();
      });
      this.#closing.set(ref, closing);
      return true;
    }
  }

  #file(ref: string): string {
    this.#dir ??= mkdtempSync(join(tmpdir(), 'reconcile-emulator-db-'));
    return join(this.#dir, `${ref}.tar.gz`);
  }

  /** Removes the project's database (open or saved). */
  async remove(ref: string): Promise<void> {
    const entry = this.#open.get(ref);
    this.#open.delete(ref);
    this.#known.delete(ref);
    this.#modules.delete(ref);
    this.stats.open = this.#open.size;
    await this.#closing.get(ref);
    this.#saved.delete(ref);
    this.stats.saved = this.#saved.size;
    this.stats.savedBytes -= this.#sizes.get(ref) ?? 0;
    this.#sizes.delete(ref);
    if (this.#dir) await rm(this.#file(ref), { force: true });
    await entry?.queue.catch(() => undefined);
    const db = await entry?.ready.catch(() => undefined);
    if (db) await db.close();
    this.#wake();
  }

  /** Removes every database (the emulator's state was replaced). */
  async clear(): Promise<void> {
    this.#generation++;
    await Promise.all([...this.#known, ...this.#open.keys()].map((ref) => this.remove(ref)));
  }

  /** Closes every database and deletes the scratch directory. */
  async close(): Promise<void> {
    await this.clear();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
  }
}
