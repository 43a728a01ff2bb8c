import type { Knex } from 'knex';

/**
 * Administration (DESIGN §9): users can be disabled; the audit log records who did what; the
 * admin run and usage queries stay fast at scale.
 *
 * - `users.is_active`: a disabled user's credentials are refused everywhere.
 * - `audit_log`: append-only. A trigger refuses UPDATE, DELETE and TRUNCATE, so no code path
 *   (and no mistaken SQL) can rewrite history. `actor_user_id`/`target_id` carry no foreign key:
 *   an entry outlives the user it names. Newest first is `id` order (identity, insert order).
 * - Runs across users: by time (the admin list, the usage window's partial days) and by status
 *   then time. The time index covers what the list filters and the usage sums read (token counts
 *   are generated columns), so those are index-only scans, never reads of answers or checkpoints.
 * - `usage_daily`: runs, outcomes and tokens per (UTC day of creation, user), kept by triggers on
 *   `runs` (one upsert per inserting statement; one update when a run's status or usage changes,
 *   never on checkpoint writes). GET /api/admin/usage sums whole days here and only the two partial
 *   days at the window's edges from `runs`, so its cost follows users × days, not runs. Rows go
 *   with their user.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('is_active').notNullable().defaultTo(true);
  });
  await knex.raw(`create index users_active_admins on users (id) where role = 'admin' and is_active`);

  await knex.schema.createTable('audit_log', (t) => {
    t.specificType('id', 'bigint generated always as identity').primary();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.raw('clock_timestamp()'));
    t.uuid('actor_user_id');
    t.text('credential');
    t.text('action').notNullable();
    t.text('target_type');
    t.text('target_id');
    t.text('ip');
    t.text('request_id');
    t.jsonb('details').notNullable().defaultTo('{}');
  });
  await knex.raw('create index audit_log_at on audit_log (at)');
  await knex.raw('create index audit_log_actor on audit_log (actor_user_id, id)');
  await knex.raw('create index audit_log_target on audit_log (target_id, id)');
  await knex.raw('create index audit_log_action on audit_log (action, id)');
  await knex.raw(`
    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
    end
    $$`);
  await knex.raw(`create trigger audit_log_no_change before update or delete on audit_log for each row execute function audit_log_append_only()`);
  await knex.raw(`create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_append_only()`);

  // Token counts as columns (computed by Postgres from `usage`), so an index can carry them.
  const tokens = (name: string) =>
    `bigint generated always as (case when jsonb_typeof(usage->'${name}') = 'number'
       then trunc(least(greatest((usage->>'${name}')::numeric, 0), 9e18))::bigint else 0 end) stored`;
  await knex.raw(`alter table runs
    add column prompt_tokens ${tokens('prompt_tokens')},
    add column completion_tokens ${tokens('completion_tokens')},
    add column reasoning_tokens ${tokens('reasoning_tokens')}`);
  await knex.raw(`create index runs_created on runs (created_at, id) include (user_id, status, mode, prompt_tokens, completion_tokens, reasoning_tokens)`);
  await knex.raw('create index runs_status_created on runs (status, created_at)');
  await createUsageRollup(knex);
}

const COUNTS = ['runs', 'succeeded', 'failed', 'cancelled', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens'];

/** One usage_daily row per (day, user) of the runs in `source`, columns in COUNTS order. */
const rollupOf = (source: string) => `
  select (created_at at time zone 'UTC')::date, user_id, count(*),
         count(*) filter (where status = 'succeeded'), count(*) filter (where status = 'failed'),
         count(*) filter (where status = 'cancelled'),
         sum(prompt_tokens), sum(completion_tokens), sum(reasoning_tokens)
    from ${source} group by 1, 2`;

async function createUsageRollup(knex: Knex): Promise<void> {
  await knex.schema.createTable('usage_daily', (t) => {
    t.date('day').notNullable();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    for (const count of COUNTS) t.bigInteger(count).notNullable().defaultTo(0);
    t.primary(['day', 'user_id']);
    t.index(['user_id', 'day']);
  });
  await knex.raw(`
    create function usage_daily_on_insert() returns trigger language plpgsql as $$
    begin
      insert into usage_daily as u (day, user_id, ${COUNTS.join(', ')})
      ${rollupOf('inserted')}
      on conflict (day, user_id) do update set ${COUNTS.map((c) => `${c} = u.${c} + excluded.${c}`).join(', ')};
      return null;
    end $$`);
  await knex.raw(`
    create function usage_daily_on_update() returns trigger language plpgsql as $$
    begin
      update usage_daily set
        succeeded = succeeded + (new.status = 'succeeded')::int - (old.status = 'succeeded')::int,
        failed = failed + (new.status = 'failed')::int - (old.status = 'failed')::int,
        cancelled = cancelled + (new.status = 'cancelled')::int - (old.status = 'cancelled')::int,
        prompt_tokens = prompt_tokens + new.prompt_tokens - old.prompt_tokens,
        completion_tokens = completion_tokens + new.completion_tokens - old.completion_tokens,
        reasoning_tokens = reasoning_tokens + new.reasoning_tokens - old.reasoning_tokens
      where day = (new.created_at at time zone 'UTC')::date and user_id = new.user_id;
      return null;
    end $$`);
  await knex.raw(`create trigger runs_usage_insert after insert on runs referencing new table as inserted
    for each statement execute function usage_daily_on_insert()`);
  await knex.raw(`create trigger runs_usage_update after update of status, usage on runs for each row
    when (old.status is distinct from new.status or old.usage is distinct from new.usage)
    execute function usage_daily_on_update()`);
  // Runs stored before this migration.
  await knex.raw(`
    insert into usage_daily (day, user_id, ${COUNTS.join(', ')})
    ${rollupOf('runs')}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger runs_usage_update on runs');
  await knex.raw('drop trigger runs_usage_insert on runs');
  await knex.raw('drop function usage_daily_on_update(), usage_daily_on_insert()');
  await knex.schema.dropTable('usage_daily');
  await knex.raw('drop index runs_status_created');
  await knex.raw('drop index runs_created');
  await knex.raw('alter table runs drop column prompt_tokens, drop column completion_tokens, drop column reasoning_tokens');
  await knex.schema.dropTable('audit_log');
  await knex.raw('drop function audit_log_append_only()');
  await knex.raw('drop index users_active_admins');
  await knex.schema.alterTable('users', (t) => t.dropColumn('is_active'));
}
