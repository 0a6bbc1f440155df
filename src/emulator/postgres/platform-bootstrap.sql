-- What a new project's database holds on the platform, as the emulator makes it: applied once
-- to the template every project database starts from (src/emulator/databases.ts). Written for
-- the emulator from the platform's public schema (its init scripts and the auth, storage and
-- realtime services' migrations); compare it with those section by section:
--   1. roles   2. schemas   3. extensions   4. auth   5. storage   6. realtime   7. graphql_public
--   8. grants and default privileges   9. publication and settings
-- What differs from the platform is listed in docs/emulator.md ("Databases").

-- 1. Roles -----------------------------------------------------------------------------------
-- `postgres` is the database's bootstrap superuser here (on the platform it is not a superuser).
create role supabase_admin login superuser createdb createrole replication bypassrls;
create role anon nologin noinherit;
create role authenticated nologin noinherit;
create role service_role nologin noinherit bypassrls;
create role authenticator login noinherit;
create role supabase_auth_admin login noinherit createrole;
create role supabase_storage_admin login noinherit createrole;
create role supabase_functions_admin login noinherit createrole;
create role supabase_realtime_admin nologin noinherit;
create role supabase_replication_admin login replication;
create role supabase_read_only_user login bypassrls;
create role dashboard_user nologin createdb createrole replication;
create role pgbouncer login;

grant anon, authenticated, service_role to authenticator;
grant anon, authenticated, service_role to postgres;
grant authenticator to supabase_storage_admin;
grant pg_read_all_data to supabase_read_only_user;
grant supabase_realtime_admin to postgres;

alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
alter role authenticator set statement_timeout = '8s';
alter role supabase_auth_admin set search_path = auth;
alter role supabase_auth_admin set idle_in_transaction_session_timeout = '60s';
alter role supabase_storage_admin set search_path = storage;
alter role supabase_admin set search_path = "$user", public, auth, extensions;
alter database postgres set search_path = "$user", public, extensions;

-- 2. Schemas ---------------------------------------------------------------------------------
create schema extensions;
create schema auth authorization supabase_auth_admin;
create schema storage authorization supabase_storage_admin;
create schema realtime;
create schema graphql_public;
create schema pgbouncer;

-- 3. Extensions a new project has (the stand-ins are described in docs/emulator.md) ----------
create extension if not exists "uuid-ossp" with schema extensions;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists supabase_vault;

-- 4. auth ------------------------------------------------------------------------------------
set role supabase_auth_admin;

create type auth.aal_level as enum ('aal1', 'aal2', 'aal3');
create type auth.factor_type as enum ('totp', 'webauthn', 'phone');
create type auth.factor_status as enum ('unverified', 'verified');
create type auth.code_challenge_method as enum ('s256', 'plain');
create type auth.one_time_token_type as enum (
  'confirmation_token', 'reauthentication_token', 'recovery_token',
  'email_change_token_new', 'email_change_token_current', 'phone_change_token'
);

create table auth.instances (
  id uuid primary key,
  uuid uuid,
  raw_base_config text,
  created_at timestamptz,
  updated_at timestamptz
);

create table auth.users (
  instance_id uuid,
  id uuid primary key,
  aud varchar(255),
  role varchar(255),
  email varchar(255),
  encrypted_password varchar(255),
  email_confirmed_at timestamptz,
  invited_at timestamptz,
  confirmation_token varchar(255),
  confirmation_sent_at timestamptz,
  recovery_token varchar(255),
  recovery_sent_at timestamptz,
  email_change_token_new varchar(255),
  email_change varchar(255),
  email_change_sent_at timestamptz,
  last_sign_in_at timestamptz,
  raw_app_meta_data jsonb,
  raw_user_meta_data jsonb,
  is_super_admin boolean,
  created_at timestamptz,
  updated_at timestamptz,
  phone text unique default null,
  phone_confirmed_at timestamptz,
  phone_change text default '',
  phone_change_token varchar(255) default '',
  phone_change_sent_at timestamptz,
  confirmed_at timestamptz generated always as (least(email_confirmed_at, phone_confirmed_at)) stored,
  email_change_token_current varchar(255) default '',
  email_change_confirm_status smallint default 0 check (email_change_confirm_status >= 0 and email_change_confirm_status <= 2),
  banned_until timestamptz,
  reauthentication_token varchar(255) default '',
  reauthentication_sent_at timestamptz,
  is_sso_user boolean not null default false,
  deleted_at timestamptz,
  is_anonymous boolean not null default false
);
create index users_instance_id_idx on auth.users (instance_id);
create index users_instance_id_email_idx on auth.users (instance_id, lower(email::text));
create unique index users_email_partial_key on auth.users (email) where is_sso_user = false;
create index users_is_anonymous_idx on auth.users (is_anonymous);
comment on table auth.users is 'Auth: Stores user login data within a secure schema.';

create table auth.refresh_tokens (
  instance_id uuid,
  id bigserial primary key,
  token varchar(255) unique,
  user_id varchar(255),
  revoked boolean,
  created_at timestamptz,
  updated_at timestamptz,
  parent varchar(255),
  session_id uuid
);
create index refresh_tokens_instance_id_idx on auth.refresh_tokens (instance_id);
create index refresh_tokens_instance_id_user_id_idx on auth.refresh_tokens (instance_id, user_id);
create index refresh_tokens_parent_idx on auth.refresh_tokens (parent);

create table auth.audit_log_entries (
  instance_id uuid,
  id uuid primary key,
  payload json,
  created_at timestamptz,
  ip_address varchar(64) not null default ''
);
create index audit_logs_instance_id_idx on auth.audit_log_entries (instance_id);

create table auth.schema_migrations (version varchar(255) primary key);

create table auth.identities (
  provider_id text not null,
  user_id uuid not null references auth.users (id) on delete cascade,
  identity_data jsonb not null,
  provider text not null,
  last_sign_in_at timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  email text generated always as (lower(identity_data ->> 'email')) stored,
  id uuid primary key default gen_random_uuid(),
  unique (provider_id, provider)
);
create index identities_user_id_idx on auth.identities (user_id);
create index identities_email_idx on auth.identities (email text_pattern_ops);

create table auth.sessions (
  id uuid primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz,
  updated_at timestamptz,
  factor_id uuid,
  aal auth.aal_level,
  not_after timestamptz,
  refreshed_at timestamp,
  user_agent text,
  ip inet,
  tag text
);
create index sessions_user_id_idx on auth.sessions (user_id);
alter table auth.refresh_tokens add constraint refresh_tokens_session_id_fkey foreign key (session_id) references auth.sessions (id) on delete cascade;

create table auth.mfa_factors (
  id uuid primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  friendly_name text,
  factor_type auth.factor_type not null,
  status auth.factor_status not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  secret text,
  phone text,
  last_challenged_at timestamptz unique,
  web_authn_credential jsonb,
  web_authn_aaguid uuid
);
create table auth.mfa_challenges (
  id uuid primary key,
  factor_id uuid not null references auth.mfa_factors (id) on delete cascade,
  created_at timestamptz not null,
  verified_at timestamptz,
  ip_address inet not null,
  otp_code text,
  web_authn_session_data jsonb
);
create table auth.mfa_amr_claims (
  session_id uuid not null references auth.sessions (id) on delete cascade,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  authentication_method text not null,
  id uuid primary key,
  unique (session_id, authentication_method)
);

create table auth.sso_providers (
  id uuid primary key,
  resource_id text check (resource_id = null or char_length(resource_id) > 0),
  created_at timestamptz,
  updated_at timestamptz
);
create table auth.sso_domains (
  id uuid primary key,
  sso_provider_id uuid not null references auth.sso_providers (id) on delete cascade,
  domain text not null check (char_length(domain) > 0),
  created_at timestamptz,
  updated_at timestamptz
);
create table auth.saml_providers (
  id uuid primary key,
  sso_provider_id uuid not null references auth.sso_providers (id) on delete cascade,
  entity_id text not null unique check (char_length(entity_id) > 0),
  metadata_xml text not null check (char_length(metadata_xml) > 0),
  metadata_url text check (metadata_url = null or char_length(metadata_url) > 0),
  attribute_mapping jsonb,
  created_at timestamptz,
  updated_at timestamptz,
  name_id_format text
);
create table auth.flow_state (
  id uuid primary key,
  user_id uuid,
  auth_code text not null,
  code_challenge_method auth.code_challenge_method not null,
  code_challenge text not null,
  provider_type text not null,
  provider_access_token text,
  provider_refresh_token text,
  created_at timestamptz,
  updated_at timestamptz,
  authentication_method text not null,
  auth_code_issued_at timestamptz
);
create table auth.saml_relay_states (
  id uuid primary key,
  sso_provider_id uuid not null references auth.sso_providers (id) on delete cascade,
  request_id text not null check (char_length(request_id) > 0),
  for_email text,
  redirect_to text,
  created_at timestamptz,
  updated_at timestamptz,
  flow_state_id uuid references auth.flow_state (id) on delete cascade
);
create table auth.one_time_tokens (
  id uuid primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  token_type auth.one_time_token_type not null,
  token_hash text not null check (char_length(token_hash) > 0),
  relates_to text not null,
  created_at timestamp not null default now(),
  updated_at timestamp not null default now(),
  unique (user_id, token_type)
);

-- Every auth table has row level security, with no policy: only its owner and roles that bypass
-- it read them (as on the platform).
alter table auth.users enable row level security;
alter table auth.refresh_tokens enable row level security;
alter table auth.instances enable row level security;
alter table auth.audit_log_entries enable row level security;
alter table auth.schema_migrations enable row level security;
alter table auth.identities enable row level security;
alter table auth.sessions enable row level security;
alter table auth.mfa_factors enable row level security;
alter table auth.mfa_challenges enable row level security;
alter table auth.mfa_amr_claims enable row level security;
alter table auth.sso_providers enable row level security;
alter table auth.sso_domains enable row level security;
alter table auth.saml_providers enable row level security;
alter table auth.saml_relay_states enable row level security;
alter table auth.flow_state enable row level security;
alter table auth.one_time_tokens enable row level security;

-- The request's JWT, as the API gateway sets it for each request (request.jwt.claims), with the
-- older one-claim-per-setting form as a fallback.
create function auth.uid() returns uuid language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;
comment on function auth.uid() is 'Deprecated. Use auth.jwt() -> ''sub'' instead.';

create function auth.role() returns text language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;
comment on function auth.role() is 'Deprecated. Use auth.jwt() -> ''role'' instead.';

create function auth.email() returns text language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;
comment on function auth.email() is 'Deprecated. Use auth.jwt() -> ''email'' instead.';

create function auth.jwt() returns jsonb language sql stable as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

reset role;

-- 5. storage ---------------------------------------------------------------------------------
set role supabase_storage_admin;

create type storage.buckettype as enum ('STANDARD', 'ANALYTICS');

create table storage.buckets (
  id text primary key,
  name text not null,
  owner uuid,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  public boolean default false,
  avif_autodetection boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[],
  owner_id text,
  type storage.buckettype not null default 'STANDARD'
);
create unique index bname on storage.buckets using btree (name);
comment on column storage.buckets.owner is 'Field is deprecated, use owner_id instead';

create table storage.objects (
  id uuid primary key default gen_random_uuid(),
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text,
  owner_id text,
  user_metadata jsonb
);
create unique index bucketid_objname on storage.objects using btree (bucket_id, name);
create index name_prefix_search on storage.objects (name text_pattern_ops);
comment on column storage.objects.owner is 'Field is deprecated, use owner_id instead';

create table storage.migrations (
  id integer primary key,
  name varchar(100) unique not null,
  hash varchar(40) not null,
  executed_at timestamp default current_timestamp
);

create table storage.s3_multipart_uploads (
  id text primary key,
  in_progress_size bigint not null default 0,
  upload_signature text not null,
  bucket_id text not null references storage.buckets (id),
  key text not null collate "C",
  version text not null,
  owner_id text,
  created_at timestamptz not null default now(),
  user_metadata jsonb
);
create table storage.s3_multipart_uploads_parts (
  id uuid primary key default gen_random_uuid(),
  upload_id text not null references storage.s3_multipart_uploads (id) on delete cascade,
  size bigint not null default 0,
  part_number integer not null,
  bucket_id text not null references storage.buckets (id),
  key text not null collate "C",
  etag text not null,
  owner_id text,
  version text not null,
  created_at timestamptz not null default now()
);

alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;
alter table storage.migrations enable row level security;
alter table storage.s3_multipart_uploads enable row level security;
alter table storage.s3_multipart_uploads_parts enable row level security;

-- An object's name is its path in the bucket: folders, then the file name.
create function storage.foldername(name text) returns text[] language plpgsql immutable as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[1:array_length(_parts, 1) - 1];
end
$$;

create function storage.filename(name text) returns text language plpgsql immutable as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[array_length(_parts, 1)];
end
$$;

create function storage.extension(name text) returns text language plpgsql immutable as $$
declare
  _parts text[];
  _filename text;
begin
  select string_to_array(name, '/') into _parts;
  select _parts[array_length(_parts, 1)] into _filename;
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

create function storage.get_size_by_bucket() returns table (size bigint, bucket_id text) language plpgsql stable as $$
begin
  return query
    select sum((metadata ->> 'size')::bigint) as size, obj.bucket_id
      from storage.objects as obj
     group by obj.bucket_id;
end
$$;

create function storage.search(
  prefix text, bucketname text, limits int default 100, levels int default 1, offsets int default 0,
  search text default '', sortcolumn text default 'name', sortorder text default 'asc'
) returns table (name text, id uuid, updated_at timestamptz, created_at timestamptz, last_accessed_at timestamptz, metadata jsonb)
language plpgsql stable as $$
begin
  return query
    select o.name, o.id, o.updated_at, o.created_at, o.last_accessed_at, o.metadata
      from storage.objects o
     where o.bucket_id = bucketname
       and o.name ilike prefix || '%'
       and o.name ilike '%' || search || '%'
       and array_length(o.path_tokens, 1) <= levels + array_length(string_to_array(prefix, '/'), 1) - 1
     order by o.name
     limit limits offset offsets;
end
$$;

create function storage.update_updated_at_column() returns trigger language plpgsql as $$
begin
  new.updated_at = now();
  return new;
end
$$;
create trigger update_objects_updated_at before update on storage.objects
  for each row execute function storage.update_updated_at_column();

reset role;

-- 6. realtime --------------------------------------------------------------------------------
create table realtime.schema_migrations (version bigint primary key, inserted_at timestamp(0));

create table realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp not null default now(),
  inserted_at timestamp not null default now(),
  id uuid not null default gen_random_uuid(),
  primary key (id, inserted_at)
);
alter table realtime.messages enable row level security;

create table realtime.subscription (
  id bigint generated always as identity primary key,
  subscription_id uuid not null,
  entity regclass not null,
  filters jsonb not null default '[]',
  claims jsonb not null,
  created_at timestamp not null default timezone('utc', now())
);

-- The topic of the channel a policy on realtime.messages is checked for.
create function realtime.topic() returns text language sql stable as $$
  select nullif(current_setting('realtime.topic', true), '')::text
$$;

-- A broadcast: stored as a message (no client is connected to an emulated project).
create function realtime.send(payload jsonb, event text, topic text, private boolean default true) returns void
language plpgsql as $$
begin
  insert into realtime.messages (payload, event, topic, private, extension)
  values (payload, event, topic, private, 'broadcast');
end
$$;

create function realtime.broadcast_changes(
  topic_name text, event_name text, operation text, table_name text, table_schema text,
  new record, old record, level text default 'ROW'
) returns void language plpgsql as $$
declare
  row_data jsonb := case when new is null then null else to_jsonb(new) end;
  old_data jsonb := case when old is null then null else to_jsonb(old) end;
begin
  perform realtime.send(
    jsonb_build_object('operation', operation, 'record', row_data, 'old_record', old_data,
                       'table', table_name, 'schema', table_schema),
    event_name, topic_name, true);
end
$$;

-- 7. graphql_public --------------------------------------------------------------------------
-- The platform's placeholder while pg_graphql is not enabled: the emulator has no pg_graphql.
create function graphql_public.graphql(
  "operationName" text default null, query text default null, variables jsonb default null, extensions jsonb default null
) returns jsonb language plpgsql as $$
begin
  return jsonb_build_object('errors', jsonb_build_array(jsonb_build_object(
    'message', 'pg_graphql extension is not enabled.')));
end
$$;

-- pgbouncer's lookup of a login's password hash.
create function pgbouncer.get_auth(p_usename text) returns table (username text, password text)
language plpgsql security definer as $$
begin
  return query select usename::text, passwd::text from pg_catalog.pg_shadow where usename = p_usename;
end
$$;
revoke all on function pgbouncer.get_auth(text) from public;
grant execute on function pgbouncer.get_auth(text) to pgbouncer;

-- 8. Grants and default privileges -----------------------------------------------------------
grant usage on schema public to postgres, anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to postgres, anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to postgres, anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges for role supabase_admin in schema public grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_admin in schema public grant all on functions to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_admin in schema public grant all on sequences to postgres, anon, authenticated, service_role;

grant usage on schema extensions to postgres, anon, authenticated, service_role;
grant all on schema extensions to dashboard_user;
grant all privileges on all tables in schema extensions to postgres with grant option;
grant all privileges on all functions in schema extensions to postgres with grant option;
grant all privileges on all sequences in schema extensions to postgres with grant option;
alter default privileges in schema extensions grant all on tables to postgres with grant option;
alter default privileges in schema extensions grant all on functions to postgres with grant option;
alter default privileges in schema extensions grant all on sequences to postgres with grant option;

grant usage on schema auth to anon, authenticated, service_role;
grant all on schema auth to supabase_auth_admin, dashboard_user, postgres;
grant all on all tables in schema auth to supabase_auth_admin, dashboard_user, postgres;
grant all on all sequences in schema auth to supabase_auth_admin, dashboard_user, postgres;
grant all on all functions in schema auth to supabase_auth_admin, dashboard_user, postgres;
grant execute on function auth.uid(), auth.role(), auth.email(), auth.jwt() to public;
alter default privileges for role supabase_auth_admin in schema auth grant all on tables to postgres, dashboard_user;
alter default privileges for role supabase_auth_admin in schema auth grant all on sequences to postgres, dashboard_user;
alter default privileges for role supabase_auth_admin in schema auth grant all on functions to postgres, dashboard_user;

grant usage on schema storage to postgres, anon, authenticated, service_role;
grant all on schema storage to supabase_storage_admin, dashboard_user;
grant all on all tables in schema storage to postgres, anon, authenticated, service_role, dashboard_user;
grant all on all sequences in schema storage to postgres, anon, authenticated, service_role, dashboard_user;
grant all on all functions in schema storage to postgres, anon, authenticated, service_role, dashboard_user;
alter default privileges for role supabase_storage_admin in schema storage grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_storage_admin in schema storage grant all on sequences to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_storage_admin in schema storage grant all on functions to postgres, anon, authenticated, service_role;

grant usage on schema realtime to postgres, anon, authenticated, service_role;
grant all on schema realtime to supabase_realtime_admin, dashboard_user;
grant all on all tables in schema realtime to postgres, dashboard_user, supabase_realtime_admin;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;
grant select on realtime.schema_migrations to anon, authenticated, service_role;
grant select on realtime.subscription to anon, authenticated, service_role;
grant execute on all functions in schema realtime to postgres, anon, authenticated, service_role;

grant usage on schema graphql_public to postgres, anon, authenticated, service_role;
grant all on function graphql_public.graphql(text, text, jsonb, jsonb) to postgres, anon, authenticated, service_role;

-- 9. Publication ----------------------------------------------------------------------------
create publication supabase_realtime;
