import type { Knex } from 'knex';
import { rollupTriggers } from './20261125_017_model_prices.js';

/**
 * The usage rollup off the run path's critical section (issue 26). Migration 009 kept one
 * `usage_daily` row per (day, user), written by triggers in the statements that create, claim
 * and finish each run: every run of a user took that one row's lock three times, each held to its
 * statement's commit, so a user's concurrent runs queued behind each other in Postgres.
 *
 * - `slot`: the rollup is striped. Each writing backend adds its deltas to the row of its own slot
 *   (its pid modulo SLOTS; a backend runs one transaction at a time), so concurrent runs rarely
 *   share a row. Readers sum the slots: a (day, user) is now up to SLOTS rows, and a slot's
 *   counts may be negative (a run counted in one slot can end in another); only their sum means.
 * - The update trigger fires only when a count changes: a status change into or out of a counted
 *   outcome, or new usage or cost. Claiming a run (queued → running) or parking it no longer writes
 *   the rollup.
 */
const SLOTS = 16;
const COUNTS = ['runs', 'succeeded', 'failed', 'cancelled', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'cost', 'priced_runs'];
const COUNTED_STATUSES = `('succeeded', 'failed', 'cancelled')`;
const SLOT = `(pg_backend_pid() % ${SLOTS})::smallint`;
const addExcluded = COUNTS.map((c) => `${c} = u.${c} + excluded.${c}`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table usage_daily add column slot smallint not null default 0');
  await knex.raw('alter table usage_daily drop constraint usage_daily_pkey, add primary key (day, user_id, slot)');
  await knex.raw(`
    create or replace function usage_daily_on_insert() returns trigger language plpgsql as $$
    begin
      insert into usage_daily as u (day, user_id, slot, ${COUNTS.join(', ')})
      select (created_at at time zone 'UTC')::date, user_id, ${SLOT}, count(*),
             count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed'),
             count(*) filter (where status = 'cancelled'),
             sum(prompt_tokens), sum(completion_tokens), sum(reasoning_tokens), coalesce(sum(cost), 0), count(cost)
        from inserted group by 1, 2
      on conflict (day, user_id, slot) do update set ${addExcluded};
      return null;
    end $$`);
  await knex.raw(`
    create or replace function usage_daily_on_update() returns trigger language plpgsql as $$
    begin
      insert into usage_daily as u (day, user_id, slot, ${COUNTS.join(', ')})
      values ((new.created_at at time zone 'UTC')::date, new.user_id, ${SLOT}, 0,
        (new.status = 'succeeded')::int - (old.status = 'succeeded')::int,
        (new.status = 'failed')::int - (old.status = 'failed')::int,
        (new.status = 'cancelled')::int - (old.status = 'cancelled')::int,
        new.prompt_tokens - old.prompt_tokens,
        new.completion_tokens - old.completion_tokens,
        new.reasoning_tokens - old.reasoning_tokens,
        coalesce(new.cost, 0) - coalesce(old.cost, 0),
        (new.cost is not null)::int - (old.cost is not null)::int)
      on conflict (day, user_id, slot) do update set ${addExcluded};
      return null;
    end $$`);
  await knex.raw('drop trigger runs_usage_update on runs');
  await knex.raw(`create trigger runs_usage_update after update of status, usage, cost on runs for each row
    when ((old.status is distinct from new.status and (old.status in ${COUNTED_STATUSES} or new.status in ${COUNTED_STATUSES}))
          or old.usage is distinct from new.usage or old.cost is distinct from new.cost)
    execute function usage_daily_on_update()`);
}

export async function down(knex: Knex): Promise<void> {
  // Back to one row per (day, user): the slots summed.
  await knex.raw(`create temporary table usage_daily_summed as
    select day, user_id, ${COUNTS.map((c) => `sum(${c}) as ${c}`).join(', ')} from usage_daily group by day, user_id`);
  await knex.raw('delete from usage_daily');
  await knex.raw('alter table usage_daily drop constraint usage_daily_pkey, drop column slot, add primary key (day, user_id)');
  await knex.raw(`insert into usage_daily (day, user_id, ${COUNTS.join(', ')}) select day, user_id, ${COUNTS.join(', ')} from usage_daily_summed`);
  await knex.raw('drop table usage_daily_summed');
  // The rollup's functions and update trigger as migration 017 left them.
  await rollupTriggers(knex, true);
}
