import type { Knex } from 'knex';
import { convert } from 'html-to-text';
import type { ChunkStrategy } from '../../src/db/knowledge-models.js';
import { cubeLiteral, embed } from '../../src/knowledge/embedding.js';
import { refreshKnowledgeBase } from '../../src/knowledge/service.js';
import { loadCentroids, lockCells, nearest } from '../../src/knowledge/ivf.js';
import { chunkText } from './chunking.js';

import { IngestionError } from './ingestion-error.js';

const INSERT_BATCH = 1000;

/** Uploaded bytes → plain text, by content type. Only valid UTF-8 is accepted. */
export function extractText(source: Buffer, contentType: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(source);
  } catch {
    throw new IngestionError('The document is not valid UTF-8 text');
  }
  if (text.includes('\u0000')) throw new IngestionError('The document contains NUL bytes; it looks binary, not text');
  return contentType === 'text/html' ? convert(text, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] }) : text;
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

/**
 * Parse → chunk → embed → index one document, replacing any chunks an earlier attempt left, and
 * keep the knowledge base's counts exact. A document that cannot be read ends `failed` with the
 * reason; the knowledge base stays usable.
 */
export async function ingestDocument(knex: Knex, documentId: string): Promise<'ready' | 'failed' | 'gone'> {
  const doc: DocumentToIngest | undefined = await knex('kb_documents as d')
    .join('knowledge_bases as kb', 'kb.id', 'd.knowledge_base_id')
    .select('d.id', 'd.knowledge_base_id', 'd.content_type', 'd.source', 'kb.chunk_strategy', 'kb.chunk_size', 'kb.chunk_overlap')
    .where('d.id', documentId)
    .first();
  if (!doc) return 'gone';
  let chunks: string[];
  try {
    chunks = chunkText(extractText(doc.source, doc.content_type), doc.chunk_strategy, { size: doc.chunk_size, overlap: doc.chunk_overlap });
    if (chunks.length === 0) throw new IngestionError('The document has no text to index');
  } catch (err) {
    if (!(err instanceof IngestionError)) throw err;
    await markFailed(knex, doc.id, doc.knowledge_base_id, err.message);
    return 'failed';
  }
  await knex.transaction(async (trx) => {
    // First, so a training (which rewrites every chunk's cell) never waits on rows this holds.
    await lockCells(trx, doc.knowledge_base_id, 'shared');
    await trx('kb_chunks').where({ document_id: doc.id }).delete();
    // Chunks join the knowledge base's IVF cells at once, if it has them.
    const centroids = await loadCentroids(trx, doc.knowledge_base_id);
    for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
      const batch = chunks.slice(start, start + INSERT_BATCH);
      const vectors = batch.map(embed);
      await trx.raw(
        `insert into kb_chunks (knowledge_base_id, document_id, position, content, embedding, cell)
         select ?, ?, position, content, embedding::cube, nullif(cell, '')::int
         from unnest(?::int[], ?::text[], ?::text[], ?::text[]) as t(position, content, embedding, cell)`,
        [
          doc.knowledge_base_id,
          doc.id,
          batch.map((_, i) => start + i),
          batch,
          vectors.map(cubeLiteral),
          vectors.map((vector) => (centroids.length ? String(nearest(centroids, vector)) : '')),
        ],
      );
    }
    await trx('kb_documents').where({ id: doc.id }).update({ status: 'ready', error: null, chunk_count: chunks.length, updated_at: trx.fn.now() });
    await refreshKnowledgeBase(trx, doc.knowledge_base_id);
  });
  return 'ready';
}

export async function markFailed(knex: Knex, documentId: string, knowledgeBaseId: string, reason: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await lockCells(trx, knowledgeBaseId, 'shared');
    await trx('kb_chunks').where({ document_id: documentId }).delete();
    await trx('kb_documents').where({ id: documentId }).update({ status: 'failed', error: reason, chunk_count: 0, updated_at: trx.fn.now() });
    await refreshKnowledgeBase(trx, knowledgeBaseId);
  });
}
