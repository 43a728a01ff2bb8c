import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { Models } from '../db/models.js';
import type { ChunkStrategy, KbDocument, KnowledgeBase, RetrievalMode } from '../db/knowledge-models.js';
import { NotFoundError, UnsupportedMediaTypeError } from '../shared/errors.js';
import { ingestJobOptions, type IngestJob } from '../shared/jobs.js';
import { retrieve, type RetrievedChunk } from './retrieval.js';
import { lockCells } from './ivf.js';
import { paginate } from '../http/pagination.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';

export interface KnowledgeBaseFields {
  name: string;
  description: string;
  chunk_strategy: ChunkStrategy;
  chunk_size: number;
  chunk_overlap: number;
  retrieval_mode: RetrievalMode;
  is_active: boolean;
}

export interface Upload {
  name: string;
  bytes: Buffer;
}

/** Document types by file extension: what ingestion knows how to read. */
const CONTENT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
};

export function contentTypeOf(name: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  const type = extension ? CONTENT_TYPES[extension] : undefined;
  if (!type) throw new UnsupportedMediaTypeError(`"${name}" is not a supported document type; upload .txt, .md or .html`);
  return type;
}

/**
 * Recomputes a knowledge base's counts and status from its documents, so they stay exact
 * whatever order uploads, ingestions and deletions happen in. Call it inside the transaction
 * that changed them.
 */
export async function refreshKnowledgeBase(knex: Knex | Knex.Transaction, knowledgeBaseId: string): Promise<void> {
  // Lock first: the counting statement then starts after any concurrent refresh has committed,
  // so it sees that transaction's documents and chunks (READ COMMITTED snapshots per statement).
  // NO KEY UPDATE, not UPDATE: it must not conflict with the key-share locks that inserting
  // documents and chunks (foreign keys) take on the same row, or two ingestions deadlock.
  await knex('knowledge_bases').select('id').where({ id: knowledgeBaseId }).forNoKeyUpdate();
  await knex.raw(
    `update knowledge_bases kb set
       document_count = (select count(*) from kb_documents d where d.knowledge_base_id = kb.id),
       total_chunks = (select count(*) from kb_chunks c where c.knowledge_base_id = kb.id),
       status = case when exists (select 1 from kb_documents d where d.knowledge_base_id = kb.id and d.status = 'processing') then 'processing' else 'ready' end,
       updated_at = now()
     where kb.id = ?`,
    [knowledgeBaseId],
  );
}

/** The web side of knowledge bases: ownership, documents in (ingested on workers), retrieval. */
export class KnowledgeService {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly queue: Queue<IngestJob>,
  ) {}

  own(userId: string, id: string): Promise<KnowledgeBase> {
    return findOwned(this.models.KnowledgeBase, userId, id, 'Knowledge base');
  }

  async create(userId: string, fields: Omit<KnowledgeBaseFields, 'is_active'>): Promise<KnowledgeBase> {
    return await this.models.KnowledgeBase.query().insertAndFetch({ ...fields, user_id: userId });
  }

  /** Changes a knowledge base the caller has already loaded with `own`. */
  async update(kb: KnowledgeBase, fields: Partial<KnowledgeBaseFields>): Promise<KnowledgeBase> {
    return await kb.$query().patchAndFetch({ ...fields, updated_at: new Date() });
  }

  async remove(userId: string, id: string): Promise<void> {
    const deleted = await this.models.KnowledgeBase.query().delete().where({ id, user_id: userId });
    if (!deleted) throw new NotFoundError('Knowledge base not found');
  }

  /**
   * Stores the document and queues its ingestion (the caller has loaded the knowledge base with
   * `own`); the same content uploaded again returns the existing document instead of indexing it twice.
   */
  async addDocument(kb: KnowledgeBase, upload: Upload): Promise<{ document: KbDocument; created: boolean }> {
    const knowledgeBaseId = kb.id;
    const contentType = contentTypeOf(upload.name);
    const hash = createHash('sha256').update(upload.bytes).digest('hex');
    const id = randomUUID();
    const inserted = await this.knex.transaction(async (trx) => {
      const { rows } = await trx.raw(
        `insert into kb_documents (id, knowledge_base_id, name, content_type, size_bytes, content_hash, source)
         values (?, ?, ?, ?, ?, ?, ?) on conflict (knowledge_base_id, content_hash) do nothing returning id`,
        [id, knowledgeBaseId, upload.name, contentType, upload.bytes.length, hash, upload.bytes],
      );
      if (rows.length) await refreshKnowledgeBase(trx, knowledgeBaseId);
      return rows.length > 0;
    });
    if (inserted) await this.queue.add('ingest', { documentId: id }, { ...ingestJobOptions, jobId: id });
    const document = await this.models.KbDocument.query().findOne({ knowledge_base_id: knowledgeBaseId, content_hash: hash });
    return { document: document!, created: inserted };
  }

  list(userId: string, page: Pagination) {
    return listOwned(this.models.KnowledgeBase, userId, page, (kb) => kb.toPublic());
  }

  /** A knowledge base's documents (without their bytes), newest first. */
  async listDocuments(userId: string, knowledgeBaseId: string, page: Pagination) {
    await this.own(userId, knowledgeBaseId);
    const query = this.models.KbDocument.query()
      .select('id', 'knowledge_base_id', 'name', 'content_type', 'size_bytes', 'status', 'error', 'chunk_count', 'created_at', 'updated_at')
      .where({ knowledge_base_id: knowledgeBaseId })
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    return paginate(query, page, (document) => document.toPublic());
  }

  async removeDocument(userId: string, knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.own(userId, knowledgeBaseId);
    await this.knex.transaction(async (trx) => {
      await lockCells(trx, knowledgeBaseId, 'shared');
      const deleted = await trx('kb_documents').where({ id: documentId, knowledge_base_id: knowledgeBaseId }).delete();
      if (!deleted) throw new NotFoundError('Document not found');
      await refreshKnowledgeBase(trx, knowledgeBaseId);
    });
  }

  async retrieve(userId: string, knowledgeBaseId: string, request: { query: string; top_k: number; retrieval_mode?: RetrievalMode; score_threshold?: number }) {
    const kb = await this.own(userId, knowledgeBaseId);
    const mode = request.retrieval_mode ?? kb.retrieval_mode;
    const records: RetrievedChunk[] = await retrieve(this.knex, {
      knowledgeBaseIds: [kb.id],
      query: request.query,
      topK: request.top_k,
      mode,
      scoreThreshold: request.score_threshold,
    });
    return { query: request.query, retrieval_mode: mode, records };
  }

  /** The ids among `ids` that are not knowledge bases of this user. */
  async foreign(userId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const owned = await this.models.KnowledgeBase.query().select('id').where({ user_id: userId }).whereIn('id', ids);
    const mine = new Set(owned.map((kb) => kb.id));
    return ids.filter((id) => !mine.has(id));
  }
}
