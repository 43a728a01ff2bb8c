import type { Knex } from 'knex';
import type { ChunkStrategy } from '../../src/db/knowledge-models.js';
import { refreshKnowledgeBase } from '../../src/knowledge/refresh.js';
import { lockGenerations } from '../../src/knowledge/reembedding.js';
import type { KnowledgeModels } from '../../src/knowledge/models.js';
import type { VectorSet, VectorStore } from '../../src/knowledge/vector-store.js';
import { EmbeddingError } from '../../src/knowledge/embedders.js';
import { IngestionError } from './ingestion-error.js';
import { chunkText } from './chunking.js';
import { extractDocument, type ExtractLimits } from './extract.js';

const INSERT_BATCH = 1000;
/** A generation switch between embedding and storing makes ingestion embed again; this many times at most. */
const EMBED_ATTEMPTS = 3;

export interface IngestionDeps {
  knex: Knex;
  models: KnowledgeModels;
  vectors: VectorStore;
  limits: ExtractLimits;
}

interface DocumentToIngest {
  id: string;
  knowledge_base_id: string;
  content_type: string;
  source: Buffer;
  chunk_strategy: ChunkStrategy;
  chunk_size: number;
  chunk_overlap: number;
}

interface Chunk {
  page: number | null;
  content: string;
}

/** The vectors ingestion writes: the knowledge base's active generation and its model. */
interface Target {
  generation: number;
  model: string;
  dimensions: number;
}

/** How an ingestion ended; a ready document names the vectors it joined (their index may now be due). */
export type IngestOutcome = { outcome: 'ready'; vectors: VectorSet } | { outcome: 'failed' | 'gone' };

/**
 * Parse → chunk (page by page, so each chunk keeps its page) → embed → store one document,
 * replacing any chunks an earlier attempt left, and keep the knowledge base's counts exact. A
 * document that cannot be read, or whose embedding model refuses it, ends `failed` with the
 * reason; the knowledge base stays usable.
 */
export async function ingestDocument(deps: IngestionDeps, documentId: string): Promise<IngestOutcome> {
  const { knex } = deps;
  const doc: DocumentToIngest | undefined = await knex('kb_documents as d')
    .join('knowledge_bases as kb', 'kb.id', 'd.knowledge_base_id')
    .select('d.id', 'd.knowledge_base_id', 'd.content_type', 'd.source', 'kb.chunk_strategy', 'kb.chunk_size', 'kb.chunk_overlap')
    .where('d.id', documentId)
    .first();
  if (!doc) return { outcome: 'gone' };
  try {
    const chunks = await chunksOf(doc, deps.limits);
    for (let attempt = 1; ; attempt++) {
      const target = await activeTarget(knex, doc.knowledge_base_id);
      if (!target) return { outcome: 'gone' };
      const vectors = await deps.models.embedder(target.model, target.model === 'local' ? undefined : target.dimensions).embed(chunks.map((c) => c.content));
      assertDimensions(vectors, target);
      if (await store(deps, doc, chunks, vectors, target)) {
        return { outcome: 'ready', vectors: { knowledgeBaseId: doc.knowledge_base_id, generation: target.generation, dimensions: target.dimensions } };
      }
      if (attempt >= EMBED_ATTEMPTS) throw new Error('the embedding model kept changing while the document was ingested');
    }
  } catch (err) {
    const reason = failureReason(err);
    if (reason === undefined) throw err;
    await markFailed(knex, doc.id, doc.knowledge_base_id, reason);
    return { outcome: 'failed' };
  }
}

async function chunksOf(doc: DocumentToIngest, limits: ExtractLimits): Promise<Chunk[]> {
  const pages = await extractDocument(doc.source, doc.content_type, limits);
  const options = { size: doc.chunk_size, overlap: doc.chunk_overlap };
  const chunks = pages.flatMap(({ page, text }) => chunkText(text, doc.chunk_strategy, options).map((content) => ({ page, content })));
  if (chunks.length === 0) throw new IngestionError('The document has no text to index');
  return chunks;
}

/** The document's own fault (or its model's refusal) as the reason it shows; undefined for anything worth retrying. */
function failureReason(err: unknown): string | undefined {
  if (err instanceof IngestionError) return err.message;
  if (err instanceof EmbeddingError && !err.retryable) return `The embedding model refused the document: ${err.message}`;
  return undefined;
}

async function activeTarget(knex: Knex, knowledgeBaseId: string): Promise<Target | undefined> {
  const kb = await knex('knowledge_bases').select('vector_generation', 'embedding_model', 'embedding_dimensions').where({ id: knowledgeBaseId }).first();
  return kb && { generation: kb.vector_generation, model: kb.embedding_model, dimensions: kb.embedding_dimensions };
}

export function assertDimensions(vectors: number[][], target: Pick<Target, 'model' | 'dimensions'>): void {
  const wrong = vectors.find((v) => v.length !== target.dimensions);
  if (wrong) throw new EmbeddingError('gateway_bad_response', `model "${target.model}" returned ${wrong.length} dimensions; the knowledge base has ${target.dimensions}`, false);
}

/**
 * Replaces the document's chunks and vectors under the knowledge base's row lock; false (nothing
 * written) when the active generation changed since the vectors were made.
 */
async function store(deps: IngestionDeps, doc: DocumentToIngest, chunks: Chunk[], vectors: number[][], target: Target): Promise<boolean> {
  return deps.knex.transaction(async (trx) => {
    const kb = await lockGenerations(trx, doc.knowledge_base_id);
    if (!kb) return true; // deleted meanwhile: nothing left to index
    if (kb.vector_generation !== target.generation) return false;
    await trx('kb_chunks').where({ document_id: doc.id }).delete();
    for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
      const batch = chunks.slice(start, start + INSERT_BATCH);
      const { rows } = await trx.raw(
        `insert into kb_chunks (knowledge_base_id, document_id, position, page, content)
         select ?, ?, position, page, content from jsonb_to_recordset(?::jsonb) as t(position int, page int, content text)
         returning id::text as id, position`,
        [doc.knowledge_base_id, doc.id, JSON.stringify(batch.map((c, i) => ({ position: start + i, page: c.page, content: c.content })))],
      );
      const ids: string[] = [];
      for (const row of rows as { id: string; position: number }[]) ids[row.position - start] = row.id;
      await deps.vectors.insert(trx, { knowledgeBaseId: doc.knowledge_base_id, generation: target.generation }, ids, vectors.slice(start, start + batch.length));
    }
    await trx('kb_documents').where({ id: doc.id }).update({ status: 'ready', error: null, chunk_count: chunks.length, updated_at: trx.fn.now() });
    await refreshKnowledgeBase(trx, doc.knowledge_base_id);
    return true;
  });
}

export async function markFailed(knex: Knex, documentId: string, knowledgeBaseId: string, reason: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('knowledge_bases').select('id').where({ id: knowledgeBaseId }).forNoKeyUpdate();
    await trx('kb_chunks').where({ document_id: documentId }).delete();
    await trx('kb_documents').where({ id: documentId }).update({ status: 'failed', error: reason, chunk_count: 0, updated_at: trx.fn.now() });
    await refreshKnowledgeBase(trx, knowledgeBaseId);
  });
}
