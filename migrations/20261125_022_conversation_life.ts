import type { Knex } from 'knex';

/**
 * The life of conversations (DESIGN §20).
 *
 * - `conversations.metadata`: a flat object of at most 16 string pairs (as OpenAI's), `{}` when
 *   none. `GET /api/conversations?metadata[k]=v` filters with `metadata @> {...}` next to
 *   `user_id = ?`: the GIN index (jsonb_path_ops: containment only, the smallest) lets the planner
 *   AND it with the user's (user_id, updated_at) index, so a filter never reads other users' rows.
 * - `conversations (updated_at)`: the retention job finds conversations idle for
 *   CONVERSATION_RETENTION_DAYS oldest first, in bounded batches, without scanning the table.
 * - A deleted conversation's runs stay for usage, without content: `runs.query` may be null, and
 *   `runs.conversation_id` keeps the id of a conversation that is gone (no foreign key, as
 *   schedules keep theirs: a cascade would delete the runs, SET NULL would lose which
 *   conversation they belonged to). Messages still cascade with their conversation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conversations', (t) => {
    t.jsonb('metadata').notNullable().defaultTo('{}');
  });
  await knex.raw('create index conversations_metadata on conversations using gin (metadata jsonb_path_ops)');
  await knex.raw('create index conversations_updated on conversations (updated_at, id)');
  await knex.schema.alterTable('runs', (t) => {
    t.dropForeign(['conversation_id']);
  });
  await knex.raw('alter table runs alter column query drop not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update runs set query = '' where query is null`);
  await knex.raw('alter table runs alter column query set not null');
  // Runs of conversations deleted meanwhile keep their rows: the key is restored for new rows only.
  await knex.raw('alter table runs add constraint runs_conversation_id_foreign foreign key (conversation_id) references conversations (id) on delete cascade not valid');
  await knex.raw('drop index conversations_updated');
  await knex.raw('drop index conversations_metadata');
  await knex.schema.alterTable('conversations', (t) => {
    t.dropColumn('metadata');
  });
}
