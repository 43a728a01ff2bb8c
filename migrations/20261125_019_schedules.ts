import type { Knex } from 'knex';

/**
 * Schedules (DESIGN §19): runs that start themselves, on a cron or every N seconds. Redis (BullMQ's
 * job schedulers) holds the timers; this table is the record and what a lost Redis is rebuilt from.
 *
 * `agent_id` and `conversation_id` have no foreign key on purpose: a key would either delete the
 * schedule or null the reference when the agent or conversation goes, and a schedule whose agent
 * was nulled would quietly run without it. Kept as they were, a tick finds them gone and disables
 * the schedule. `last_tick_at` is the planned instant of the last tick a worker took: a tick is
 * taken once (a worker that takes an older or the same instant again does nothing).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('schedules', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.uuid('agent_id');
    t.text('mode').notNullable();
    t.text('q').notNullable();
    t.text('cron');
    t.integer('every_seconds');
    t.text('timezone').notNullable().defaultTo('UTC');
    t.uuid('conversation_id');
    t.text('user_metadata');
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('next_run_at', { useTz: true });
    t.timestamp('last_run_at', { useTz: true });
    t.uuid('last_run_id').references('runs.id').onDelete('SET NULL');
    t.timestamp('last_tick_at', { useTz: true });
    t.integer('skipped_runs').notNullable().defaultTo(0);
    t.text('last_skip_reason');
    t.timestamps(true, true);
    t.check(`mode in ('react', 'dag')`, [], 'schedules_mode_check');
    t.check('(cron is null) <> (every_seconds is null)', [], 'schedules_one_timing_check');
  });
  await knex.raw('create index schedules_user_created on schedules (user_id, created_at desc)');
  // Deleting an agent disables its schedules (DESIGN §20).
  await knex.raw('create index schedules_agent on schedules (agent_id) where agent_id is not null');
  await knex.schema.alterTable('runs', (t) => {
    t.uuid('schedule_id').references('schedules.id').onDelete('SET NULL');
  });
  // GET /api/schedules/{id}/runs, newest first; partial, so the runs that no schedule started cost it nothing.
  await knex.raw('create index runs_schedule_created on runs (schedule_id, created_at desc) where schedule_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('schedule_id');
  });
  await knex.schema.dropTable('schedules');
}
