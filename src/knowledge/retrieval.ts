import type { Knex } from 'knex';
import type { RetrievalMode } from '../db/knowledge-models.js';
import { cubeLiteral, embed } from './embedding.js';

export interface RetrievalRequest {
  knowledgeBaseIds: string[];
  query: string;
  topK: number;
  mode: RetrievalMode;
  scoreThreshold?: number;
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

async function search(knex: Knex, { knowledgeBaseIds, query, topK, mode }: RetrievalRequest): Promise<RetrievedChunk[]> {
  const vector = cubeLiteral(embed(query));
  if (mode === 'keyword') {
    const { rows } = await knex.raw(
      `select ${COLUMNS}, ts_rank_cd(c.tsv, q) as score
       from kb_chunks c join kb_documents d on d.id = c.document_id, websearch_to_tsquery('english', ?) q
       where c.knowledge_base_id = any(?::uuid[]) and c.tsv @@ q
       order by score desc, c.id limit ?`,
      [query, knowledgeBaseIds, topK],
    );
    return rows;
  }
  if (mode === 'semantic') {
    const { rows } = await knex.raw(
      `select ${COLUMNS}, 1 - power(c.embedding <-> ?::cube, 2) / 2 as score
       from kb_chunks c join kb_documents d on d.id = c.document_id
       where c.knowledge_base_id = any(?::uuid[])
       order by c.embedding <-> ?::cube, c.id limit ?`,
      [vector, knowledgeBaseIds, vector, topK],
    );
    return rows;
  }
  const candidates = candidatesFor(topK);
  const { rows } = await knex.raw(
    `with keyword as (
       select c.id, row_number() over (order by ts_rank_cd(c.tsv, q) desc, c.id) as rank
       from kb_chunks c, websearch_to_tsquery('english', ?) q
       where c.knowledge_base_id = any(?::uuid[]) and c.tsv @@ q
       order by rank limit ?
     ), semantic as (
       select id, row_number() over (order by distance, id) as rank from (
         select c.id, c.embedding <-> ?::cube as distance from kb_chunks c
         where c.knowledge_base_id = any(?::uuid[])
         order by distance, c.id limit ?
       ) nearest
     ), fused as (
       select coalesce(k.id, s.id) as id, coalesce(1.0 / (? + k.rank), 0) + coalesce(1.0 / (? + s.rank), 0) as score
       from keyword k full outer join semantic s on s.id = k.id
     )
     select ${COLUMNS}, f.score from fused f join kb_chunks c on c.id = f.id join kb_documents d on d.id = c.document_id
     order by f.score desc, c.id limit ?`,
    [query, knowledgeBaseIds, candidates, vector, knowledgeBaseIds, candidates, RRF_K, RRF_K, topK],
  );
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
