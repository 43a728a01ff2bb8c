import { Model } from 'objection';

export const CHUNK_STRATEGIES = ['fixed', 'sentence', 'paragraph', 'recursive'] as const;
export type ChunkStrategy = (typeof CHUNK_STRATEGIES)[number];
export const RETRIEVAL_MODES = ['keyword', 'semantic', 'hybrid'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];

export const KNOWLEDGE_BASE_STATUSES = ['ready', 'processing', 'indexing'] as const;
export type KnowledgeBaseStatus = (typeof KNOWLEDGE_BASE_STATUSES)[number];

export class KnowledgeBase extends Model {
  static override tableName = 'knowledge_bases';
  id!: string;
  user_id!: string;
  name!: string;
  description!: string;
  chunk_strategy!: ChunkStrategy;
  chunk_size!: number;
  chunk_overlap!: number;
  retrieval_mode!: RetrievalMode;
  document_count!: number;
  total_chunks!: number;
  status!: KnowledgeBaseStatus;
  is_active!: boolean;
  embedding_model!: string;
  embedding_dimensions!: number;
  rerank_model!: string | null;
  /** The vectors retrieval reads; a re-embedding fills `pending_generation` and then switches to it. */
  vector_generation!: number;
  pending_generation!: number | null;
  pending_model!: string | null;
  pending_dimensions!: number | null;
  indexing_done!: number | null;
  indexing_total!: number | null;
  error!: string | null;
  created_at!: Date;
  updated_at!: Date;
}

export type DocumentStatus = 'processing' | 'ready' | 'failed';

export class KbDocument extends Model {
  static override tableName = 'kb_documents';
  id!: string;
  knowledge_base_id!: string;
  name!: string;
  content_type!: string;
  size_bytes!: number;
  content_hash!: string;
  source!: Buffer;
  status!: DocumentStatus;
  error!: string | null;
  chunk_count!: number;
  created_at!: Date;
  updated_at!: Date;
}
