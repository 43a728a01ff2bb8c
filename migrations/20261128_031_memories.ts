import type { Knex } from 'knex';

/**
 * Memory (DESIGN §25): what agents remember about their user across conversations. A memory
 * belongs to a user, in a namespace (an agent's id, or `user` for all of the user's agents), with
 * its vector by the deployment's memory embedding model (`real[]` on every server; where pgvector
 * is installed, the worker builds an HNSW index per dimension, and the rest is an exact search of
 * the user's own memories). `memory_counts` holds each user's count, so MEMORIES_PER_USER is kept
 * by one conditional upsert under racing writers, without counting rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('memories', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('namespace').notNullable();
    t.text('content').notNullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('embedding_model').notNullable();
    t.integer('dimensions').notNullable();
    t.specificType('embedding', 'real[]').notNullable();
    t.timestamps(true, true);
  });
  // Every read is one user's: by namespace (or all), newest first, and the exact search's scan.
  await knex.raw('create index memories_user_namespace on memories (user_id, namespace, created_at desc, id)');
  await knex.raw('create index memories_user_created on memories (user_id, created_at desc, id)');
  await knex.schema.createTable('memory_counts', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.integer('count').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('agents', (t) => {
    t.boolean('memory').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => t.dropColumn('memory'));
  await knex.schema.dropTable('memory_counts');
  await knex.schema.dropTable('memories');
}
