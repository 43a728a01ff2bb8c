import type { Knex } from 'knex';

/**
 * Connectors (DESIGN §8): remote MCP tool servers a user's agents may call. Header values are sealed (src/crypto/sealed.ts)
 * and kept per name in `secret_headers`; `tool_prefix` is the name as it prefixes tool names, unique per user so two
 * connectors of one agent never offer the same tool name. Agents list theirs in `connector_ids`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('connectors', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('tool_prefix').notNullable();
    t.text('kind').notNullable().defaultTo('mcp');
    t.text('url').notNullable();
    t.text('transport').notNullable().defaultTo('streamable_http');
    t.text('description').notNullable().defaultTo('');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.jsonb('secret_headers').notNullable().defaultTo('{}');
    t.text('status').notNullable().defaultTo('unknown');
    t.text('last_error');
    t.timestamp('last_checked_at', { useTz: true });
    t.jsonb('tools').notNullable().defaultTo('[]');
    t.timestamps(true, true);
    t.index(['user_id', 'created_at']);
    t.check(`kind in ('mcp')`, [], 'connectors_kind_check');
    t.check(`transport in ('streamable_http', 'sse')`, [], 'connectors_transport_check');
    t.check(`status in ('unknown', 'ok', 'error')`, [], 'connectors_status_check');
  });
  await knex.raw('create unique index connectors_user_prefix_unique on connectors (user_id, lower(tool_prefix))');
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('connector_ids').notNullable().defaultTo('[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => t.dropColumn('connector_ids'));
  await knex.schema.dropTable('connectors');
}
