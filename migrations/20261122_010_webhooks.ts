import type { Knex } from 'knex';

/**
 * Webhooks and background runs (DESIGN §10). A delivery row is the outbox: written in the same
 * statement as the run's final state, so a finished run always gets its deliveries; its id is the
 * `webhook-id` every attempt carries. Signing secrets are sealed (they must be used again).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => t.text('user_metadata'));
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.jsonb('events').notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.text('secret_sealed').notNullable();
    // The secret a rotation replaced, still signed with until it expires, so receivers can switch over.
    t.text('previous_secret_sealed');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.text('disabled_reason');
    t.timestamps(true, true);
    t.index(['user_id', 'created_at']);
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.uuid('run_id').references('runs.id').onDelete('SET NULL');
    t.text('event').notNullable();
    t.jsonb('payload').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('next_attempt_at', { useTz: true });
    t.integer('redeliveries').notNullable().defaultTo(0);
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['endpoint_id', 'created_at']);
    t.index(['run_id']);
    t.check(`status in ('pending', 'delivered', 'failed')`, [], 'webhook_deliveries_status_check');
  });
  // The outbox sweep: pending deliveries overdue (a worker died before its attempt or before queueing the retry).
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries ((coalesce(next_attempt_at, created_at))) where status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_endpoints');
  await knex.schema.alterTable('runs', (t) => t.dropColumn('user_metadata'));
}
