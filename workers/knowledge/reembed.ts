import type { Knex } from 'knex';
import { EmbeddingError } from '../../src/knowledge/embedders.js';
import { abandonGeneration, dropStaleVectors, recordProgress, switchGeneration } from '../../src/knowledge/reembedding.js';
import type { IngestionDeps } from './ingest.js';
import { assertDimensions } from './ingest.js';

/** Chunks embedded per step: one gateway batch or a few, and one progress update. */
const STEP = 256;
/** Passes over chunks ingested while the previous pass ran, before the switch is given up as a race lost. */
const MAX_PASSES = 10;

interface PendingGeneration {
  knowledgeBaseId: string;
  generation: number;
  model: string;
  dimensions: number;
}

/**
 * Fills a knowledge base's pending generation with its new embedding model (DESIGN §14), in
 * steps with progress, while retrieval keeps reading the active one; then builds its index and
 * switches in one update. A model that refuses the chunks ends it: the knowledge base keeps its
 * vectors and shows the error. A newer change (or a cancel) makes this job stale: it stops.
 */
export async function reembedKnowledgeBase(deps: IngestionDeps, knowledgeBaseId: string, generation: number): Promise<'switched' | 'stale' | 'failed'> {
  const { knex } = deps;
  await dropStaleVectors(knex, knowledgeBaseId);
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    const pending = await pendingOf(knex, knowledgeBaseId, generation);
    if (!pending) return 'stale';
    try {
      if (!(await fill(deps, pending))) return 'stale';
    } catch (err) {
      if (!(err instanceof EmbeddingError) || err.retryable) throw err;
      await abandonGeneration(knex, knowledgeBaseId, generation, `Re-embedding with "${pending.model}" failed; the previous vectors are kept: ${err.message}`);
      await dropStaleVectors(knex, knowledgeBaseId);
      return 'failed';
    }
    await deps.vectors.ensureIndex({ knowledgeBaseId, generation, dimensions: pending.dimensions });
    const outcome = await switchGeneration(knex, knowledgeBaseId, generation);
    if (outcome === 'stale') return 'stale';
    if (outcome === 'switched') {
      await dropStaleVectors(knex, knowledgeBaseId);
      await deps.vectors.dropIndexes(knowledgeBaseId, generation);
      return 'switched';
    }
  }
  throw new Error(`chunks kept arriving faster than re-embedding could follow (knowledge base ${knowledgeBaseId})`);
}

async function pendingOf(knex: Knex, knowledgeBaseId: string, generation: number): Promise<PendingGeneration | undefined> {
  const kb = await knex('knowledge_bases').select('pending_generation', 'pending_model', 'pending_dimensions').where({ id: knowledgeBaseId }).first();
  if (!kb || kb.pending_generation !== generation) return undefined;
  return { knowledgeBaseId, generation, model: kb.pending_model, dimensions: kb.pending_dimensions };
}

/** One pass in chunk-id order over the chunks without a vector in the generation; false once it is no longer pending. */
async function fill(deps: IngestionDeps, pending: PendingGeneration): Promise<boolean> {
  const { knex } = deps;
  const embedder = deps.models.embedder(pending.model, pending.model === 'local' ? undefined : pending.dimensions);
  for (let after = '0'; ; ) {
    const { rows } = await knex.raw(
      `select c.id::text as id, c.content from kb_chunks c
       where c.knowledge_base_id = :kb and c.id > :after and not exists
         (select 1 from kb_vectors v where v.knowledge_base_id = :kb and v.generation = :generation and v.chunk_id = c.id)
       order by c.id limit :limit`,
      { kb: pending.knowledgeBaseId, after, generation: pending.generation, limit: STEP },
    );
    if (rows.length === 0) return true;
    const vectors = await embedder.embed(rows.map((row: { content: string }) => row.content));
    assertDimensions(vectors, pending);
    const ids = rows.map((row: { id: string }) => row.id);
    await deps.vectors.insert(knex, { knowledgeBaseId: pending.knowledgeBaseId, generation: pending.generation }, ids, vectors);
    await recordProgress(knex, pending.knowledgeBaseId, pending.generation);
    if (!(await pendingOf(knex, pending.knowledgeBaseId, pending.generation))) return false;
    after = rows.at(-1).id;
  }
}


