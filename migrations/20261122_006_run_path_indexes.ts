import type { Knex } from 'knex';

/**
 * Every query on the run, inject, event and auth paths is bounded by the run, conversation or
 * user it serves: a run's messages by run_id, a user's runs by status, and the foreign keys that
 * cascades (SET NULL / DELETE) walk when an agent, run or user goes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => t.index(['run_id']));
  await knex.schema.alterTable('runs', (t) => {
    t.index(['user_id', 'status']);
    t.index(['agent_id']);
  });
  await knex.schema.alterTable('conversations', (t) => t.index(['agent_id']));
  await knex.schema.alterTable('refresh_tokens', (t) => t.index(['user_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refresh_tokens', (t) => t.dropIndex(['user_id']));
  await knex.schema.alterTable('conversations', (t) => t.dropIndex(['agent_id']));
  await knex.schema.alterTable('runs', (t) => {
    t.dropIndex(['agent_id']);
    t.dropIndex(['user_id', 'status']);
  });
  await knex.schema.alterTable('messages', (t) => t.dropIndex(['run_id']));
}
