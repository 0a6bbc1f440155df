-- pg_cron, as the emulator stands it in: jobs are recorded in cron.job (schedule, change and
-- remove them as with pg_cron); the emulator never runs them, so cron.job_run_details stays empty.
create schema cron;

create table cron.job (
  jobid bigserial primary key,
  schedule text not null,
  command text not null,
  nodename text not null default 'localhost',
  nodeport integer not null default 5432,
  database text not null default current_database(),
  username text not null default current_user,
  active boolean not null default true,
  jobname text,
  unique (jobname, username)
);

create table cron.job_run_details (
  jobid bigint,
  runid bigserial primary key,
  job_pid integer,
  database text,
  username text,
  command text,
  status text,
  return_message text,
  start_time timestamptz,
  end_time timestamptz
);

-- A schedule pg_cron accepts: five cron fields, `N seconds` (1 to 59), or `@yearly` and the like.
create function cron._check_schedule(schedule text) returns text language plpgsql immutable as $$
begin
  if schedule ~ '^\s*[1-5]?[0-9]\s+seconds?\s*$' and (regexp_match(schedule, '[0-9]+'))[1]::int between 1 and 59 then
    return schedule;
  end if;
  if schedule ~ '^\s*@(yearly|annually|monthly|weekly|daily|hourly|reboot)\s*$' then
    return schedule;
  end if;
  if schedule ~ '^\s*[0-9*,/\-]+\s+[0-9*,/\-]+\s+([0-9*,/\-]+|\$)\s+[0-9a-zA-Z*,/\-]+\s+[0-9a-zA-Z*,/\-]+\s*$' then
    return schedule;
  end if;
  raise exception 'invalid schedule: %', schedule using hint = 'Use cron format (e.g. 5 4 * * *), or interval format ''[1-59] seconds''';
end
$$;

create function cron.schedule(schedule text, command text) returns bigint language sql as $$
  insert into cron.job (schedule, command) values (cron._check_schedule(schedule), command) returning jobid
$$;

create function cron.schedule(job_name text, schedule text, command text) returns bigint language sql as $$
  insert into cron.job (jobname, schedule, command) values (job_name, cron._check_schedule(schedule), command)
  on conflict (jobname, username) do update set schedule = excluded.schedule, command = excluded.command
  returning jobid
$$;

create function cron.schedule_in_database(
  job_name text, schedule text, command text, database text, username text default null, active boolean default true
) returns bigint language sql as $$
  insert into cron.job (jobname, schedule, command, database, username, active)
  values (job_name, cron._check_schedule(schedule), command, database, coalesce(username, current_user), active)
  on conflict (jobname, username) do update
    set schedule = excluded.schedule, command = excluded.command, database = excluded.database, active = excluded.active
  returning jobid
$$;

create function cron.unschedule(job_id bigint) returns boolean language plpgsql as $$
begin
  delete from cron.job where jobid = job_id;
  if not found then
    raise exception 'could not find valid entry for job %', job_id;
  end if;
  return true;
end
$$;

create function cron.unschedule(job_name text) returns boolean language plpgsql as $$
begin
  delete from cron.job where jobname = job_name and username = current_user;
  if not found then
    raise exception 'could not find valid entry for job ''%''', job_name;
  end if;
  return true;
end
$$;

create function cron.alter_job(
  job_id bigint, schedule text default null, command text default null, database text default null,
  username text default null, active boolean default null
) returns void language plpgsql as $$
begin
  update cron.job j
     set schedule = coalesce(cron._check_schedule(alter_job.schedule), j.schedule),
         command = coalesce(alter_job.command, j.command),
         database = coalesce(alter_job.database, j.database),
         username = coalesce(alter_job.username, j.username),
         active = coalesce(alter_job.active, j.active)
   where j.jobid = job_id;
  if not found then
    raise exception 'could not find valid entry for job %', job_id;
  end if;
end
$$;

grant usage on schema cron to postgres;
grant all on all tables in schema cron to postgres;
grant all on all sequences in schema cron to postgres;
