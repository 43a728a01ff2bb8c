import type { Knex } from 'knex';

/**
 * Model prices and the cost of runs (DESIGN §18).
 *
 * - `model_prices`: what a model's tokens cost per million, input and output, in the one currency
 *   the operator chose. Keyed by the model name exactly as runs name it (case-sensitive).
 * - `runs.cost`: fixed when the run becomes final, at the prices of that moment, by the statement
 *   that makes it final (src/engine/run-store.ts); null when its model had no price.
 * - `usage_daily.cost` and `usage_daily.priced_runs`: the rollup (migration 009) carries the sum
 *   of its runs' known costs and how many runs had one, so the usage report can tell "no price
 *   known" (null) from "free" (0). The triggers keep their semantics: one upsert per inserting
 *   statement; one update per run whose status, usage or cost changes, by difference.
 * - `runs_created` carries `cost` too, so the usage window's partial days stay index-only scans.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('model_prices', (t) => {
    t.text('model').primary();
    t.decimal('input_per_million', null).notNullable();
    t.decimal('output_per_million', null).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table model_prices
    add constraint model_prices_input check (input_per_million >= 0 and input_per_million <= 1000000),
    add constraint model_prices_output check (output_per_million >= 0 and output_per_million <= 1000000)`);

  await knex.raw('alter table runs add column cost numeric');
  await knex.raw(`alter table usage_daily
    add column cost numeric not null default 0,
    add column priced_runs bigint not null default 0`);
  await rollupTriggers(knex, true);
  await knex.raw('drop index runs_created');
  await knex.raw(`create index runs_created on runs (created_at, id) include (user_id, status, mode, prompt_tokens, completion_tokens, reasoning_tokens, cost)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index runs_created');
  await knex.raw(`create index runs_created on runs (created_at, id) include (user_id, status, mode, prompt_tokens, completion_tokens, reasoning_tokens)`);
  await rollupTriggers(knex, false);
  await knex.raw('alter table usage_daily drop column priced_runs, drop column cost');
  await knex.raw('alter table runs drop column cost');
  await knex.schema.dropTable('model_prices');
}

const TOKEN_COUNTS = ['runs', 'succeeded', 'failed', 'cancelled', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens'];

/**
 * The rollup's trigger functions and update trigger as migration 009 made them, with (`withCost`)
 * or without the cost columns. The insert trigger itself is unchanged: it calls the function by name.
 */
export async function rollupTriggers(knex: Knex, withCost: boolean): Promise<void> {
  const counts = withCost ? [...TOKEN_COUNTS, 'cost', 'priced_runs'] : TOKEN_COUNTS;
  const costSums = withCost ? ', coalesce(sum(cost), 0), count(cost)' : '';
  await knex.raw(`
    create or replace function usage_daily_on_insert() returns trigger language plpgsql as $$
    begin
      insert into usage_daily as u (day, user_id, ${counts.join(', ')})
      select (created_at at time zone 'UTC')::date, user_id, count(*),
             count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed'),
             count(*) filter (where status = 'cancelled'),
             sum(prompt_tokens), sum(completion_tokens), sum(reasoning_tokens)${costSums}
        from inserted group by 1, 2
      on conflict (day, user_id) do update set ${counts.map((c) => `${c} = u.${c} + excluded.${c}`).join(', ')};
      return null;
    end $$`);
  const costDeltas = withCost
    ? `,
        cost = cost + coalesce(new.cost, 0) - coalesce(old.cost, 0),
        priced_runs = priced_runs + (new.cost is not null)::int - (old.cost is not null)::int`
    : '';
  await knex.raw(`
    create or replace function usage_daily_on_update() returns trigger language plpgsql as $$
    begin
      update usage_daily set
        succeeded = succeeded + (new.status = 'succeeded')::int - (old.status = 'succeeded')::int,
        failed = failed + (new.status = 'failed')::int - (old.status = 'failed')::int,
        cancelled = cancelled + (new.status = 'cancelled')::int - (old.status = 'cancelled')::int,
        prompt_tokens = prompt_tokens + new.prompt_tokens - old.prompt_tokens,
        completion_tokens = completion_tokens + new.completion_tokens - old.completion_tokens,
        reasoning_tokens = reasoning_tokens + new.reasoning_tokens - old.reasoning_tokens${costDeltas}
      where day = (new.created_at at time zone 'UTC')::date and user_id = new.user_id;
      return null;
    end $$`);
  // Only the update trigger's column list and condition change; the insert trigger stays as it is.
  await knex.raw('drop trigger runs_usage_update on runs');
  const columns = withCost ? 'status, usage, cost' : 'status, usage';
  const costChanged = withCost ? ' or old.cost is distinct from new.cost' : '';
  await knex.raw(`create trigger runs_usage_update after update of ${columns} on runs for each row
    when (old.status is distinct from new.status or old.usage is distinct from new.usage${costChanged})
    execute function usage_daily_on_update()`);
}
