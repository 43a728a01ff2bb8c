import type { Knex } from 'knex';

/**
 * DESIGN §28: the `remember` tool writes one memory per tool call. A memory a run's tool call wrote
 * carries the call's key (run id and call id); an attempt that repeats the call after a crash finds
 * it there instead of writing another. Memories written through the API carry none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('memories', (t) => {
    t.text('tool_call_key');
  });
  await knex.raw('create unique index memories_tool_call on memories (user_id, tool_call_key) where tool_call_key is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index memories_tool_call');
  await knex.schema.alterTable('memories', (t) => t.dropColumn('tool_call_key'));
}
