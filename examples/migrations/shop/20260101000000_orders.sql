-- The orders the checkout webhook records.
create table public.orders (
  id bigint generated always as identity primary key,
  customer_email text not null,
  total_cents integer not null check (total_cents >= 0),
  created_at timestamptz not null default now()
);

create index orders_created_at_idx on public.orders (created_at);
