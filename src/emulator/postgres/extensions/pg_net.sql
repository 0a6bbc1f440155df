-- pg_net, as the emulator stands it in: a request is queued in net.http_request_queue and its id
-- answered, as with pg_net; the emulator sends nothing, so no response ever arrives.
create schema net;

create table net.http_request_queue (
  id bigserial,
  method text not null,
  url text not null,
  headers jsonb not null,
  body bytea,
  timeout_milliseconds integer not null
);

create table net._http_response (
  id bigint,
  status_code integer,
  content_type text,
  headers jsonb,
  content text,
  timed_out boolean,
  error_msg text,
  created timestamptz not null default now()
);

create function net._enqueue(method text, url text, params jsonb, headers jsonb, body bytea, timeout_milliseconds integer)
returns bigint language plpgsql as $$
declare
  query text;
  request_id bigint;
begin
  if url is null or url !~* '^https?://' then
    raise exception 'url must start with http:// or https://';
  end if;
  if timeout_milliseconds is null or timeout_milliseconds <= 0 then
    raise exception 'timeout_milliseconds must be positive';
  end if;
  select string_agg(format('%s=%s', key, value), '&') into query from jsonb_each_text(coalesce(params, '{}'));
  insert into net.http_request_queue (method, url, headers, body, timeout_milliseconds)
  values (method, url || coalesce('?' || query, ''), coalesce(headers, '{}'), body, timeout_milliseconds)
  returning id into request_id;
  return request_id;
end
$$;

create function net.http_get(
  url text, params jsonb default '{}', headers jsonb default '{}', timeout_milliseconds integer default 5000
) returns bigint language sql as $$
  select net._enqueue('GET', url, params, headers, null, timeout_milliseconds)
$$;

create function net.http_post(
  url text, body jsonb default '{}', params jsonb default '{}',
  headers jsonb default '{"Content-Type": "application/json"}', timeout_milliseconds integer default 5000
) returns bigint language sql as $$
  select net._enqueue('POST', url, params, headers, convert_to(body::text, 'UTF8'), timeout_milliseconds)
$$;

create function net.http_delete(
  url text, params jsonb default '{}', headers jsonb default '{}', timeout_milliseconds integer default 5000,
  body jsonb default null
) returns bigint language sql as $$
  select net._enqueue('DELETE', url, params, headers, convert_to(body::text, 'UTF8'), timeout_milliseconds)
$$;

grant usage on schema net to postgres, anon, authenticated, service_role;
grant execute on all functions in schema net to postgres, anon, authenticated, service_role;
grant all on all tables in schema net to postgres;
grant all on all sequences in schema net to postgres;
