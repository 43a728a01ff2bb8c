import type { Knex } from 'knex';

/**
 * Knowledge bases, their documents (the uploaded bytes are kept, so ingestion can run again)
 * and chunks. Chunks carry a generated tsvector (keyword search, GIN) and an embedding as a
 * `cube` (contrib; exact nearest-neighbour `<->` in C; unit vectors, so Euclidean order = cosine order).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists cube');
  await knex.schema.createTable('knowledge_bases', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('chunk_strategy').notNullable();
    t.integer('chunk_size').notNullable();
    t.integer('chunk_overlap').notNullable();
    t.text('retrieval_mode').notNullable();
    t.integer('document_count').notNullable().defaultTo(0);
    t.integer('total_chunks').notNullable().defaultTo(0);
    // Chunk count when the ANN cells (kb_centroids) were last trained; 0 = never, exact scans only.
    t.integer('ann_trained_chunks').notNullable().defaultTo(0);
    t.text('status').notNullable().defaultTo('ready');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamps(true, true);
    t.index(['user_id', 'created_at']);
    t.check(`chunk_strategy in ('fixed', 'sentence', 'paragraph', 'recursive')`, [], 'kb_strategy_check');
    t.check(`retrieval_mode in ('keyword', 'semantic', 'hybrid')`, [], 'kb_mode_check');
    t.check(`status in ('ready', 'processing')`, [], 'kb_status_check');
    t.check(`chunk_overlap >= 0 and chunk_overlap < chunk_size`, [], 'kb_overlap_check');
  });

  await knex.schema.createTable('kb_documents', (t) => {
    t.uuid('id').primary();
    t.uuid('knowledge_base_id').notNullable().references('knowledge_bases.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('content_type').notNullable();
    t.integer('size_bytes').notNullable();
    t.text('content_hash').notNullable();
    t.binary('source').notNullable();
    t.text('status').notNullable().defaultTo('processing');
    t.text('error');
    t.integer('chunk_count').notNullable().defaultTo(0);
    t.timestamps(true, true);
    t.unique(['knowledge_base_id', 'content_hash']);
    t.index(['knowledge_base_id', 'created_at']);
    t.check(`status in ('processing', 'ready', 'failed')`, [], 'kb_documents_status_check');
  });

  await knex.schema.createTable('kb_chunks', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('knowledge_base_id').notNullable().references('knowledge_bases.id').onDelete('CASCADE');
    t.uuid('document_id').notNullable().references('kb_documents.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('content').notNullable();
    t.specificType('embedding', 'cube').notNullable();
    // The nearest centroid (IVF cell) once the knowledge base is large enough to have them.
    t.integer('cell');
    t.unique(['document_id', 'position']);
    t.index(['knowledge_base_id', 'cell']);
  });

  await knex.schema.createTable('kb_centroids', (t) => {
    t.uuid('knowledge_base_id').notNullable().references('knowledge_bases.id').onDelete('CASCADE');
    t.integer('cell').notNullable();
    t.specificType('centroid', 'cube').notNullable();
    t.primary(['knowledge_base_id', 'cell']);
  });
  await knex.raw(`alter table kb_chunks add column tsv tsvector generated always as (to_tsvector('english', content)) stored`);
  await knex.raw('create index kb_chunks_tsv on kb_chunks using gin (tsv)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('kb_centroids');
  await knex.schema.dropTable('kb_chunks');
  await knex.schema.dropTable('kb_documents');
  await knex.schema.dropTable('knowledge_bases');
}
