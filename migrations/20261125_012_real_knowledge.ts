import type { Knex } from 'knex';

/**
 * Knowledge that is real (DESIGN §14). Embeddings move out of `kb_chunks` into `kb_vectors`, one
 * row per chunk and *generation*: a knowledge base answers from its active generation while a new
 * embedding model fills the next one, then switches with one update. Vectors are `real[]` on every
 * server; where pgvector is installed, large knowledge bases get a partial HNSW index on
 * `embedding::vector(n)` of their own (created by the worker), and the rest is an exact scan.
 * The home-made IVF cells and the `cube` column (≤ 100 dimensions) go.
 */
export async function up(knex: Knex): Promise<void> {
  await createVectorExtensionIfAvailable(knex);
  await knex.raw(
    `create function kb_dot(a real[], b real[]) returns double precision language sql immutable strict parallel safe
     as 'select sum(x::double precision * y) from unnest(a, b) as t(x, y)'`,
  );
  await knex.schema.alterTable('knowledge_bases', (t) => {
    t.text('embedding_model').notNullable().defaultTo('local');
    t.integer('embedding_dimensions').notNullable().defaultTo(96);
    t.text('rerank_model');
    t.integer('vector_generation').notNullable().defaultTo(1);
    // The generation being filled by a re-embedding, with the model it is filled with.
    t.integer('pending_generation');
    t.text('pending_model');
    t.integer('pending_dimensions');
    t.integer('indexing_done');
    t.integer('indexing_total');
    // Why the last re-embedding stopped (the knowledge base kept its previous vectors).
    t.text('error');
  });
  await knex.raw('alter table knowledge_bases drop constraint kb_status_check');
  await knex.raw(`alter table knowledge_bases add constraint kb_status_check check (status in ('ready', 'processing', 'indexing'))`);

  await knex.schema.createTable('kb_vectors', (t) => {
    t.uuid('knowledge_base_id').notNullable().references('knowledge_bases.id').onDelete('CASCADE');
    t.integer('generation').notNullable();
    t.bigInteger('chunk_id').notNullable().references('kb_chunks.id').onDelete('CASCADE');
    t.specificType('embedding', 'real[]').notNullable();
    t.primary(['knowledge_base_id', 'generation', 'chunk_id']);
  });
  // Deleting a document cascades from its chunks: that lookup needs its own index.
  await knex.raw('create index kb_vectors_chunk on kb_vectors (chunk_id)');
  await knex.raw(
    `insert into kb_vectors (knowledge_base_id, generation, chunk_id, embedding)
     select knowledge_base_id, 1, id, string_to_array(btrim(embedding::text, '()'), ',')::real[] from kb_chunks`,
  );
  await knex.schema.alterTable('kb_chunks', (t) => {
    t.integer('page');
    t.dropIndex(['knowledge_base_id', 'cell']);
    t.dropColumn('cell');
    t.dropColumn('embedding');
    t.index(['knowledge_base_id', 'id']);
  });
  await knex.schema.dropTable('kb_centroids');
  await knex.schema.alterTable('knowledge_bases', (t) => t.dropColumn('ann_trained_chunks'));

  await knex.schema.alterTable('messages', (t) => t.jsonb('citations'));
  await knex.schema.alterTable('runs', (t) => t.text('doc_mode'));
}

/**
 * pgvector where the server ships it (Heroku, RDS, Cloud SQL, Supabase, Neon). A server without
 * it, or a role that may not create it, keeps the exact search: the migration must not fail there.
 */
async function createVectorExtensionIfAvailable(knex: Knex): Promise<void> {
  const { rows } = await knex.raw(`select 1 from pg_available_extensions where name = 'vector'`);
  if (rows.length === 0) return;
  await knex.raw('savepoint pgvector');
  try {
    await knex.raw('create extension if not exists vector');
    await knex.raw('release savepoint pgvector');
  } catch {
    await knex.raw('rollback to savepoint pgvector');
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => t.dropColumn('doc_mode'));
  await knex.schema.alterTable('messages', (t) => t.dropColumn('citations'));
  await knex.schema.alterTable('knowledge_bases', (t) => t.integer('ann_trained_chunks').notNullable().defaultTo(0));
  await knex.schema.createTable('kb_centroids', (t) => {
    t.uuid('knowledge_base_id').notNullable().references('knowledge_bases.id').onDelete('CASCADE');
    t.integer('cell').notNullable();
    t.specificType('centroid', 'cube').notNullable();
    t.primary(['knowledge_base_id', 'cell']);
  });
  await knex.schema.alterTable('kb_chunks', (t) => {
    t.dropIndex(['knowledge_base_id', 'id']);
    t.dropColumn('page');
    t.specificType('embedding', 'cube');
    t.integer('cell');
    t.index(['knowledge_base_id', 'cell']);
  });
  // Only the local embedder's 96-dimension vectors fit a cube; other models' chunks need re-ingesting.
  await knex.raw(
    `update kb_chunks c set embedding = cube(v.embedding::float8[]) from kb_vectors v
     join knowledge_bases kb on kb.id = v.knowledge_base_id and kb.vector_generation = v.generation
     where v.chunk_id = c.id and array_length(v.embedding, 1) <= 100`,
  );
  await knex.raw(`delete from kb_chunks where embedding is null`);
  await knex.raw('alter table kb_chunks alter column embedding set not null');
  await knex.schema.dropTable('kb_vectors');
  await knex.raw('alter table knowledge_bases drop constraint kb_status_check');
  await knex.raw(`update knowledge_bases set status = 'ready' where status = 'indexing'`);
  await knex.raw(`alter table knowledge_bases add constraint kb_status_check check (status in ('ready', 'processing'))`);
  await knex.schema.alterTable('knowledge_bases', (t) => {
    for (const column of ['embedding_model', 'embedding_dimensions', 'rerank_model', 'vector_generation', 'pending_generation', 'pending_model', 'pending_dimensions', 'indexing_done', 'indexing_total', 'error']) t.dropColumn(column);
  });
  await knex.raw('drop function kb_dot(real[], real[])');
}
