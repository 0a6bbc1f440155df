-- pgjwt, as the emulator stands it in: HMAC-signed JSON web tokens (HS256, HS384, HS512) with
-- pgcrypto, the same functions and results as pgjwt.
create function @extschema@.url_encode(data bytea) returns text language sql immutable as $$
  select translate(encode(data, 'base64'), E'+/=\n', '-_')
$$;

create function @extschema@.url_decode(data text) returns bytea language sql immutable as $$
  with t as (select translate(data, '-_', '+/') as trans),
       rem as (select length(t.trans) % 4 as remainder from t)
  select decode(t.trans || case when rem.remainder > 0 then repeat('=', 4 - rem.remainder) else '' end, 'base64')
    from t, rem
$$;

create function @extschema@.algorithm_sign(signables text, secret text, algorithm text) returns text
language sql immutable as $$
  with alg as (
    select case
      when algorithm = 'HS256' then 'sha256'
      when algorithm = 'HS384' then 'sha384'
      when algorithm = 'HS512' then 'sha512'
      else '' end as id)
  select @extschema@.url_encode(@extschema:pgcrypto@.hmac(signables, secret, alg.id)) from alg
$$;

create function @extschema@.sign(payload json, secret text, algorithm text default 'HS256') returns text
language sql immutable as $$
  with header as (
    select @extschema@.url_encode(convert_to('{"alg":"' || algorithm || '","typ":"JWT"}', 'utf8')) as data),
  payload as (
    select @extschema@.url_encode(convert_to(payload::text, 'utf8')) as data),
  signables as (
    select header.data || '.' || payload.data as data from header, payload)
  select signables.data || '.' || @extschema@.algorithm_sign(signables.data, secret, algorithm) from signables
$$;

create function @extschema@.try_cast_double(inp text) returns double precision language plpgsql immutable as $$
begin
  begin
    return inp::double precision;
  exception when others then
    return null;
  end;
end
$$;

create function @extschema@.verify(token text, secret text, algorithm text default 'HS256')
returns table (header json, payload json, valid boolean) language sql immutable as $$
  select
    jwt.header as header,
    jwt.payload as payload,
    jwt.signature_ok and tstzrange(
      to_timestamp(@extschema@.try_cast_double(jwt.payload ->> 'nbf')),
      to_timestamp(@extschema@.try_cast_double(jwt.payload ->> 'exp'))
    ) @> current_timestamp as valid
  from (
    select
      convert_from(@extschema@.url_decode(r[1]), 'utf8')::json as header,
      convert_from(@extschema@.url_decode(r[2]), 'utf8')::json as payload,
      r[3] = @extschema@.algorithm_sign(r[1] || '.' || r[2], secret, algorithm) as signature_ok
    from regexp_split_to_array(token, '\.') r
  ) jwt
$$;
