import type { Knex } from 'knex';

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
       status = case when exists (select 1 from kb_documents d where d.knowledge_base_id = kb.id and d.status = 'processing') then 'processing'
                     when kb.pending_generation is not null then 'indexing' else 'ready' end,
       updated_at = now()
     where kb.id = ?`,
    [knowledgeBaseId],
  );
}
