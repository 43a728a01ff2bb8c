import type { Knex } from 'knex';

/**
 * Keyword search (DESIGN §23): the chunks that contain any of the query's terms, ranked by BM25.
 *
 * Terms are the query's lexemes under Postgres' `english` configuration (stemmed, stop words
 * dropped), so "What is the refund period?" looks for `refund` or `period`. Each term weighs its
 * inverse document frequency over the searched knowledge bases' chunks; its frequency in a chunk
 * saturates (k1) and is normalised by the chunk's length against the average (b).
 *
 * Everything is read from `kb_terms` (migration 026: postings per knowledge base and lexeme,
 * with frequencies and chunk lengths, kept by triggers) and the knowledge bases' documents: one
 * index range per knowledge base and term, never another knowledge base's rows, never a chunk.
 * The lexemes are compared as values, so `&`, `|`, `!`, `:*` and quotes in a question are text.
 */
export interface KeywordHit {
  id: string;
  score: number;
}

export interface KeywordOptions {
  /** Only chunks holding at least half of the query's terms (grounded runs: a hit must be about the question). */
  mostTerms?: boolean;
}

/** BM25's usual constants (Robertson; Lucene's defaults). */
const K1 = 1.2;
const B = 0.75;
/** A question has a few terms; a pasted page must not become hundreds of index probes. */
export const MAX_QUERY_TERMS = 32;
/** The query text read for terms: the retrieve route allows 2,000 characters; agents' tool calls are cut here too. */
const MAX_QUERY_CHARS = 4000;

const SQL = `
with searched as (select distinct unnest(cast(:kbs as uuid[])) as id),
terms as materialized (
  select t.lexeme from unnest(to_tsvector('english', :query)) t limit :maxTerms
),
postings as materialized (
  select p.chunk_id, p.lexeme, p.tf, p.dl
  from searched b cross join terms t
  join kb_terms p on p.knowledge_base_id = b.id and p.lexeme = t.lexeme
),
corpus as (
  select greatest(1, coalesce(sum(d.chunk_count), 0))::float8 as n,
         greatest(1, coalesce(sum(d.term_total), 0))::float8 / greatest(1, coalesce(sum(d.chunk_count), 0)) as avgdl
  from searched b join kb_documents d on d.knowledge_base_id = b.id
),
weights as (
  select p.lexeme, ln(1 + (greatest(k.n, count(*)) - count(*) + 0.5) / (count(*) + 0.5)) as idf
  from postings p cross join corpus k
  group by p.lexeme, k.n
),
scored as (
  select p.chunk_id, sum(w.idf * p.tf * (${K1} + 1) / (p.tf + ${K1} * (1 - ${B} + ${B} * p.dl / k.avgdl))) as score, count(*) as matched
  from postings p join weights w on w.lexeme = p.lexeme cross join corpus k
  group by p.chunk_id
)
select s.chunk_id::text as id, s.score
from scored s
where not :mostTerms or s.matched * 2 >= (select count(*) from terms)
order by s.score desc, s.chunk_id
limit :limit`;

export async function keywordSearch(knex: Knex, knowledgeBaseIds: string[], query: string, limit: number, options: KeywordOptions = {}): Promise<KeywordHit[]> {
  if (knowledgeBaseIds.length === 0) return [];
  const { rows } = await knex.raw(SQL, {
    kbs: knowledgeBaseIds,
    // Postgres text cannot hold NUL: a question carrying one is still searched, without it.
    query: query.slice(0, MAX_QUERY_CHARS).replaceAll('\u0000', ' '),
    maxTerms: MAX_QUERY_TERMS,
    mostTerms: options.mostTerms === true,
    limit,
  });
  return rows.map((row: { id: string; score: string | number }) => ({ id: row.id, score: Number(row.score) }));
}
