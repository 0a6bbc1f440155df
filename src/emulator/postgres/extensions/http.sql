-- http (pgsql-http), as the emulator stands it in: its domains, types and functions, so a
-- migration that creates the extension and functions that call it applies as on the platform.
-- The emulator sends no HTTP request: a call of http() (and of every method function, which
-- goes through it) raises an error that says so, where the platform would send it.
create domain @extschema@.http_method as text
  check (value ilike 'get' or value ilike 'post' or value ilike 'put' or value ilike 'delete' or value ilike 'patch' or value ilike 'head');

create domain @extschema@.content_type as text check (value ~ '^\S+\/\S+');

create type @extschema@.http_header as (field varchar, value varchar);

create type @extschema@.http_response as (status integer, content_type varchar, headers @extschema@.http_header[], content varchar);

create type @extschema@.http_request as (method @extschema@.http_method, uri varchar, headers @extschema@.http_header[], content_type varchar, content varchar);

create function @extschema@.http_header(field varchar, value varchar) returns @extschema@.http_header
language sql immutable as $$ select $1, $2 $$;

create function @extschema@.http(request @extschema@.http_request) returns @extschema@.http_response
language plpgsql as $$
begin
  raise exception 'http: the emulator sends no HTTP request (% %): the platform''s http extension would', upper(request.method), request.uri
    using errcode = '0A000';
end
$$;

create function @extschema@.http_set_curlopt(curlopt varchar, value varchar) returns boolean
language sql as $$ select true $$;

create function @extschema@.http_reset_curlopt() returns boolean
language sql as $$ select true $$;

create function @extschema@.urlencode(string varchar) returns text
language sql immutable strict as $$
  select string_agg(
    case when ch ~ '[A-Za-z0-9._~-]' then ch else upper(regexp_replace(encode(convert_to(ch, 'utf8'), 'hex'), '(..)', '%\1', 'g')) end, '' order by i)
  from regexp_split_to_table($1, '') with ordinality as t(ch, i)
$$;

create function @extschema@.urlencode(data jsonb) returns text
language sql immutable strict as $$
  select string_agg(@extschema@.urlencode(key) || '=' || @extschema@.urlencode(value), '&' order by key)
  from jsonb_each_text($1)
$$;

create function @extschema@.text_to_bytea(data text) returns bytea
language sql immutable strict as $$ select convert_to($1, 'utf8') $$;

create function @extschema@.bytea_to_text(data bytea) returns text
language sql immutable strict as $$ select convert_from($1, 'utf8') $$;

create function @extschema@.http_get(uri varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('GET', $1, null, null, null)::@extschema@.http_request) $$;

create function @extschema@.http_get(uri varchar, data jsonb) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('GET', $1 || '?' || @extschema@.urlencode($2), null, null, null)::@extschema@.http_request) $$;

create function @extschema@.http_post(uri varchar, content varchar, content_type varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('POST', $1, null, $3, $2)::@extschema@.http_request) $$;

create function @extschema@.http_post(uri varchar, data jsonb) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('POST', $1, null, 'application/x-www-form-urlencoded', @extschema@.urlencode($2))::@extschema@.http_request) $$;

create function @extschema@.http_put(uri varchar, content varchar, content_type varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('PUT', $1, null, $3, $2)::@extschema@.http_request) $$;

create function @extschema@.http_patch(uri varchar, content varchar, content_type varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('PATCH', $1, null, $3, $2)::@extschema@.http_request) $$;

create function @extschema@.http_delete(uri varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('DELETE', $1, null, null, null)::@extschema@.http_request) $$;

create function @extschema@.http_delete(uri varchar, content varchar, content_type varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('DELETE', $1, null, $3, $2)::@extschema@.http_request) $$;

create function @extschema@.http_head(uri varchar) returns @extschema@.http_response
language sql as $$ select @extschema@.http(('HEAD', $1, null, null, null)::@extschema@.http_request) $$;
