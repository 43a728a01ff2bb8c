import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex.js';
import { loadConfig } from '../src/config.js';
import { KnowledgeModels } from '../src/knowledge/models.js';
import { Retriever } from '../src/knowledge/retrieval.js';
import { VectorStore } from '../src/knowledge/vector-store.js';
import { recordProgress, switchGeneration } from '../src/knowledge/reembedding.js';
import { createDatabase } from './support/database.js';
import { record, sequentialScans, type Recorded } from './support/plans.js';

/**
 * A search costs what its knowledge base holds, not what every knowledge base holds: with many
 * other users' chunks and vectors seeded, each statement of retrieval (keyword, exact vector
 * scan, loading the results) and of re-embedding is planned without a sequential scan.
 */
const OTHER_KNOWLEDGE_BASES = 300;
const CHUNKS_EACH = 100;

async function seed(knex: Knex): Promise<void> {
  await knex.raw(`insert into users (id, email, password_hash) select gen_random_uuid(), 'kb-seed-' || g || '@example.test', 'x' from generate_series(1, ?) g`, [OTHER_KNOWLEDGE_BASES]);
  await knex.raw(`insert into knowledge_bases (user_id, name, chunk_strategy, chunk_size, chunk_overlap, retrieval_mode) select id, 'seed', 'paragraph', 500, 0, 'hybrid' from users`);
  await knex.raw(`insert into kb_documents (id, knowledge_base_id, name, content_type, size_bytes, content_hash, source, status) select gen_random_uuid(), id, 'seed.txt', 'text/plain', 1, id::text, '\\x00', 'ready' from knowledge_bases`);
  await knex.raw(
    `insert into kb_chunks (knowledge_base_id, document_id, position, content)
     select d.knowledge_base_id, d.id, g, 'seeded chunk about lava and bread number ' || g from kb_documents d cross join generate_series(1, ?) g`,
    [CHUNKS_EACH],
  );
  await knex.raw(`insert into kb_vectors (knowledge_base_id, generation, chunk_id, embedding) select knowledge_base_id, 1, id, array_fill(0.1::real, array[96]) from kb_chunks`);
  await knex.raw('analyze');
}

let database: Awaited<ReturnType<typeof createDatabase>>;
let knex: Knex;
beforeAll(async () => {
  database = await createDatabase();
  knex = createKnex(database.url, { poolMax: 2 });
  await seed(knex);
}, 120_000);
afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});

describe('knowledge statements at scale', () => {
  it('retrieval and re-embedding read only the knowledge base they serve', async () => {
    const [kb] = await knex('knowledge_bases').select('id', 'retrieval_mode', 'embedding_model', 'embedding_dimensions', 'vector_generation', 'rerank_model').limit(1);
    const recorded: Recorded[] = [];
    record(knex, recorded);
    const retriever = new Retriever(knex, new VectorStore(knex, { hnswMinVectors: 1000, efSearch: 100, buildMemoryMb: 512 }, 'exact'), new KnowledgeModels(loadConfig({}).model.gateway, 64));
    for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
      const { records } = await retriever.search([kb], { query: 'lava bread', topK: 5, mode });
      expect(records.length).toBeGreaterThan(0);
    }
    await knex('knowledge_bases').update({ pending_generation: 2, pending_model: 'local', pending_dimensions: 96 }).where({ id: kb.id });
    await recordProgress(knex, kb.id, 2);
    expect(await switchGeneration(knex, kb.id, 2)).toBe('incomplete');
    knex.removeAllListeners('query');

    const statements = recorded.filter((r) => /^\s*(select|update|with)/i.test(r.sql) && /kb_/.test(r.sql));
    expect(statements.length).toBeGreaterThanOrEqual(6);
    const scanned = await sequentialScans(knex, statements);
    expect(scanned.filter(({ tables }) => tables.some((table) => table.startsWith('kb_')))).toEqual([]);
  });
});
