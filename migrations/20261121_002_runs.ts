import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('instructions').notNullable().defaultTo('');
    t.text('model').notNullable().defaultTo('local');
    t.jsonb('tools').notNullable().defaultTo(JSON.stringify(['calculator', 'current_time']));
    t.integer('max_iterations').notNullable().defaultTo(8);
    t.jsonb('knowledge_base_ids').notNullable().defaultTo('[]');
    t.timestamps(true, true);
    t.index(['user_id', 'created_at']);
  });

  await knex.schema.createTable('conversations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('agent_id').references('agents.id').onDelete('SET NULL');
    t.text('title').notNullable().defaultTo('');
    t.timestamps(true, true);
    t.index(['user_id', 'updated_at']);
  });

  await knex.schema.createTable('runs', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('conversation_id').notNullable().references('conversations.id').onDelete('CASCADE');
    t.uuid('agent_id').references('agents.id').onDelete('SET NULL');
    t.text('mode').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.text('query').notNullable();
    t.text('answer');
    t.jsonb('error');
    t.jsonb('usage');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['conversation_id', 'created_at']);
    t.check(`mode in ('react', 'dag')`, [], 'runs_mode_check');
    t.check(`status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`, [], 'runs_status_check');
  });

  await knex.schema.createTable('messages', (t) => {
    t.uuid('id').primary();
    // Strict order within a conversation, independent of clock ties.
    t.specificType('seq', 'bigint generated always as identity').notNullable().unique();
    t.uuid('conversation_id').notNullable().references('conversations.id').onDelete('CASCADE');
    t.uuid('run_id').references('runs.id').onDelete('SET NULL');
    t.text('role').notNullable();
    t.text('content').notNullable();
    t.boolean('injected').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['conversation_id', 'seq']);
    t.check(`role in ('user', 'assistant')`, [], 'messages_role_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('messages');
  await knex.schema.dropTable('runs');
  await knex.schema.dropTable('conversations');
  await knex.schema.dropTable('agents');
}
