import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import type { Models } from '../db/models.js';
import type { ChunkStrategy, KbDocument, KnowledgeBase, RetrievalMode } from '../db/knowledge-models.js';
import { BadGatewayError, NotFoundError, UnavailableError, UnsupportedMediaTypeError, ValidationError } from '../shared/errors.js';
import { ingestJobOptions, type IngestJob } from '../shared/jobs.js';
import type { Retriever } from './retrieval.js';
import { LOCAL_EMBEDDING_MODEL, type KnowledgeModels } from './models.js';
import { EmbeddingError } from './embedders.js';
import { EMBEDDING_DIMENSIONS } from './embedding.js';
import { abandonGeneration, startReembedding } from './reembedding.js';
import { refreshKnowledgeBase } from './refresh.js';
import type { VectorStore } from './vector-store.js';
import { paginate } from '../db/pagination.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import { presentDocument, presentKnowledgeBase, type RetrieveResult } from './records.js';

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

/** Document types by file extension: what ingestion knows how to read (the worker checks the bytes). */
const CONTENT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export function contentTypeOf(name: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  const type = extension ? CONTENT_TYPES[extension] : undefined;
  if (!type) throw new UnsupportedMediaTypeError(`"${name}" is not a supported document type; upload .txt, .md, .html, .pdf or .docx`);
  return type;
}

export interface EmbeddingChoice {
  embedding_model?: string;
  embedding_dimensions?: number;
  rerank_model?: string | null;
}

/** A document's public columns: everything but its bytes. */
const DOCUMENT_COLUMNS = ['id', 'knowledge_base_id', 'name', 'content_type', 'size_bytes', 'status', 'error', 'chunk_count', 'created_at', 'updated_at'];

/** The web side of knowledge bases: ownership, documents in (ingested on workers), embedding models, retrieval. */
export class KnowledgeService {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly queue: Queue<IngestJob>,
    private readonly knowledgeModels: KnowledgeModels,
    private readonly retriever: Retriever,
    private readonly vectors: VectorStore,
  ) {}

  own(userId: string, id: string): Promise<KnowledgeBase> {
    return findOwned(this.models.KnowledgeBase, userId, id, 'Knowledge base');
  }

  async create(userId: string, fields: Omit<KnowledgeBaseFields, 'is_active'> & EmbeddingChoice): Promise<KnowledgeBase> {
    const { embedding_model = LOCAL_EMBEDDING_MODEL, embedding_dimensions, rerank_model = null, ...rest } = fields;
    const dimensions = await this.dimensionsOf(embedding_model, embedding_dimensions);
    if (rerank_model) this.knowledgeModels.reranker(rerank_model);
    return await this.models.KnowledgeBase.query().insertAndFetch({ ...rest, user_id: userId, embedding_model, embedding_dimensions: dimensions, rerank_model });
  }

  /**
   * Changes a knowledge base the caller has already loaded with `own`. A new embedding model
   * (or dimension) re-embeds every chunk in a worker job; retrieval answers from the current
   * vectors until the new ones are complete (DESIGN §14).
   */
  async update(kb: KnowledgeBase, fields: Partial<KnowledgeBaseFields> & EmbeddingChoice): Promise<KnowledgeBase> {
    const { embedding_model, embedding_dimensions, ...rest } = fields;
    if (rest.rerank_model) this.knowledgeModels.reranker(rest.rerank_model);
    const model = embedding_model ?? kb.pending_model ?? kb.embedding_model;
    const changesModel = embedding_model !== undefined || embedding_dimensions !== undefined;
    const dimensions = changesModel ? await this.dimensionsOf(model, embedding_dimensions ?? (model === kb.embedding_model ? kb.embedding_dimensions : undefined)) : undefined;
    if (Object.keys(rest).length > 0) await kb.$query().patch({ ...rest, updated_at: new Date() });
    const generation = dimensions === undefined ? undefined : await startReembedding(this.knex, kb.id, model, dimensions);
    // Read before the job is queued: the answer shows the change as it was accepted (`indexing`), however fast the worker is.
    const updated = (await kb.$query())!;
    if (generation !== undefined) {
      await this.queue.add('reembed', { reembed: { knowledgeBaseId: kb.id, generation } }, { ...ingestJobOptions, jobId: `reembed_${kb.id}_${generation}` }).catch(async (err: unknown) => {
        await abandonGeneration(this.knex, kb.id, generation, 'The re-embedding could not be queued; choose the model again').catch(() => {});
        throw err;
      });
    }
    return updated;
  }

  /** The vector length of `model`: 422 for a model the gateway does not have, 503 while it is unreachable. */
  private async dimensionsOf(model: string, requested?: number): Promise<number> {
    if (model === LOCAL_EMBEDDING_MODEL) {
      if (requested !== undefined && requested !== EMBEDDING_DIMENSIONS) {
        throw new ValidationError([{ loc: ['body', 'embedding_dimensions'], msg: `the local embedder has ${EMBEDDING_DIMENSIONS} dimensions`, type: 'value_error', input: requested }]);
      }
      return EMBEDDING_DIMENSIONS;
    }
    try {
      return await this.knowledgeModels.dimensionsOf(model, requested);
    } catch (err) {
      if (!(err instanceof EmbeddingError)) throw err;
      if (err.retryable) throw new UnavailableError(`The model gateway could not be reached to check "${model}": ${err.message}`, 5, err.message);
      throw new ValidationError([{ loc: ['body', 'embedding_model'], msg: err.message, type: err.code === 'model_not_found' ? 'model_not_found' : 'value_error', input: model }]);
    }
  }

  async remove(userId: string, id: string): Promise<void> {
    const deleted = await this.models.KnowledgeBase.query().delete().where({ id, user_id: userId });
    if (!deleted) throw new NotFoundError('Knowledge base not found');
    // The rows are gone with the knowledge base; its (now empty) HNSW indexes go too. Not dropping
    // one costs a catalog entry, not an answer: the deletion stands either way.
    await this.vectors.dropIndexes(id).catch(() => undefined);
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
    return listOwned(this.models.KnowledgeBase, userId, page, presentKnowledgeBase);
  }

  /** A knowledge base's documents (without their bytes), newest first. */
  async listDocuments(userId: string, knowledgeBaseId: string, page: Pagination) {
    await this.own(userId, knowledgeBaseId);
    const query = this.models.KbDocument.query()
      .select(...DOCUMENT_COLUMNS)
      .where({ knowledge_base_id: knowledgeBaseId })
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    return paginate(query, page, presentDocument);
  }

  /** One document (without its bytes) and its ingestion status; another knowledge base's document is not found. */
  async document(userId: string, knowledgeBaseId: string, documentId: string) {
    await this.own(userId, knowledgeBaseId);
    const document = await this.models.KbDocument.query()
      .select(...DOCUMENT_COLUMNS)
      .findOne({ id: documentId, knowledge_base_id: knowledgeBaseId });
    if (!document) throw new NotFoundError('Document not found');
    return presentDocument(document);
  }

  async removeDocument(userId: string, knowledgeBaseId: string, documentId: string): Promise<void> {
    await this.own(userId, knowledgeBaseId);
    await this.knex.transaction(async (trx) => {
      const deleted = await trx('kb_documents').where({ id: documentId, knowledge_base_id: knowledgeBaseId }).delete();
      if (!deleted) throw new NotFoundError('Document not found');
      await refreshKnowledgeBase(trx, knowledgeBaseId);
    });
  }

  async retrieve(userId: string, knowledgeBaseId: string, request: { query: string; top_k: number; retrieval_mode?: RetrievalMode; score_threshold?: number }): Promise<RetrieveResult> {
    const kb = await this.own(userId, knowledgeBaseId);
    const mode = request.retrieval_mode ?? kb.retrieval_mode;
    try {
      const { records, reranked } = await this.retriever.search([kb], { query: request.query, topK: request.top_k, mode, scoreThreshold: request.score_threshold });
      return { query: request.query, retrieval_mode: mode, reranked, records };
    } catch (err) {
      throw err instanceof EmbeddingError ? gatewayRefusal(err) : err;
    }
  }

  /** The ids among `ids` that are not knowledge bases of this user. */
  async foreign(userId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const owned = await this.models.KnowledgeBase.query().select('id').where({ user_id: userId }).whereIn('id', ids);
    const mine = new Set(owned.map((kb) => kb.id));
    return ids.filter((id) => !mine.has(id));
  }
}

/** An embedding call the request needed failed: 503 (try again) when transient, else 502 with the gateway's verdict. */
export function gatewayRefusal(err: EmbeddingError): Error {
  return err.retryable ? new UnavailableError(`The model gateway is unavailable: ${err.message}`, 5, err.message) : new BadGatewayError(err.code, err.message);
}
