import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import { CHUNK_STRATEGIES, KNOWLEDGE_BASE_STATUSES, RETRIEVAL_MODES, type KbDocument, type KnowledgeBase } from '../db/knowledge-models.js';

export const KnowledgeBaseRecordSchema = v.strictObject({
  id: uuid,
  name: v.string(),
  description: v.string(),
  chunk_strategy: v.picklist(CHUNK_STRATEGIES),
  chunk_size: v.number(),
  chunk_overlap: v.number(),
  retrieval_mode: v.picklist(RETRIEVAL_MODES),
  document_count: count,
  total_chunks: count,
  status: v.picklist(KNOWLEDGE_BASE_STATUSES),
  is_active: v.boolean(),
  embedding_model: described(v.string(), '`local` (the built-in lexical embedder) or a gateway embedding model'),
  embedding_dimensions: count,
  rerank_model: v.nullable(v.string()),
  indexing: described(
    v.nullable(v.strictObject({ model: v.string(), done: count, total: count })),
    'While a new embedding model re-embeds the chunks: its progress (retrieval answers from the previous vectors meanwhile)',
  ),
  error: described(v.nullable(v.string()), 'Why the last re-embedding stopped (the previous vectors were kept)'),
  created_at: instant,
  updated_at: instant,
});
export type KnowledgeBaseRecord = v.InferOutput<typeof KnowledgeBaseRecordSchema>;

export const DocumentRecordSchema = v.strictObject({
  id: uuid,
  knowledge_base_id: uuid,
  name: v.string(),
  content_type: v.string(),
  size_bytes: count,
  status: v.picklist(['processing', 'ready', 'failed']),
  error: v.nullable(v.string()),
  chunk_count: count,
  created_at: instant,
  updated_at: instant,
});
export type DocumentRecord = v.InferOutput<typeof DocumentRecordSchema>;

export const RetrieveResultSchema = v.strictObject({
  query: v.string(),
  retrieval_mode: v.picklist(RETRIEVAL_MODES),
  reranked: described(v.nullable(v.boolean()), 'true when the rerank model ordered the records; false when it failed and the fused order stands; null without one'),
  records: v.array(
    v.strictObject({
      chunk_id: v.string(),
      document_id: uuid,
      document_name: v.string(),
      page: described(v.nullable(v.number()), 'The PDF page of the chunk; null for formats without pages'),
      content: v.string(),
      score: v.number(),
      position: v.number(),
    }),
  ),
});
export type RetrieveResult = v.InferOutput<typeof RetrieveResultSchema>;

/** The spec's knowledge base record, with the embedding fields of DESIGN §14. */
export function presentKnowledgeBase(kb: KnowledgeBase): KnowledgeBaseRecord {
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    chunk_strategy: kb.chunk_strategy,
    chunk_size: kb.chunk_size,
    chunk_overlap: kb.chunk_overlap,
    retrieval_mode: kb.retrieval_mode,
    document_count: kb.document_count,
    total_chunks: kb.total_chunks,
    status: kb.status,
    is_active: kb.is_active,
    embedding_model: kb.embedding_model,
    embedding_dimensions: kb.embedding_dimensions,
    rerank_model: kb.rerank_model,
    indexing: kb.pending_generation === null ? null : { model: kb.pending_model!, done: kb.indexing_done ?? 0, total: kb.indexing_total ?? 0 },
    error: kb.error,
    created_at: kb.created_at.toISOString(),
    updated_at: kb.updated_at.toISOString(),
  };
}

export function presentDocument(document: KbDocument): DocumentRecord {
  return {
    id: document.id,
    knowledge_base_id: document.knowledge_base_id,
    name: document.name,
    content_type: document.content_type,
    size_bytes: document.size_bytes,
    status: document.status,
    error: document.error,
    chunk_count: document.chunk_count,
    created_at: document.created_at.toISOString(),
    updated_at: document.updated_at.toISOString(),
  };
}
