-- moddatetime, as the emulator stands it in: a BEFORE UPDATE row trigger that sets the column its
-- argument names to the current time, as the contrib module does.
create function @extschema@.moddatetime() returns trigger language plpgsql as $$
begin
  if tg_when <> 'BEFORE' or tg_level <> 'ROW' or tg_op <> 'UPDATE' then
    raise exception 'moddatetime: must be fired before update, for each row';
  end if;
  if tg_nargs <> 1 then
    raise exception 'moddatetime (%): A single argument was expected', tg_name;
  end if;
  if not (to_jsonb(new) ? tg_argv[0]) then
    raise exception 'moddatetime (%): there is no attribute % in relation %', tg_name, tg_argv[0], tg_table_name;
  end if;
  new := jsonb_populate_record(new, jsonb_build_object(tg_argv[0], current_timestamp));
  return new;
end
$$;
