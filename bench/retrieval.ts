import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { loadConfig } from '../src/config.js';
import { createUser } from '../src/auth/users.js';
import { bindModels } from '../src/db/models.js';
import { KnowledgeModels } from '../src/knowledge/models.js';
import { Retriever, type SearchableKnowledgeBase } from '../src/knowledge/retrieval.js';
import { VectorStore, vectorLiteral } from '../src/knowledge/vector-store.js';
import type { RetrievalMode } from '../src/db/knowledge-models.js';
import { ingestDocument } from '../workers/knowledge/ingest.js';
import { DEFAULT_EXTRACT_LIMITS } from '../workers/knowledge/extract.js';
import { startPglite } from '../test/support/pglite.js';
import { TestGateway } from '../test/support/gateway.js';
import { fakeEmbedding } from '../test/support/fake-embeddings.js';
import { pdfWithPages } from '../test/support/documents.js';
import { benchEnvironment, percentile, round, seededRandom } from './support.js';

/**
 * Knowledge (DESIGN §14), three parts, each against a baseline measured in the same run:
 * 1. pgvector HNSW at 100,000 chunks of 384 dimensions (PGlite: a real Postgres 18 with pgvector
 *    0.8, since this machine's Postgres has no pgvector): recall@10 against pgvector's exact scan
 *    of the same vectors, semantic and hybrid p50 (query embedding through the local gateway included).
 * 2. The exact path (this Postgres, no pgvector) at 10,000 and 100,000 chunks: semantic p50.
 * 3. Ingesting a 200-page PDF through a gateway embedding model answering at once: pages/s,
 *    chunks/s, and the share of ingestion time spent outside the embedding calls.
 * Targets: recall@10 ≥ 0.95, semantic p50 ≤ 20 ms, hybrid p50 ≤ 40 ms.
 */
const DIMENSIONS = 384;
const MODEL = 'text-embedding-3-small';
const LARGE = 100_000;
const QUERIES = 100;

const random = seededRandom(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qui', 'bel', 'dor', 'fen', 'gar', 'hul'];
const VOCABULARY = Array.from({ length: 6000 }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
/** Zipf-like: a few words are everywhere, most are rare, as in real text. */
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 2.5)]!;
const sentence = (words: number) => Array.from({ length: words }, word).join(' ');
/**
 * Real documents are about something: a chunk draws most of its words from one of TOPICS topics'
 * own vocabulary and the rest from everywhere, so embeddings cluster as real ones do (vectors of
 * uniformly random words have no near neighbours to find, for any index).
 */
const TOPICS = 1000;
const TOPIC_WORDS = Array.from({ length: TOPICS }, () => Array.from({ length: 25 }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!));
function aboutTopic(words: number, topic = Math.floor(random() * TOPICS)): string {
  const own = TOPIC_WORDS[topic]!;
  return Array.from({ length: words }, () => (random() < 0.7 ? own[Math.floor(random() * own.length)]! : word())).join(' ');
}

function timer() {
  const started = performance.now();
  return () => performance.now() - started;
}

/** A user, a knowledge base on `model` and one document per 1,000 chunks, then `count` chunks with their vectors. */
async function seed(knex: Knex, count: number, model: string, dimensions: number): Promise<SearchableKnowledgeBase> {
  const user = await createUser(bindModels(knex), { email: `bench-${Date.now()}-${count}@example.test`, password: 'bench-password' });
  const [kb] = await knex('knowledge_bases')
    .insert({ user_id: user.id, name: 'corpus', chunk_strategy: 'paragraph', chunk_size: 1000, chunk_overlap: 0, retrieval_mode: 'hybrid', embedding_model: model, embedding_dimensions: dimensions })
    .returning(['id', 'retrieval_mode', 'embedding_model', 'embedding_dimensions', 'vector_generation', 'rerank_model']);
  for (let start = 0; start < count; start += 1000) {
    const documentId = crypto.randomUUID();
    await knex('kb_documents').insert({ id: documentId, knowledge_base_id: kb.id, name: `doc-${start / 1000}.txt`, content_type: 'text/plain', size_bytes: 0, content_hash: documentId, source: Buffer.alloc(0), status: 'ready', chunk_count: 1000 });
    const texts = Array.from({ length: Math.min(1000, count - start) }, () => aboutTopic(40));
    const { rows } = await knex.raw(
      `insert into kb_chunks (knowledge_base_id, document_id, position, content) select ?, ?, p, c from unnest(?::int[], ?::text[]) as t(p, c) returning id::text as id, position`,
      [kb.id, documentId, texts.map((_, i) => i), texts],
    );
    const ids: string[] = [];
    for (const row of rows as { id: string; position: number }[]) ids[row.position] = row.id;
    await knex.raw(
      `insert into kb_vectors (knowledge_base_id, generation, chunk_id, embedding) select ?, 1, t.id, t.v::real[] from unnest(?::bigint[], ?::text[]) as t(id, v)`,
      [kb.id, ids, texts.map((text) => vectorLiteral(fakeEmbedding(text, dimensions)))],
    );
  }
  await knex('knowledge_bases').update({ total_chunks: count, document_count: Math.ceil(count / 1000) }).where({ id: kb.id });
  await knex.raw('analyze kb_chunks');
  await knex.raw('analyze kb_vectors');
  return kb;
}

/** Gateway models through the local test gateway, which answers at once; no retries (nothing fails). */
const knowledgeModels = (gateway: TestGateway) =>
  new KnowledgeModels({ url: gateway.url, apiKey: 'bench', maxRetries: 0, retryBaseMs: 1, retryMaxDelayMs: 1, idleTimeoutMs: 10_000, families: { deepResearch: /^$/, minimalEffort: /^$/ } }, 64);

const queries = () => Array.from({ length: QUERIES }, () => aboutTopic(3 + Math.floor(random() * 4)));

async function timeSearches(retriever: Retriever, kb: SearchableKnowledgeBase, mode: RetrievalMode, texts: string[], exact = false) {
  const timings: number[] = [];
  const results: string[][] = [];
  for (const query of texts) {
    const elapsed = timer();
    const { records } = await retriever.search([kb], { query, topK: 10, mode, exact });
    timings.push(elapsed());
    results.push(records.map((r) => r.chunk_id));
  }
  return { timings, results };
}

async function pgvectorPart(gateway: TestGateway) {
  const pglite = await startPglite();
  const knex = createKnex(pglite.url, { poolMax: 2, queryTimeoutMs: 600_000 });
  try {
    await migrateLatest(knex);
    const models = knowledgeModels(gateway);
    const vectors = new VectorStore(knex, { hnswMinVectors: 1000, efSearch: loadConfig({}).knowledge.efSearch, buildMemoryMb: 1024 });
    const retriever = new Retriever(knex, vectors, models);
    let elapsed = timer();
    const kb = await seed(knex, LARGE, MODEL, DIMENSIONS);
    console.log(`pgvector (PGlite): seeded ${LARGE} chunks of ${DIMENSIONS} dimensions in ${round(elapsed() / 1000, 1)} s`);
    elapsed = timer();
    await vectors.ensureIndex({ knowledgeBaseId: kb.id, generation: 1, dimensions: DIMENSIONS });
    console.log(`HNSW index (m 16, ef_construction 64) built in ${round(elapsed() / 1000, 1)} s`);
    const texts = queries();
    await timeSearches(retriever, kb, 'semantic', texts.slice(0, 10));
    const exact = await timeSearches(retriever, kb, 'semantic', texts, true);
    const semantic = await timeSearches(retriever, kb, 'semantic', texts);
    const hybrid = await timeSearches(retriever, kb, 'hybrid', texts);
    const recallOf = (results: string[][]) => results.reduce((sum, ids, i) => sum + ids.filter((id) => exact.results[i]!.includes(id)).length / Math.max(1, exact.results[i]!.length), 0) / texts.length;
    const recall = recallOf(semantic.results);
    const sweep = [];
    for (const efSearch of [40, 100]) {
      const other = new Retriever(knex, new VectorStore(knex, { hnswMinVectors: 1000, efSearch, buildMemoryMb: 1024 }, 'pgvector'), models);
      const run = await timeSearches(other, kb, 'semantic', texts);
      sweep.push({ search: `semantic, HNSW, ef_search ${efSearch}`, 'p50 ms': round(percentile(run.timings, 50)), 'p99 ms': round(percentile(run.timings, 99)), 'recall@10 vs exact': round(recallOf(run.results), 3) });
    }
    const plan = await knex.raw(`explain select chunk_id from kb_vectors where knowledge_base_id = ? and generation = 1 order by embedding::vector(${DIMENSIONS}) <=> ?::real[]::vector(${DIMENSIONS}) limit 10`, [kb.id, vectorLiteral(fakeEmbedding('x', DIMENSIONS))]);
    const usesHnsw = plan.rows.some((row: Record<string, string>) => /kb_vectors_hnsw/.test(Object.values(row).join(' ')));
    console.log(`\npgvector at ${LARGE} chunks, top_k 10, ${texts.length} queries each (in process; the query embedding is an HTTP call to the local gateway)`);
    console.table([
      { search: `semantic, HNSW, ef_search ${loadConfig({}).knowledge.efSearch} (default)`, 'p50 ms': round(percentile(semantic.timings, 50)), 'p99 ms': round(percentile(semantic.timings, 99)), 'recall@10 vs exact': round(recall, 3) },
      { search: 'hybrid, HNSW + keyword', 'p50 ms': round(percentile(hybrid.timings, 50)), 'p99 ms': round(percentile(hybrid.timings, 99)), 'recall@10 vs exact': '' },
      ...sweep,
      { search: 'semantic, exact (pgvector scan, baseline)', 'p50 ms': round(percentile(exact.timings, 50)), 'p99 ms': round(percentile(exact.timings, 99)), 'recall@10 vs exact': 1 },
    ]);
    console.log(`planner uses the HNSW index: ${usesHnsw}; semantic HNSW / exact p50: ${round(percentile(semantic.timings, 50) / percentile(exact.timings, 50), 3)}`);
    console.log('targets: recall@10 ≥ 0.95, semantic p50 ≤ 20 ms, hybrid p50 ≤ 40 ms');
  } finally {
    await knex.destroy();
    await pglite.close();
  }
}

async function exactPart(knex: Knex, gateway: TestGateway) {
  const models = knowledgeModels(gateway);
  const retriever = new Retriever(knex, new VectorStore(knex, { hnswMinVectors: Infinity, efSearch: 100, buildMemoryMb: 512 }), models);
  const rows = [];
  for (const [size, count] of [[10_000, 20], [LARGE, 5]] as const) {
    const kb = await seed(knex, size, MODEL, DIMENSIONS);
    const texts = queries().slice(0, count);
    await timeSearches(retriever, kb, 'semantic', texts.slice(0, 2));
    const { timings } = await timeSearches(retriever, kb, 'semantic', texts);
    rows.push({ chunks: size, queries: count, 'semantic p50 ms': round(percentile(timings, 50)), 'per 1,000 chunks ms': round((percentile(timings, 50) / size) * 1000, 3) });
  }
  console.log(`\nexact path (this Postgres, no pgvector), ${DIMENSIONS} dimensions, top_k 10`);
  console.table(rows);
  console.log(`100k / 10k p50: ${round(rows[1]!['semantic p50 ms'] / rows[0]!['semantic p50 ms'], 2)} (linear would be 10)`);
}

/** Times what the ingestion spends inside embedding calls by wrapping the model's embedder. */
async function pdfPart(knex: Knex, gateway: TestGateway) {
  const models = knowledgeModels(gateway);
  let embeddingMs = 0;
  let embedded = 0;
  const embedder = models.embedder(MODEL, DIMENSIONS);
  const embed = embedder.embed.bind(embedder);
  embedder.embed = async (texts, signal) => {
    const elapsed = timer();
    const vectors = await embed(texts, signal);
    embeddingMs += elapsed();
    embedded += texts.length;
    return vectors;
  };
  const vectors = new VectorStore(knex, { hnswMinVectors: Infinity, efSearch: 100, buildMemoryMb: 512 });
  const kb = await seed(knex, 0, MODEL, DIMENSIONS);
  await knex('knowledge_bases').update({ chunk_size: 500, chunk_overlap: 50, chunk_strategy: 'recursive' }).where({ id: kb.id });
  const pdf = await pdfWithPages(Array.from({ length: 200 }, () => `${sentence(60)}. ${sentence(60)}. ${sentence(60)}.`));
  const documentId = crypto.randomUUID();
  await knex('kb_documents').insert({ id: documentId, knowledge_base_id: kb.id, name: 'book.pdf', content_type: 'application/pdf', size_bytes: pdf.length, content_hash: documentId, source: pdf });
  const elapsed = timer();
  const { outcome } = await ingestDocument({ knex, models, vectors, limits: DEFAULT_EXTRACT_LIMITS }, documentId);
  const ms = elapsed();
  const { chunk_count: chunks } = await knex('kb_documents').select('chunk_count').where({ id: documentId }).first();
  console.log(`\n200-page PDF (${round(pdf.length / 1024, 0)} KiB) through ${MODEL} on a local gateway answering at once: ${outcome}`);
  console.table([
    {
      'total s': round(ms / 1000, 2),
      'pages/s': round(200 / (ms / 1000), 1),
      chunks,
      'chunks/s embedded': round(embedded / (embeddingMs / 1000), 0),
      'chunks/s end to end': round(chunks / (ms / 1000), 0),
      'share outside embedding calls': round(1 - embeddingMs / ms, 3),
    },
  ]);
}

export async function run() {
  const gateway = await TestGateway.start();
  const bench = await benchEnvironment('retrieval');
  try {
    const parts = new Set(process.argv.slice(3));
    const wanted = (part: string) => parts.size === 0 || parts.has(part);
    if (wanted('pdf')) await pdfPart(bench.knex, gateway);
    if (wanted('exact')) await exactPart(bench.knex, gateway);
    if (wanted('pgvector')) await pgvectorPart(gateway);
  } finally {
    await bench.drop();
    await gateway.close();
  }
}
