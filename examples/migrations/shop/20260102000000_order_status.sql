-- Orders move from pending to paid or refunded.
alter table public.orders
  add column status text not null default 'pending'
  check (status in ('pending', 'paid', 'refunded'));
