// The extensions of an emulated project's database. Three kinds:
// - the ones PGlite ships: its module (compiled code and SQL scripts) is loaded into a database
//   when the database opens, and only for the databases that need it (a query naming
//   `create extension X` adds it, reopening the database once with it);
// - the platform's extensions PGlite lacks that plain SQL can stand in for: their control file and
//   script (src/emulator/postgres/extensions/) are written into every database's extension
//   directory, so `create extension`, `drop extension` and `if not exists` behave as usual;
// - the platform's other extensions: `create extension` fails with a message saying so.
import { readFileSync } from 'node:fs';
import type { Extension, PGlite } from '@electric-sql/pglite';

/** PGlite's contrib modules that `create extension` knows (SQL name: module file). */
const CONTRIB: Record<string, string> = {
  amcheck: 'amcheck', bloom: 'bloom', btree_gin: 'btree_gin', btree_gist: 'btree_gist', citext: 'citext', cube: 'cube',
  dict_int: 'dict_int', dict_xsyn: 'dict_xsyn', earthdistance: 'earthdistance', file_fdw: 'file_fdw',
  fuzzystrmatch: 'fuzzystrmatch', hstore: 'hstore', intarray: 'intarray', isn: 'isn', lo: 'lo', ltree: 'ltree',
  pageinspect: 'pageinspect', pg_buffercache: 'pg_buffercache', pg_freespacemap: 'pg_freespacemap', pg_surgery: 'pg_surgery',
  pg_trgm: 'pg_trgm', pg_visibility: 'pg_visibility', pg_walinspect: 'pg_walinspect', pgcrypto: 'pgcrypto', seg: 'seg',
  tablefunc: 'tablefunc', tcn: 'tcn', tsm_system_rows: 'tsm_system_rows', tsm_system_time: 'tsm_system_time',
  unaccent: 'unaccent', 'uuid-ossp': 'uuid_ossp',
};

/** PGlite's other extension modules (SQL name: module path). */
const OWN: Record<string, string> = {
  vector: 'vector', pg_ivm: 'pg_ivm', pgtap: 'pgtap', pg_uuidv7: 'pg_uuidv7', pg_hashids: 'pg_hashids', age: 'age',
  pg_textsearch: 'pg_textsearch',
};

/** Every extension whose module PGlite ships, by the name `create extension` takes. */
export const PGLITE_EXTENSIONS: readonly string[] = [...Object.keys(CONTRIB), ...Object.keys(OWN)].sort();

/** The modules every database loads: the extensions a new project has (the template creates them). */
export const BASE_MODULES: readonly string[] = ['pgcrypto', 'uuid-ossp'];

const modules = new Map<string, Promise<Extension>>();

/** PGlite's module of an extension (imported once). */
export function pgliteModule(name: string): Promise<Extension> {
  let loading = modules.get(name);
  if (!loading) {
    const file = CONTRIB[name] ?? OWN[name]!;
    const specifier = CONTRIB[name] !== undefined ? `@electric-sql/pglite/contrib/${file}` : `@electric-sql/pglite/${file}`;
    // Each module exports its extension under the module's own name.
    loading = (import(specifier) as Promise<Record<string, Extension>>).then((module) => module[file]!);
    modules.set(name, loading);
  }
  return loading;
}

/** The `extensions` option of PGlite.create for those modules. */
export async function moduleOptions(names: Iterable<string>): Promise<Record<string, Extension>> {
  const out: Record<string, Extension> = {};
  for (const name of names) out[name.replace(/[^a-z0-9_]/g, '_')] = await pgliteModule(name);
  return out;
}

interface StandIn {
  comment: string;
  requires?: string;
  /** The schema it always goes into (created with it); without one, `with schema` or the current schema. */
  schema?: string;
}

/** The platform's extensions PGlite lacks, stood in for in SQL (src/emulator/postgres/extensions/NAME.sql). */
export const STAND_INS: Record<string, StandIn> = {
  supabase_vault: { comment: 'Supabase Vault Extension (emulator stand-in)', requires: 'pgcrypto', schema: 'vault' },
  pg_cron: { comment: 'Job scheduler for PostgreSQL (emulator stand-in: jobs are recorded, never run)' },
  pg_net: { comment: 'Async HTTP (emulator stand-in: requests are queued, never sent)' },
  pgjwt: { comment: 'JSON Web Token API for Postgresql (emulator stand-in)', requires: 'pgcrypto' },
  moddatetime: { comment: 'functions for tracking last modification time (emulator stand-in)' },
  http: { comment: 'HTTP client for PostgreSQL (emulator stand-in: its types and functions; a call raises, nothing is sent)' },
};

/** The platform's extensions the emulator has neither in PGlite nor as a stand-in. */
export const PLATFORM_ONLY: readonly string[] = [
  'address_standardizer', 'address_standardizer_data_us', 'autoinc', 'dblink', 'hypopg', 'index_advisor',
  'insert_username', 'intagg', 'pg_graphql', 'pg_jsonschema', 'pg_partman', 'pg_prewarm', 'pg_repack', 'pg_stat_monitor',
  'pg_stat_statements', 'pg_tle', 'pgaudit', 'pgmq', 'pgroonga', 'pgroonga_database', 'pgrouting', 'pgrowlocks',
  'pgsodium', 'pgstattuple', 'plpgsql_check', 'plv8', 'postgis', 'postgis_raster', 'postgis_sfcgal',
  'postgis_tiger_geocoder', 'postgis_topology', 'postgres_fdw', 'refint', 'rum', 'sslinfo', 'timescaledb', 'wrappers', 'xml2',
];

const EXTENSION_DIRECTORY = '/pglite/share/postgresql/extension';
const VERSION = '1.0';

let scripts: Map<string, string> | undefined;

function standInFiles(): Map<string, string> {
  if (!scripts) {
    const files = new Map<string, string>();
    for (const [name, standIn] of Object.entries(STAND_INS)) {
      const control = [
        `comment = '${standIn.comment.replaceAll("'", "''")}'`,
        `default_version = '${VERSION}'`,
        // Not relocatable: the script names its objects' schema (@extschema@, or its own schema).
        'relocatable = false',
        ...(standIn.requires ? [`requires = '${standIn.requires}'`] : []),
        ...(standIn.schema ? [`schema = ${standIn.schema}`] : []),
      ].join('\n');
      files.set(`${name}.control`, `${control}\n`);
      files.set(`${name}--${VERSION}.sql`, readFileSync(new URL(`./postgres/extensions/${name}.sql`, import.meta.url), 'utf8'));
    }
    scripts = files;
  }
  return scripts;
}

/** Writes the stand-ins' control files and scripts into the database's extension directory (each open: it is not saved with the data). */
export function installStandIns(db: PGlite): void {
  for (const [file, text] of standInFiles()) db.Module.FS.writeFile(`${EXTENSION_DIRECTORY}/${file}`, text);
}

/**
 * The PGlite modules a query's `create extension` statements name. Read from the text (a name
 * in a comment or a string counts too: loading a module more is harmless, and a statement built
 * in a `DO` block or a function is found as well).
 */
export function modulesNamed(query: string): string[] {
  const out = new Set<string>();
  for (const match of query.matchAll(/create\s+extension\s+(?:if\s+not\s+exists\s+)?(?:"([^"]+)"|([a-z_][a-z0-9_$]*))/gi)) {
    const name = match[1] ?? match[2]!.toLowerCase();
    if (CONTRIB[name] !== undefined || OWN[name] !== undefined) out.add(name);
  }
  return [...out];
}

/** The message for a `create extension` of one of the platform's extensions the emulator lacks (undefined for others). */
export function platformOnlyMessage(message: string): string | undefined {
  const name = /^extension "([^"]+)" is not available$/.exec(message)?.[1];
  if (!name || !PLATFORM_ONLY.includes(name)) return undefined;
  return `extension "${name}" is not available in the emulator: the platform has it, the emulator's Postgres (PGlite) does not ship it`;
}
