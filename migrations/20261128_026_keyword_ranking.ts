import type { Knex } from 'knex';

/**
 * Keyword search ranks by any term with BM25 (DESIGN §23). BM25 needs, per query term, how many
 * of the knowledge base's chunks hold it and how often each does. Reading that from every
 * matching chunk's tsvector costs a heap visit per chunk (hundreds of milliseconds when a common
 * word matches thousands of chunks), so `kb_terms` keeps it as postings: one row per chunk and
 * lexeme with its frequency and the chunk's length, keyed by (knowledge base, lexeme). A search
 * reads only its knowledge base's postings of its terms, from the index alone.
 *
 * Chunks are only ever inserted and deleted (ingestion replaces a document's chunks), so two
 * statement triggers keep the postings in step with `kb_chunks`, whoever writes it: ingestion,
 * a deleted document or knowledge base (cascades fire them too), benchmarks' bulk inserts.
 * `length(tsv)` (distinct lexemes) is a chunk's length; a lexeme's positions (at most 256 are
 * kept by Postgres) are its frequency. The same triggers keep each document's `term_total` (the
 * sum of its chunks' lengths), so the average chunk length is read from a knowledge base's
 * documents, not from its chunks.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table kb_terms (
      knowledge_base_id uuid not null,
      lexeme text not null,
      chunk_id bigint not null,
      tf integer not null,
      dl integer not null,
      primary key (knowledge_base_id, lexeme, chunk_id) include (tf, dl)
    )`);
  await knex.raw('alter table kb_documents add column term_total bigint not null default 0');
  await knex.raw(`
    create function kb_terms_sync() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        delete from kb_terms t using old_chunks o, unnest(o.tsv) u
        where t.knowledge_base_id = o.knowledge_base_id and t.lexeme = u.lexeme and t.chunk_id = o.id;
        update kb_documents d set term_total = d.term_total - s.total
        from (select document_id, sum(length(tsv)) as total from old_chunks group by document_id) s where d.id = s.document_id;
      else
        insert into kb_terms (knowledge_base_id, lexeme, chunk_id, tf, dl)
        select n.knowledge_base_id, u.lexeme, n.id, coalesce(array_length(u.positions, 1), 1), length(n.tsv)
        from new_chunks n, unnest(n.tsv) u;
        update kb_documents d set term_total = d.term_total + s.total
        from (select document_id, sum(length(tsv)) as total from new_chunks group by document_id) s where d.id = s.document_id;
      end if;
      return null;
    end $$`);
  await knex.raw('create trigger kb_chunks_terms_added after insert on kb_chunks referencing new table as new_chunks for each statement execute function kb_terms_sync()');
  await knex.raw('create trigger kb_chunks_terms_removed after delete on kb_chunks referencing old table as old_chunks for each statement execute function kb_terms_sync()');
  await knex.raw(`
    insert into kb_terms (knowledge_base_id, lexeme, chunk_id, tf, dl)
    select c.knowledge_base_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), length(c.tsv)
    from kb_chunks c, unnest(c.tsv) u`);
  await knex.raw(`
    update kb_documents d set term_total = s.total
    from (select document_id, sum(length(tsv)) as total from kb_chunks group by document_id) s where d.id = s.document_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger kb_chunks_terms_added on kb_chunks');
  await knex.raw('drop trigger kb_chunks_terms_removed on kb_chunks');
  await knex.raw('drop function kb_terms_sync()');
  await knex.raw('drop table kb_terms');
  await knex.raw('alter table kb_documents drop column term_total');
}
