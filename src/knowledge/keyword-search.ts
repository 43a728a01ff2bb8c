import type { Knex } from 'knex';

/**
 * Keyword search (DESIGN §23): the chunks that contain any of the query's terms, ranked by BM25.
 *
 * Terms are the query's lexemes under Postgres' `english` configuration (stemmed, stop words
 * dropped), so "What is the refund period?" looks for `refund` or `period`. Each term weighs its
 * inverse document frequency over the searched knowledge bases' chunks; its frequency in a chunk
 * saturates (k1) and is normalised by the chunk's length against the average (b).
 *
 * Every probe of the chunks is one knowledge base's (an equality per id, which the
 * (knowledge_base_id, tsv) GIN index of migration 026 answers without visiting other knowledge
 * bases' rows); without btree_gin the tsv GIN index and the knowledge base filter still bound it.
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
/** The average chunk length is estimated from this many chunks, so its cost does not grow with the knowledge base. */
const LENGTH_SAMPLE = 1000;

/*
 * `ts_rank_cd` of a one-lexeme query without normalisation is 0.1 (the default weight of an
 * unlabelled position) per occurrence: × 10 it is the term's frequency in the chunk, read in C
 * without unnesting the tsvector. `length(tsv)` (distinct lexemes) is the chunk's length.
 * A lexeme becomes a tsquery as a quoted literal (quotes and backslashes doubled), never parsed as
 * query syntax, so `&`, `|`, `!`, `:*` and quotes in the question are just text.
 */
const SQL = `
with searched as (select distinct unnest(cast(:kbs as uuid[])) as id),
terms as materialized (
  select t.lexeme, ('''' || replace(replace(t.lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery as q
  from unnest(to_tsvector('english', :query)) t
  limit :maxTerms
),
term_count as (select count(*)::int as n from terms),
any_term as (select string_agg(q::text, ' | ')::tsquery as q from terms),
corpus as (
  select greatest(1, (select coalesce(sum(d.chunk_count), 0) from kb_documents d where d.knowledge_base_id = any(cast(:kbs as uuid[])))) as n,
         greatest(1, (select coalesce(avg(length(s.tsv)), 1) from (select c.tsv from kb_chunks c where c.knowledge_base_id = any(cast(:kbs as uuid[])) limit :sample) s)) as avgdl
),
weighted as (
  select t.q, ln(1 + (greatest(k.n, f.df) - f.df + 0.5) / (f.df + 0.5)) as idf
  from terms t, corpus k,
       lateral (select count(*)::float8 as df from searched b join kb_chunks c on c.knowledge_base_id = b.id and c.tsv @@ t.q) f
  where f.df > 0
),
candidates as (
  select c.id, c.tsv, length(c.tsv)::float8 as dl
  from searched b
  join kb_chunks c on c.knowledge_base_id = b.id and c.tsv @@ (select q from any_term)
),
scored as (
  select c.id, sum(w.idf * s.tf * (${K1} + 1) / (s.tf + ${K1} * (1 - ${B} + ${B} * c.dl / k.avgdl))) as score, count(*) as matched
  from candidates c
  cross join corpus k
  cross join weighted w
  cross join lateral (select round(ts_rank_cd(c.tsv, w.q, 0) * 10) as tf) s
  where s.tf > 0
  group by c.id
)
select s.id::text as id, s.score
from scored s, term_count tc
where not :mostTerms or s.matched * 2 >= tc.n
order by s.score desc, s.id
limit :limit`;

export async function keywordSearch(knex: Knex, knowledgeBaseIds: string[], query: string, limit: number, options: KeywordOptions = {}): Promise<KeywordHit[]> {
  if (knowledgeBaseIds.length === 0) return [];
  const { rows } = await knex.raw(SQL, {
    kbs: knowledgeBaseIds,
    // Postgres text cannot hold NUL: a question carrying one is still searched, without it.
    query: query.slice(0, MAX_QUERY_CHARS).replaceAll('\u0000', ' '),
    maxTerms: MAX_QUERY_TERMS,
    sample: LENGTH_SAMPLE,
    mostTerms: options.mostTerms === true,
    limit,
  });
  return rows.map((row: { id: string; score: string | number }) => ({ id: row.id, score: Number(row.score) }));
}
