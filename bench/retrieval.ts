import { INGEST_QUEUE } from '../src/shared/jobs.js';
import { retrieve } from '../src/knowledge/retrieval.js';
import { Queue } from 'bullmq';
import { paragraphChunks } from '../workers/knowledge/chunking.js';
import { benchEnvironment, percentile, round, spawnProcess, stop } from './support.js';

/**
 * Ingests a generated corpus of 100,000 chunks through the API (100 documents of 1,000
 * paragraphs, each paragraph one chunk) on one worker, then times POST …/retrieve at top_k 10 in
 * each mode. Targets: keyword p50 ≤ 20 ms, hybrid p50 ≤ 50 ms.
 */
const PORT = 3920;
const DOCUMENTS = 100;
const PARAGRAPHS_PER_DOCUMENT = 1000;
const WORDS_PER_PARAGRAPH = 50;
const QUERIES = 200;
const MODES = ['keyword', 'semantic', 'hybrid'] as const;
/** Paragraphs average ~380 characters: nearly every one is a chunk of its own. */
const CHUNKING = { chunk_strategy: 'paragraph', chunk_size: 500, chunk_overlap: 0 } as const;

/** mulberry32: a small seeded generator, so every run ingests the same corpus. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = generator(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qui', 'bel', 'dor', 'fen', 'gar', 'hul'];
const VOCABULARY = Array.from({ length: 6000 }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
/** Zipf-like: a few words are everywhere, most are rare, as in real text. */
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 2.5)]!;
const paragraph = () => Array.from({ length: WORDS_PER_PARAGRAPH }, word).join(' ') + '.';

export async function run() {
  const bench = await benchEnvironment('retrieval');
  const env = { ...bench.env, PORT: String(PORT), LOG_LEVEL: 'info', BODY_LIMIT_BYTES: String(4 * 1024 * 1024) };
  const { key } = await bench.user('retrieval@example.test');
  const url = `http://127.0.0.1:${PORT}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const web = await spawnProcess('../src/server.js', env, /web listening/);
  const worker = await spawnProcess('../workers/main.js', env, /worker ready/);
  try {
    const kb = await call('POST', '/api/knowledge-bases', { name: 'corpus', ...CHUNKING });
    const documents = Array.from({ length: DOCUMENTS }, () => Array.from({ length: PARAGRAPHS_PER_DOCUMENT }, paragraph));
    // What ingestion must end with: the worker's own chunker, run here on the same text.
    const expected = documents.reduce((sum, paragraphs) => sum + paragraphChunks(paragraphs.join('\n\n'), { size: CHUNKING.chunk_size, overlap: CHUNKING.chunk_overlap }).length, 0);
    const started = performance.now();
    for (const [i, paragraphs] of documents.entries()) {
      await call('POST', `/api/knowledge-bases/${kb.id}/documents`, { name: `doc-${i}.txt`, content: paragraphs.join('\n\n') });
    }
    let state = await call('GET', `/api/knowledge-bases/${kb.id}`);
    while (state.status !== 'ready' || state.total_chunks < expected) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = await call('GET', `/api/knowledge-bases/${kb.id}`);
    }
    const seconds = (performance.now() - started) / 1000;
    // Index cells are trained by the ingestion jobs themselves: wait until the last job is done.
    const ingestQueue = new Queue(INGEST_QUEUE, { connection: bench.redis, prefix: bench.identity.keys.bullPrefix(INGEST_QUEUE) });
    while (Object.values(await ingestQueue.getJobCounts('active', 'waiting', 'delayed')).some((n) => n > 0)) await new Promise((resolve) => setTimeout(resolve, 250));
    const totalSeconds = (performance.now() - started) / 1000;
    const trained = await bench.knex('knowledge_bases').select('ann_trained_chunks').where({ id: kb.id }).first();
    console.log(`\ningested ${state.total_chunks} chunks (${DOCUMENTS} documents) in ${round(seconds)} s: ${round(state.total_chunks / seconds, 0)} chunks/s (upload + parse + chunk + embed + index, one worker)`);
    console.log(`semantic index cells last trained at ${trained.ann_trained_chunks} chunks; all jobs done after ${round(totalSeconds)} s`);

    // Queries: two words of a random paragraph, so keyword search has something to find.
    const queries = Array.from({ length: QUERIES }, () => {
      const words = documents[Math.floor(random() * DOCUMENTS)]![Math.floor(random() * PARAGRAPHS_PER_DOCUMENT)]!.split(' ');
      return `${words[Math.floor(random() * words.length)]!.replace('.', '')} ${words[Math.floor(random() * words.length)]!.replace('.', '')}`;
    });
    const rows = [];
    for (const mode of MODES) {
      for (const query of queries.slice(0, 20)) await call('POST', `/api/knowledge-bases/${kb.id}/retrieve`, { query, top_k: 10, retrieval_mode: mode });
      const timings: number[] = [];
      const exactTimings: number[] = [];
      let found = 0;
      let overlap = 0;
      for (const query of queries) {
        const t0 = performance.now();
        const result = await call('POST', `/api/knowledge-bases/${kb.id}/retrieve`, { query, top_k: 10, retrieval_mode: mode });
        timings.push(performance.now() - t0);
        if (result.records.length > 0) found += 1;
        // The same search scanning every chunk (no index cells), in this process: the recall baseline.
        const t1 = performance.now();
        const exact = await retrieve(bench.knex, { knowledgeBaseIds: [kb.id], query, topK: 10, mode, exact: true });
        exactTimings.push(performance.now() - t1);
        const ids = new Set(result.records.map((r: { chunk_id: string }) => r.chunk_id));
        overlap += exact.length ? exact.filter((r) => ids.has(r.chunk_id)).length / exact.length : 1;
      }
      rows.push({
        mode,
        'p50 ms': round(percentile(timings, 50)),
        'p99 ms': round(percentile(timings, 99)),
        'exact scan p50 ms (no HTTP)': round(percentile(exactTimings, 50)),
        'recall@10 vs exact': round(overlap / QUERIES, 3),
        'queries with results': `${found}/${QUERIES}`,
      });
    }
    console.log(`\nPOST /api/knowledge-bases/{id}/retrieve at top_k 10 over ${state.total_chunks} chunks, ${QUERIES} queries per mode (HTTP round trip included)`);
    console.table(rows);
    console.log('targets: keyword p50 ≤ 20 ms, hybrid p50 ≤ 50 ms');
  } finally {
    await Promise.all([stop(web), stop(worker)]);
    await bench.drop();
  }
}
