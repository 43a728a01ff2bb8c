import type { Knex } from 'knex';

/**
 * The ecosystem's clients (DESIGN §16). A chat client sends the whole conversation, its own system
 * prompt included: messages keep role `system` for it (after the agent's instructions in the
 * transcript). A run keeps the sampling parameters the client asked for (temperature, top_p, …),
 * which its model calls apply where the agent allows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table messages drop constraint messages_role_check');
  await knex.raw(`alter table messages add constraint messages_role_check check (role in ('user', 'assistant', 'system'))`);
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('sampling');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('sampling');
  });
  await knex.raw(`delete from messages where role = 'system'`);
  await knex.raw('alter table messages drop constraint messages_role_check');
  await knex.raw(`alter table messages add constraint messages_role_check check (role in ('user', 'assistant'))`);
}
