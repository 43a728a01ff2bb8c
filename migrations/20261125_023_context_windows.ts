import type { Knex } from 'knex';

/**
 * History longer than the model's window (DESIGN §20). `agents.context_window`: tokens per model
 * call (null: the model's default). `conversations.summary` / `summary_through`: the oldest turns,
 * compacted by the agent's model, and the last message they cover (later runs read only the
 * messages after it). `messages.tokens`: the message's o200k_base count, filled by the worker that
 * first reads or writes it, so a run does not tokenize the same history again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table agents add column context_window integer check (context_window between 1024 and 2000000)');
  await knex.raw('alter table conversations add column summary text, add column summary_through uuid');
  await knex.raw('alter table messages add column tokens integer');
  // Versions saved before the column existed read as the model's default, as the agent did.
  if (await knex.schema.hasTable('agent_versions')) {
    await knex.raw(`update agent_versions set config = config || '{"context_window": null}'::jsonb where config -> 'context_window' is null`);
  }
}

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasTable('agent_versions')) await knex.raw(`update agent_versions set config = config - 'context_window'`);
  await knex.raw('alter table messages drop column tokens');
  await knex.raw('alter table conversations drop column summary, drop column summary_through');
  await knex.raw('alter table agents drop column context_window');
}
