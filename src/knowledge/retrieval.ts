import type { Knex } from 'knex';
import type { RetrievalMode } from '../db/knowledge-models.js';
import { keywordSearch } from './keyword-search.js';
import type { KnowledgeModels } from './models.js';
import type { Neighbour, VectorStore } from './vector-store.js';

/** What a search needs of a knowledge base (its row carries all of it). */
export interface SearchableKnowledgeBase {
  id: string;
  retrieval_mode: RetrievalMode;
  embedding_model: string;
  embedding_dimensions: number;
  vector_generation: number;
  rerank_model: string | null;
}

export interface RetrievalRequest {
  query: string;
  topK: number;
  mode: RetrievalMode;
  scoreThreshold?: number;
  /** Scan every vector even where an HNSW index exists (benchmarks and tests compare against it). */
  exact?: boolean;
  /**
   * Only chunks that match: a keyword hit holding at least half of the query's terms, or a vector
   * at least this similar to the query (a vector search alone always returns its nearest, however
   * far). Grounded runs set it.
   */
  minSimilarity?: number;
  signal?: AbortSignal;
}

export interface RetrievedChunk {
  chunk_id: string;
  document_id: string;
  document_name: string;
  /** The PDF page the chunk comes from; null for formats without pages. */
  page: number | null;
  content: string;
  score: number;
  position: number;
}

export interface RetrievalResult {
  records: RetrievedChunk[];
  /** Whether a rerank model reordered the records; null when none is set. */
  reranked: boolean | null;
}

/** Reciprocal rank fusion's constant (Cormack et al.): dampens the weight of the very top ranks. */
const RRF_K = 60;
const candidatesFor = (topK: number) => Math.max(50, topK * 4);
/** How many fused candidates a rerank model reorders. */
const rerankPoolFor = (topK: number) => Math.max(20, topK * 4);

interface Ranked {
  id: string;
  score: number;
}

/**
 * Search (DESIGN §14, §23): `keyword` = chunks holding any of the query's terms, ranked by BM25
 * (keyword-search.ts);
 * `semantic` = nearest neighbours of the query's embedding in each knowledge base's own model
 * (score = cosine similarity); `hybrid` = reciprocal rank fusion of the keyword and vector ranks.
 * With a rerank model, the best fused candidates are reordered by the gateway; if that fails the
 * fused order stands and `reranked` says so.
 */
export class Retriever {
  constructor(
    private readonly knex: Knex,
    private readonly vectors: VectorStore,
    private readonly models: KnowledgeModels,
  ) {}

  async search(kbs: SearchableKnowledgeBase[], request: RetrievalRequest): Promise<RetrievalResult> {
    if (kbs.length === 0) return { records: [], reranked: null };
    const rerankModel = commonRerankModel(kbs);
    const wanted = rerankModel ? rerankPoolFor(request.topK) : request.topK;
    const ranked = await this.rank(kbs, request, wanted);
    let records = await this.load(ranked);
    let reranked: boolean | null = null;
    if (rerankModel && records.length > 0) {
      const reordered = await this.rerank(rerankModel, request, records);
      reranked = reordered !== undefined;
      records = reordered ?? records;
    }
    records = records.slice(0, request.topK);
    const threshold = request.scoreThreshold;
    return { records: threshold === undefined ? records : records.filter((r) => r.score >= threshold), reranked };
  }

  private async rank(kbs: SearchableKnowledgeBase[], request: RetrievalRequest, wanted: number): Promise<Ranked[]> {
    if (request.mode === 'keyword') return this.keyword(kbs, request, wanted);
    if (request.mode === 'semantic') return this.semantic(kbs, request, wanted);
    const limit = candidatesFor(wanted);
    const [keyword, semantic] = await Promise.all([this.keyword(kbs, request, limit), this.semantic(kbs, request, limit)]);
    return fuse([keyword, semantic]).slice(0, wanted);
  }

  /** Keyword matches, best first; with `minSimilarity` set (only chunks that match) a hit must hold most of the query's terms. */
  private keyword(kbs: SearchableKnowledgeBase[], request: RetrievalRequest, limit: number): Promise<Ranked[]> {
    return keywordSearch(this.knex, kbs.map((kb) => kb.id), request.query, limit, { mostTerms: request.minSimilarity !== undefined });
  }

  /** Each knowledge base's nearest chunks in its own model's space, merged by similarity. */
  private async semantic(kbs: SearchableKnowledgeBase[], request: RetrievalRequest, limit: number): Promise<Ranked[]> {
    const queryVectors = new Map<string, Promise<number[]>>();
    const vectorFor = (kb: SearchableKnowledgeBase) => {
      const key = `${kb.embedding_model}\u0000${kb.embedding_dimensions}`;
      if (!queryVectors.has(key)) {
        const embedder = this.models.embedder(kb.embedding_model, kb.embedding_model === 'local' ? undefined : kb.embedding_dimensions);
        queryVectors.set(key, embedder.embed([request.query], request.signal).then(([vector]) => vector!));
      }
      return queryVectors.get(key)!;
    };
    const lists = await Promise.all(
      kbs.map(async (kb) =>
        this.vectors.nearest({ knowledgeBaseId: kb.id, generation: kb.vector_generation, dimensions: kb.embedding_dimensions }, await vectorFor(kb), limit, { exact: request.exact }),
      ),
    );
    const floor = request.minSimilarity ?? -Infinity;
    return lists.flat().filter((n) => n.similarity >= floor).sort(bySimilarity).slice(0, limit).map((n) => ({ id: n.id, score: n.similarity }));
  }

  /** The chunk and document columns, read only for the few chunks returned, in rank order. */
  private async load(ranked: Ranked[]): Promise<RetrievedChunk[]> {
    if (ranked.length === 0) return [];
    const { rows } = await this.knex.raw(
      `select c.id::text as chunk_id, c.document_id, (select d.name from kb_documents d where d.id = c.document_id) as document_name, c.page, c.content, c.position
       from kb_chunks c where c.id = any(cast(? as bigint[]))`,
      [ranked.map((r) => r.id)],
    );
    const byId = new Map<string, Omit<RetrievedChunk, 'score'>>(rows.map((row: RetrievedChunk) => [row.chunk_id, row]));
    return ranked.flatMap((r) => {
      const row = byId.get(r.id);
      return row ? [{ ...row, score: r.score }] : [];
    });
  }

  private async rerank(model: string, request: RetrievalRequest, records: RetrievedChunk[]): Promise<RetrievedChunk[] | undefined> {
    try {
      const results = await this.models.reranker(model).rerank(request.query, records.map((r) => r.content), request.topK, request.signal);
      return results.map((result) => ({ ...records[result.index]!, score: result.relevance_score }));
    } catch (err) {
      if (request.signal?.aborted) throw err;
      return undefined;
    }
  }
}

const bySimilarity = (a: Neighbour, b: Neighbour) => b.similarity - a.similarity || Number(a.id) - Number(b.id);

/** Reciprocal rank fusion of ranked lists; ties broken by chunk id so the order is stable. */
export function fuse(lists: Ranked[][]): Ranked[] {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((item, rank) => scores.set(item.id, (scores.get(item.id) ?? 0) + 1 / (RRF_K + rank + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id));
}

/** The rerank model the knowledge bases agree on (one search has one reranker), if any. */
function commonRerankModel(kbs: SearchableKnowledgeBase[]): string | undefined {
  const models = new Set(kbs.map((kb) => kb.rerank_model).filter((m): m is string => Boolean(m)));
  return models.size === 1 ? [...models][0] : undefined;
}

/**
 * What an agent's `knowledge_base_retrieve` runs: its active knowledge bases, in their own
 * retrieval mode (hybrid when they differ).
 */
export async function searchKnowledgeBases(knex: Knex, retriever: Retriever, knowledgeBaseIds: string[], query: string, topK: number, options: { signal?: AbortSignal; minSimilarity?: number } = {}): Promise<RetrievedChunk[]> {
  if (knowledgeBaseIds.length === 0) return [];
  const kbs: SearchableKnowledgeBase[] = await knex('knowledge_bases')
    .select('id', 'retrieval_mode', 'embedding_model', 'embedding_dimensions', 'vector_generation', 'rerank_model')
    .whereIn('id', knowledgeBaseIds)
    .where({ is_active: true });
  if (kbs.length === 0) return [];
  const modes = new Set(kbs.map((kb) => kb.retrieval_mode));
  const mode = modes.size === 1 ? kbs[0]!.retrieval_mode : 'hybrid';
  return (await retriever.search(kbs, { query, topK, mode, ...options })).records;
}
