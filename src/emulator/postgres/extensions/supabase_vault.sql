-- supabase_vault, as the emulator stands it in: the same tables, view and functions; the secret is
-- encrypted with pgcrypto under a key of this database (the platform's uses its own key service).
create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text,
  description text not null default '',
  secret text not null,
  key_id uuid,
  nonce bytea default @extschema:pgcrypto@.gen_random_bytes(16),
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create unique index secrets_name_idx on vault.secrets (name) where name is not null;
comment on table vault.secrets is 'Table with encrypted `secret` column for storing sensitive information on disk.';

create table vault.emulator_key (key text not null);
insert into vault.emulator_key (key) values (encode(@extschema:pgcrypto@.gen_random_bytes(32), 'hex'));
revoke all on vault.emulator_key from public;

create function vault._encrypt(plaintext text) returns text language sql security definer
set search_path = '' as $$
  select encode(@extschema:pgcrypto@.pgp_sym_encrypt(plaintext, (select key from vault.emulator_key)), 'base64')
$$;

create function vault._decrypt(ciphertext text) returns text language sql stable security definer
set search_path = '' as $$
  select @extschema:pgcrypto@.pgp_sym_decrypt(decode(ciphertext, 'base64'), (select key from vault.emulator_key))
$$;

create view vault.decrypted_secrets as
  select s.id, s.name, s.description, s.secret, vault._decrypt(s.secret) as decrypted_secret,
         s.key_id, s.nonce, s.created_at, s.updated_at
    from vault.secrets s;

create function vault.create_secret(
  new_secret text, new_name text default null, new_description text default '', new_key_id uuid default null
) returns uuid language plpgsql security definer set search_path = '' as $$
declare
  rec record;
begin
  insert into vault.secrets (secret, name, description, key_id)
  values (vault._encrypt(new_secret), new_name, coalesce(new_description, ''), new_key_id)
  returning * into rec;
  return rec.id;
end
$$;

create function vault.update_secret(
  secret_id uuid, new_secret text default null, new_name text default null,
  new_description text default null, new_key_id uuid default null
) returns void language plpgsql security definer set search_path = '' as $$
begin
  update vault.secrets s
     set secret = coalesce(vault._encrypt(new_secret), s.secret),
         name = coalesce(new_name, s.name),
         description = coalesce(new_description, s.description),
         key_id = coalesce(new_key_id, s.key_id),
         updated_at = now()
   where s.id = secret_id;
end
$$;

revoke all on vault.secrets, vault.decrypted_secrets from public;
revoke all on function vault._encrypt(text), vault._decrypt(text) from public;
revoke all on function vault.create_secret(text, text, text, uuid), vault.update_secret(uuid, text, text, text, uuid) from public;
grant usage on schema vault to postgres, service_role;
grant select, delete on vault.secrets, vault.decrypted_secrets to postgres, service_role;
grant execute on function vault.create_secret(text, text, text, uuid), vault.update_secret(uuid, text, text, text, uuid) to postgres, service_role;
