import { PGlite } from '@electric-sql/pglite';
import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
const a = await PGlite.create({ extensions: { pgcrypto } });
await a.exec(`create role anon nologin; create role authenticated nologin; alter database postgres set search_path = "$user", public, extensions; alter role postgres set search_path = "$user", public, extensions; create schema extensions; create extension pgcrypto with schema extensions;`);
a.Module.FS.writeFile('/pglite/share/postgresql/extension/pg_cron.control', "comment = 'x'\ndefault_version = '1.6'\nrelocatable = false\nschema = cron\nsuperuser = false\n");
a.Module.FS.writeFile('/pglite/share/postgresql/extension/pg_cron--1.6.sql', "create table cron.job (jobid bigserial primary key, schedule text); create function cron.schedule(text, text) returns bigint language sql as $$ insert into cron.job(schedule) values ($1) returning jobid $$;");
await a.exec('create extension pg_cron');
console.log((await a.query("select cron.schedule('a','b')")).rows);
try { await a.exec('create extension postgis'); } catch (e) { console.log(e.code, e.message, e.detail, e.hint); }
console.log((await a.query('show search_path')).rows);
const dump = await a.dumpDataDir('gzip'); await a.close();
const b = await PGlite.create({ loadDataDir: dump, extensions: { pgcrypto } });
console.log('reopen', (await b.query('show search_path')).rows, (await b.query('select current_user, session_user')).rows);
await b.exec("set search_path = public; select set_config('x.y', '1', false); set role anon;");
console.log((await b.query("select current_user, current_setting('search_path') sp, current_setting('x.y', true) xy")).rows);
await b.exec('discard all');
console.log((await b.query("select current_user, current_setting('search_path') sp, current_setting('x.y', true) xy")).rows);
console.log((await b.query("select extensions.digest('a','sha256')")).rows);
try { await b.exec("select cron.schedule('a','b')"); } catch (e) { console.log('cron after reopen', e.message); }
process.exit(0);
