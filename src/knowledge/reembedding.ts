import type { Knex } from 'knex';
import { refreshKnowledgeBase } from './refresh.js';

/**
 * A knowledge base's vector generations (DESIGN §14): retrieval reads `vector_generation`; a new
 * embedding model fills `pending_generation` in a worker job, and one update switches to it. Each
 * step locks the knowledge base's row first, so it serialises with ingestion (which writes the
 * active generation under the same lock) and with other steps.
 */

interface GenerationRow {
  embedding_model: string;
  embedding_dimensions: number;
  vector_generation: number;
  pending_generation: number | null;
  pending_model: string | null;
  pending_dimensions: number | null;
}

export async function lockGenerations(trx: Knex.Transaction, knowledgeBaseId: string): Promise<GenerationRow | undefined> {
  return trx('knowledge_bases')
    .select('embedding_model', 'embedding_dimensions', 'vector_generation', 'pending_generation', 'pending_model', 'pending_dimensions')
    .where({ id: knowledgeBaseId })
    .forNoKeyUpdate()
    .first();
}

const clearPending = { pending_generation: null, pending_model: null, pending_dimensions: null, indexing_done: null, indexing_total: null };

/**
 * The caller chose `model` with `dimensions`. Returns the generation a worker must now fill, or
 * undefined when there is nothing to embed: the model is already current (a pending change is
 * cancelled), already being filled, or the knowledge base has no chunk yet (it switches at once).
 */
export async function startReembedding(knex: Knex, knowledgeBaseId: string, model: string, dimensions: number): Promise<number | undefined> {
  return knex.transaction(async (trx) => {
    const kb = await lockGenerations(trx, knowledgeBaseId);
    if (!kb) return undefined;
    const next = Math.max(kb.vector_generation, kb.pending_generation ?? 0) + 1;
    if (kb.embedding_model === model && kb.embedding_dimensions === dimensions) {
      if (kb.pending_generation !== null) await finish(trx, knowledgeBaseId, { ...clearPending });
      return undefined;
    }
    if (kb.pending_model === model && kb.pending_dimensions === dimensions) return undefined;
    const { rows } = await trx.raw('select exists (select 1 from kb_chunks where knowledge_base_id = ?) as any', [knowledgeBaseId]);
    if (!rows[0].any) {
      // Nothing to re-embed; the new generation number makes an ingestion still embedding with the old model start over.
      await finish(trx, knowledgeBaseId, { ...clearPending, embedding_model: model, embedding_dimensions: dimensions, vector_generation: next, error: null });
      return undefined;
    }
    const total = trx('kb_chunks').count('*').where({ knowledge_base_id: knowledgeBaseId });
    await finish(trx, knowledgeBaseId, { pending_generation: next, pending_model: model, pending_dimensions: dimensions, indexing_done: 0, indexing_total: total, error: null });
    return next;
  });
}

/** Progress of the fill, as counts of the generation's vectors and of all chunks. */
export async function recordProgress(knex: Knex, knowledgeBaseId: string, generation: number): Promise<void> {
  await knex.raw(
    `update knowledge_bases set
       indexing_done = (select count(*) from kb_vectors where knowledge_base_id = :kb and generation = :generation),
       indexing_total = (select count(*) from kb_chunks where knowledge_base_id = :kb)
     where id = :kb and pending_generation = :generation`,
    { kb: knowledgeBaseId, generation },
  );
}

/**
 * Makes the filled generation the one retrieval reads, if it is still the pending one and no
 * chunk lacks a vector in it (ingestion may have added some since the last pass). One update.
 */
export async function switchGeneration(knex: Knex, knowledgeBaseId: string, generation: number): Promise<'switched' | 'stale' | 'incomplete'> {
  return knex.transaction(async (trx) => {
    const kb = await lockGenerations(trx, knowledgeBaseId);
    if (!kb || kb.pending_generation !== generation) return 'stale';
    const { rows } = await trx.raw(
      `select exists (select 1 from kb_chunks c where c.knowledge_base_id = :kb and not exists
         (select 1 from kb_vectors v where v.knowledge_base_id = :kb and v.generation = :generation and v.chunk_id = c.id)) as missing`,
      { kb: knowledgeBaseId, generation },
    );
    if (rows[0].missing) return 'incomplete';
    await finish(trx, knowledgeBaseId, { ...clearPending, vector_generation: generation, embedding_model: kb.pending_model, embedding_dimensions: kb.pending_dimensions, error: null });
    return 'switched';
  });
}

/** The fill stopped for good: the knowledge base keeps its current vectors and says why. */
export async function abandonGeneration(knex: Knex, knowledgeBaseId: string, generation: number, reason: string): Promise<void> {
  await knex.transaction(async (trx) => {
    const kb = await lockGenerations(trx, knowledgeBaseId);
    if (!kb || kb.pending_generation !== generation) return;
    await finish(trx, knowledgeBaseId, { ...clearPending, error: reason });
  });
}

/** Deletes the vectors of every generation but the active and pending ones. */
export async function dropStaleVectors(knex: Knex, knowledgeBaseId: string): Promise<number> {
  return knex('kb_vectors')
    .where({ knowledge_base_id: knowledgeBaseId })
    .whereNotIn('generation', knex('knowledge_bases').select('vector_generation').where({ id: knowledgeBaseId }))
    .whereNotIn('generation', knex('knowledge_bases').select('pending_generation').where({ id: knowledgeBaseId }).whereNotNull('pending_generation'))
    .delete();
}

async function finish(trx: Knex.Transaction, knowledgeBaseId: string, patch: Record<string, unknown>): Promise<void> {
  await trx('knowledge_bases').update({ ...patch, updated_at: trx.fn.now() }).where({ id: knowledgeBaseId });
  await refreshKnowledgeBase(trx, knowledgeBaseId);
}
