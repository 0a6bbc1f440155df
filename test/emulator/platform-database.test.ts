// A project's database is the platform's: the migrations real projects carry (row level security
// with auth.uid(), a trigger on auth.users, storage policies, extensions, grants to the API
// roles, the realtime publication, vault and cron) apply through POST .../database/query, and
// nothing a request sets reaches the next one. Two projects, at most two databases open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from './helpers.js';

const APP = 'platformdatabaseaaaa';
const OTHER = 'platformdatabasebbbb';
const TOKEN = 'pat_owner_platform_db';
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    openDatabases: 2,
    seed: {
      users: [{ id: 'owner', name: 'Owner', tokens: [TOKEN] }],
      organizations: [{ name: 'Platform org', members: [{ user: 'owner', role: 'Owner' }] }],
      projects: [
        { ref: APP, name: 'app', organization: 'Platform org' },
        { ref: OTHER, name: 'other', organization: 'Platform org' },
      ],
    },
  });
}, 300_000);

afterAll(async () => {
  await emulator.close();
});

const sql = async (ref: string, query: string) => {
  const answer = await call(emulator, 'POST', `/v1/projects/${ref}/database/query`, { token: TOKEN, body: { query } });
  if (answer.status !== 201) throw new Error(`query failed (${answer.status}): ${answer.body.message}`);
  return answer.body as Array<Record<string, unknown>>;
};
const failing = async (ref: string, query: string) => {
  const answer = await call(emulator, 'POST', `/v1/projects/${ref}/database/query`, { token: TOKEN, body: { query } });
  expect(answer.status).toBe(400);
  return answer.body.message as string;
};
/** Runs `query` as the API gateway does for a signed-in user: role authenticated, the JWT's claims set. */
const asUser = (user: string, query: string) =>
  `set local role authenticated; select set_config('request.jwt.claims', '{"sub":"${user}","role":"authenticated"}', true); ${query}`;

const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';

// Timeouts: the first query of a machine builds the template (initdb and the bootstrap), and a
// `create extension` of a module the open database lacks reopens it; both take seconds on a busy machine.
describe('a project database starts as a new project on the platform', () => {
  it('has the platform\'s roles, schemas, publication, extensions and search path, on Postgres 17', async () => {
    const [facts] = await sql(APP, `select
        current_setting('server_version_num')::int / 10000 as major,
        current_setting('search_path') as search_path,
        (select array_agg(rolname::text order by rolname) from pg_roles where rolname in
          ('anon', 'authenticated', 'service_role', 'authenticator', 'supabase_auth_admin', 'supabase_storage_admin', 'dashboard_user', 'supabase_admin')) as roles,
        (select array_agg(nspname::text order by nspname) from pg_namespace where nspname in
          ('auth', 'storage', 'extensions', 'vault', 'realtime', 'graphql_public')) as schemas,
        (select array_agg(e.extname::text || '@' || n.nspname order by e.extname) from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname <> 'plpgsql') as extensions,
        exists (select from pg_publication where pubname = 'supabase_realtime') as publication,
        pg_has_role('authenticator', 'anon', 'member') as authenticator_is_anon,
        (select rolbypassrls from pg_roles where rolname = 'service_role') as service_role_bypasses_rls`);
    expect(facts).toEqual({
      major: 17,
      search_path: '"$user", public, extensions',
      roles: ['anon', 'authenticated', 'authenticator', 'dashboard_user', 'service_role', 'supabase_admin', 'supabase_auth_admin', 'supabase_storage_admin'],
      schemas: ['auth', 'extensions', 'graphql_public', 'realtime', 'storage', 'vault'],
      extensions: ['pgcrypto@extensions', 'supabase_vault@vault', 'uuid-ossp@extensions'],
      publication: true,
      authenticator_is_anon: true,
      service_role_bypasses_rls: true,
    });
    // The helpers migrations call, with no claims set (as the SQL editor runs them).
    expect(await sql(APP, "select auth.uid() as uid, auth.role() as role, auth.jwt() as jwt, auth.email() as email, storage.foldername('avatars/2026/me.png') as folders, storage.filename('avatars/me.png') as file, storage.extension('avatars/me.png') as ext"))
      .toEqual([{ uid: null, role: null, jwt: null, email: null, folders: ['avatars', '2026'], file: 'me.png', ext: 'png' }]);
  }, 300_000);

  it('applies a profiles migration: RLS with auth.uid(), a trigger on auth.users calling a security definer function, grants', async () => {
    await sql(APP, `
      create table public.profiles (
        id uuid not null references auth.users on delete cascade primary key,
        username text unique,
        updated_at timestamptz default now()
      );
      alter table public.profiles enable row level security;
      create policy "Public profiles are viewable by everyone." on profiles for select using (true);
      create policy "Users can insert their own profile." on profiles for insert with check ((select auth.uid()) = id);
      create policy "Users can update own profile." on profiles for update using ((select auth.uid()) = id);
      create function public.handle_new_user() returns trigger
      language plpgsql security definer set search_path = '' as $$
      begin
        insert into public.profiles (id, username) values (new.id, new.raw_user_meta_data ->> 'username');
        return new;
      end;
      $$;
      create trigger on_auth_user_created after insert on auth.users
        for each row execute procedure public.handle_new_user();
      grant select on public.profiles to anon;
      grant select, insert, update on public.profiles to authenticated;
      alter publication supabase_realtime add table public.profiles;`);
    await sql(APP, `insert into auth.users (id, email, raw_user_meta_data) values
      ('${ALICE}', 'alice@example.org', '{"username":"alice"}'), ('${BOB}', 'bob@example.org', '{"username":"bob"}')`);
    expect(await sql(APP, 'select username from profiles order by username')).toEqual([{ username: 'alice' }, { username: 'bob' }]);
    // As Alice: her update touches her row only; Bob's stays as it was.
    expect(await sql(APP, asUser(ALICE, "update profiles set username = username || '!' returning username"))).toEqual([{ username: 'alice!' }]);
    expect(await sql(APP, 'select username from profiles order by username')).toEqual([{ username: 'alice!' }, { username: 'bob' }]);
    expect(await failing(APP, asUser(ALICE, `insert into profiles (id, username) values ('${ALICE.replace('1111-4', '9999-4')}', 'mallory')`)))
      .toMatch(/^ERROR: 42501: new row violates row-level security policy for table "profiles"/);
    // The default privileges gave the API roles the table; the realtime publication has it.
    expect(await sql(APP, "select has_table_privilege('service_role', 'public.profiles', 'delete') as service, exists (select from pg_publication_tables where pubname = 'supabase_realtime' and tablename = 'profiles') as published"))
      .toEqual([{ service: true, published: true }]);
  }, 180_000);

  it('applies storage policies that use storage.foldername', async () => {
    await sql(APP, `
      insert into storage.buckets (id, name, public) values ('avatars', 'avatars', true);
      create policy "Avatar images are publicly accessible." on storage.objects for select using (bucket_id = 'avatars');
      create policy "Users upload into their own folder." on storage.objects for insert to authenticated
        with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));`);
    expect(await sql(APP, asUser(ALICE, `insert into storage.objects (bucket_id, name) values ('avatars', '${ALICE}/me.png') returning path_tokens[2] as file`)))
      .toEqual([{ file: 'me.png' }]);
    expect(await failing(APP, asUser(ALICE, `insert into storage.objects (bucket_id, name) values ('avatars', '${BOB}/me.png')`)))
      .toMatch(/^ERROR: 42501: new row violates row-level security policy for table "objects"/);
  }, 180_000);

  it('creates extensions PGlite ships into the extensions schema, and the platform\'s stand-ins', async () => {
    await sql(APP, `
      create extension if not exists "uuid-ossp" with schema extensions;
      create extension if not exists pg_trgm with schema extensions;
      create extension if not exists vector with schema extensions;
      create table public.documents (id uuid primary key default uuid_generate_v4(), title text, embedding vector(3));
      create index documents_title on public.documents using gin (title gin_trgm_ops);
      insert into public.documents (title, embedding) values ('hello world', '[1,2,3]');`);
    expect(await sql(APP, "select title, embedding <-> '[1,2,4]' as distance, similarity(title, 'hello') > 0 as similar from documents"))
      .toEqual([{ title: 'hello world', distance: 1, similar: true }]);
    expect(await sql(APP, "select extname::text, extnamespace::regnamespace::text as schema from pg_extension where extname in ('pg_trgm', 'vector') order by 1"))
      .toEqual([{ extname: 'pg_trgm', schema: 'extensions' }, { extname: 'vector', schema: 'extensions' }]);

    expect(await sql(APP, "select vault.create_secret('service-key-value', 'service_key', 'the service key') is not null as created")).toEqual([{ created: true }]);
    expect(await sql(APP, "select name, decrypted_secret, secret <> decrypted_secret as encrypted from vault.decrypted_secrets"))
      .toEqual([{ name: 'service_key', decrypted_secret: 'service-key-value', encrypted: true }]);
    await sql(APP, `
      create extension if not exists pg_cron with schema pg_catalog;
      create extension if not exists pg_net with schema extensions;
      create extension if not exists moddatetime schema extensions;
      create trigger handle_updated_at before update on public.profiles for each row execute procedure moddatetime (updated_at);`);
    expect(await sql(APP, "select cron.schedule('nightly-cleanup', '0 3 * * *', $$delete from public.documents$$) as job")).toEqual([{ job: '1' }]);
    expect(await sql(APP, "select jobname, schedule, active from cron.job")).toEqual([{ jobname: 'nightly-cleanup', schedule: '0 3 * * *', active: true }]);
    expect(await failing(APP, "select cron.schedule('bad', 'every day', 'select 1')")).toMatch(/^ERROR: P0001: invalid schedule: every day/);
    expect(await sql(APP, "select cron.unschedule('nightly-cleanup') as done, net.http_post('https://example.org/hook', '{\"a\":1}'::jsonb) as request")).toEqual([{ done: true, request: '1' }]);
    expect(await sql(APP, "update profiles set username = 'bob2' where username = 'bob' returning updated_at > '2000-01-01' as touched")).toEqual([{ touched: true }]);
    // pgsql-http: its types and functions exist, so migrations that use them apply; a call sends nothing and says so.
    await sql(APP, `
      create extension http with schema extensions;
      create function public.delete_object(path text) returns integer language plpgsql as $$
      declare result integer;
      begin
        select status into result from extensions.http((
          'DELETE', 'https://storage.example/' || path, array[extensions.http_header('authorization', 'Bearer x')], null, null)::extensions.http_request);
        return result;
      end $$;`);
    expect(await sql(APP, "select extensions.urlencode('a b&c') as encoded")).toEqual([{ encoded: 'a%20b%26c' }]);
    expect(await failing(APP, "select public.delete_object('avatars/me.png')")).toMatch(/^ERROR: 0A000: http: the emulator sends no HTTP request \(DELETE https:\/\/storage\.example\/avatars\/me\.png\)/);
  }, 180_000);

  it('names the platform\'s extensions the emulator does not have', async () => {
    expect(await failing(APP, 'create extension if not exists postgis with schema extensions'))
      .toMatch(/^ERROR: 0A000: extension "postgis" is not available in the emulator: the platform has it/);
    // An extension the platform does not have either keeps Postgres's own message.
    expect(await failing(APP, 'create extension no_such_thing')).toMatch(/^ERROR: 0A000: extension "no_such_thing" is not available\n/);
  }, 180_000);
});

describe('each request starts a clean session', () => {
  it('applies a pg_dump-style file; its SET, set_config, SET ROLE and RESET ALL do not reach the next request', async () => {
    await sql(OTHER, `
      SET statement_timeout = 0;
      SET lock_timeout = 0;
      SET client_encoding = 'UTF8';
      SET standard_conforming_strings = on;
      SELECT pg_catalog.set_config('search_path', '', false);
      SET check_function_bodies = false;
      SET client_min_messages = warning;
      SET row_security = off;
      CREATE TABLE public.dumped (id integer NOT NULL, note text);
      ALTER TABLE public.dumped OWNER TO postgres;
      SELECT pg_catalog.set_config('app.tenant', 'acme', false);
      SET ROLE anon;`);
    const clean = "select current_user::text as role, current_setting('search_path') as search_path, current_setting('row_security') as row_security, current_setting('check_function_bodies') as bodies, current_setting('app.tenant', true) as tenant";
    const expected = [{ role: 'postgres', search_path: '"$user", public, extensions', row_security: 'on', bodies: 'on', tenant: '' }];
    expect(await sql(OTHER, clean)).toEqual(expected);
    await sql(OTHER, "set search_path = nowhere; reset all; set work_mem = '1MB'");
    expect(await sql(OTHER, clean)).toEqual(expected);
    // The platform's search path finds the extensions schema without qualifying it.
    expect(await sql(OTHER, 'select length(gen_random_bytes(4)) as n, uuid_generate_v4() is not null as uuid')).toEqual([{ n: 4, uuid: true }]);
  }, 180_000);
});
