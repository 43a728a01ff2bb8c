import type { Knex } from 'knex';
import type { RetrievalMode } from '../db/knowledge-models.js';
import { cubeLiteral, embed } from './embedding.js';
import { ANN_PROBES } from './ivf.js';

export interface RetrievalRequest {
  knowledgeBaseIds: string[];
  query: string;
  topK: number;
  mode: RetrievalMode;
  scoreThreshold?: number;
  /** Scan every chunk even where IVF cells exist (benchmarks and tests compare against it). */
  exact?: boolean;
}

export interface RetrievedChunk {
  chunk_id: string;
  document_id: string;
  document_name: string;
  content: string;
  score: number;
  position: number;
}

/** Reciprocal rank fusion's constant (Cormack et al.): dampens the weight of the very top ranks. */
const RRF_K = 60;
const candidatesFor = (topK: number) => Math.max(50, topK * 4);

const COLUMNS = `c.id::text as chunk_id, c.document_id, d.name as document_name, c.content, c.position`;

/**
 * Search in Postgres: `keyword` = full-text (websearch syntax, GIN, ts_rank_cd); `semantic` =
 * exact nearest neighbours of the query's embedding (score = cosine similarity); `hybrid` =
 * reciprocal rank fusion of the two candidate lists (score = the fused RRF score).
 */
export async function retrieve(knex: Knex, request: RetrievalRequest): Promise<RetrievedChunk[]> {
  const rows = await search(knex, request);
  const records = rows.map((row) => ({ ...row, score: Number(row.score) }));
  return request.scoreThreshold === undefined ? records : records.filter((r) => r.score >= request.scoreThreshold!);
}

/**
 * The nearest chunks to the query vector. Where a knowledge base has IVF cells, only the cells
 * of its nearest centroids are scanned (through the (knowledge_base_id, cell) index), plus the
 * chunks not yet in a cell; with `exact`, every chunk.
 */
function nearestCte(exact: boolean): string {
  const candidates = exact
    ? `select c.id, c.embedding <-> cast(:vector as cube) as distance from kb_chunks c where c.knowledge_base_id = any(cast(:kbs as uuid[]))`
    : `select c.id, c.embedding <-> cast(:vector as cube) as distance
       from cells join kb_chunks c on c.knowledge_base_id = cells.knowledge_base_id and c.cell = cells.cell
       union all
       select c.id, c.embedding <-> cast(:vector as cube) from kb_chunks c where c.knowledge_base_id = any(cast(:kbs as uuid[])) and c.cell is null`;
  return `cells as (
      select knowledge_base_id, cell from (
        select knowledge_base_id, cell, row_number() over (partition by knowledge_base_id order by centroid <-> cast(:vector as cube)) as rank
        from kb_centroids where knowledge_base_id = any(cast(:kbs as uuid[]))
      ) ranked where rank <= :probes
    ), nearest as (
      select id, distance from (${candidates}) candidates order by distance, id limit :candidates
    )`;
}

/** Keyword matches, best first; the ranking reads only the chunks' tsvectors. */
const KEYWORD_CTE = `keyword as (
    select c.id, ts_rank_cd(c.tsv, q) as score
    from kb_chunks c, websearch_to_tsquery('english', :query) q
    where c.knowledge_base_id = any(cast(:kbs as uuid[])) and c.tsv @@ q
    order by score desc, c.id limit :candidates
  )`;

/** The chunk and document columns, joined only for the few rows returned. */
const RESULT = (from: string) => `select ${COLUMNS}, r.score from ${from} r join kb_chunks c on c.id = r.id join kb_documents d on d.id = c.document_id order by r.score desc, c.id`;

async function search(knex: Knex, { knowledgeBaseIds, query, topK, mode, exact = false }: RetrievalRequest): Promise<RetrievedChunk[]> {
  const params = { kbs: knowledgeBaseIds, query, vector: cubeLiteral(embed(query)), probes: ANN_PROBES, rrf: RRF_K };
  const sql =
    mode === 'keyword'
      ? `with ${KEYWORD_CTE} ${RESULT('keyword')}`
      : mode === 'semantic'
        ? `with ${nearestCte(exact)}, scored as (select id, 1 - power(distance, 2) / 2 as score from nearest) ${RESULT('scored')}`
        : `with ${KEYWORD_CTE}, ${nearestCte(exact)}, fused as (
             select coalesce(k.id, s.id) as id,
                    coalesce(1.0 / (:rrf + k.rank), 0) + coalesce(1.0 / (:rrf + s.rank), 0) as score
             from (select id, row_number() over (order by score desc, id) as rank from keyword) k
             full outer join (select id, row_number() over (order by distance, id) as rank from nearest) s on s.id = k.id
             order by score desc, id limit :topK
           ) ${RESULT('fused')}`;
  const { rows } = await knex.raw(sql, { ...params, candidates: mode === 'hybrid' ? candidatesFor(topK) : topK, topK });
  return rows;
}

/**
 * What an agent's `knowledge_base_retrieve` runs: its active knowledge bases, in their own
 * retrieval mode (hybrid when they differ).
 */
export async function searchKnowledgeBases(knex: Knex, knowledgeBaseIds: string[], query: string, topK: number): Promise<RetrievedChunk[]> {
  if (knowledgeBaseIds.length === 0) return [];
  const kbs: { id: string; retrieval_mode: RetrievalMode }[] = await knex('knowledge_bases').select('id', 'retrieval_mode').whereIn('id', knowledgeBaseIds).where({ is_active: true });
  if (kbs.length === 0) return [];
  const modes = new Set(kbs.map((kb) => kb.retrieval_mode));
  const mode = modes.size === 1 ? kbs[0]!.retrieval_mode : 'hybrid';
  return retrieve(knex, { knowledgeBaseIds: kbs.map((kb) => kb.id), query, topK, mode });
}
