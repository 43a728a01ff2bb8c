import type { Knex } from 'knex';

/**
 * Keyword search ranks by any term (DESIGN §23): each probe of the chunks is one knowledge base's
 * chunks holding one term. A GIN index over (knowledge_base_id, tsv) answers that from the index
 * alone, so another user's chunks with the same word are never read; it replaces the tsv-only
 * index (a multi-column GIN index serves tsv-only queries too). It needs `btree_gin` (a trusted
 * contrib extension since Postgres 13); where the server lacks it, the tsv index stays and the
 * knowledge base filter is applied to its matches.
 */
export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw(`select 1 from pg_available_extensions where name = 'btree_gin'`);
  if (rows.length === 0) return;
  await knex.raw('create extension if not exists btree_gin');
  await knex.raw('create index if not exists kb_chunks_kb_tsv on kb_chunks using gin (knowledge_base_id, tsv)');
  await knex.raw('drop index if exists kb_chunks_tsv');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists kb_chunks_tsv on kb_chunks using gin (tsv)');
  await knex.raw('drop index if exists kb_chunks_kb_tsv');
}
