import type { Knex } from 'knex';

/**
 * Agents that run on the model gateway: the wire format and generation options per agent.
 * Runs keep why their answer ended, so an end re-published after a crash says the same.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.text('api_format').notNullable().defaultTo('chat');
    t.text('reasoning_effort');
    t.integer('thinking_budget');
    t.integer('max_tokens');
    t.jsonb('gateway_tools').notNullable().defaultTo('[]');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.text('finish_reason');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => t.dropColumn('finish_reason'));
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumns('api_format', 'reasoning_effort', 'thinking_budget', 'max_tokens', 'gateway_tools');
  });
}
