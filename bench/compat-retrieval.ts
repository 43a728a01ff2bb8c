import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { keywordSearch } from '../src/knowledge/keyword-search.js';
import { PASSAGES, QUESTIONS } from './data/public-domain-faq.js';
import { benchEnvironment, percentile, round, seededRandom } from './support.js';

/**
 * Keyword retrieval (issue 34, DESIGN §23): today's ranking (chunks holding any of the question's
 * terms, BM25) against the search it replaced (websearch_to_tsquery: every term required,
 * ts_rank_cd), both measured in this run on the same database:
 * 1. recall@5 on a labelled set of public-domain FAQ passages (bench/data/public-domain-faq.ts),
 *    alone and hidden among 100,000 synthetic chunks of one knowledge base;
 * 2. p50/p99 of the search statement at 100,000 chunks;
 * 3. p50 on the small knowledge base while another user's 100,000 chunks share the table (a
 *    search costs what its own knowledge base holds).
 * `npm run bench -- compat-retrieval`; bench/compat.ts calls keywordRetrievalBench().
 */
const LARGE = 100_000;
const TOP_K = 5;
const ROUNDS = 5;
const BATCH = 2000;

type Search = (knex: Knex, kbIds: string[], query: string, limit: number) => Promise<{ id: string }[]>;

/** The search before issue 34, as it was in src/knowledge/retrieval.ts: every term required. */
const allTermsSearch: Search = async (knex, kbIds, query, limit) => {
  const { rows } = await knex.raw(
    `select c.id::text as id, ts_rank_cd(c.tsv, q) as score
     from kb_chunks c, websearch_to_tsquery('english', :query) q
     where c.knowledge_base_id = any(cast(:kbs as uuid[])) and c.tsv @@ q
     order by score desc, c.id limit :limit`,
    { kbs: kbIds, query, limit },
  );
  return rows;
};

const anyTermSearch: Search = (knex, kbIds, query, limit) => keywordSearch(knex, kbIds, query, limit);

const SEARCHES: [name: string, search: Search][] = [
  ['every term (before, baseline)', allTermsSearch],
  ['any term, BM25 (now)', anyTermSearch],
];


/**
 * Distractors: 60–100 words, a third of them from the labelled passages' own vocabulary (so the
 * questions' terms are common in the corpus, as in a real knowledge base), the rest made-up words
 * drawn Zipf-like (a few everywhere, most rare).
 */
function distractors(count: number): string[] {
  const random = seededRandom(34);
  const real = [...new Set(Object.values(PASSAGES).join(' ').toLowerCase().match(/[a-z]{3,}/g))];
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qui', 'bel', 'dor', 'fen', 'gar', 'hul'];
  const madeUp = Array.from({ length: 8000 }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
  const word = () => (random() < 1 / 3 ? real[Math.floor(random() * real.length)]! : madeUp[Math.floor(madeUp.length * random() ** 2.5)]!);
  return Array.from({ length: count }, () => Array.from({ length: 60 + Math.floor(random() * 41) }, word).join(' '));
}

/** A knowledge base of the labelled passages (and `extra` chunks); the passage key of each labelled chunk id. */
async function knowledgeBase(knex: Knex, userId: string, extra: string[]): Promise<{ id: string; passageOf: Map<string, string> }> {
  const [kb] = await knex('knowledge_bases')
    .insert({ user_id: userId, name: 'faq', chunk_strategy: 'paragraph', chunk_size: 1000, chunk_overlap: 0, retrieval_mode: 'keyword' })
    .returning('id');
  const keys = Object.keys(PASSAGES);
  const contents = [...keys.map((key) => PASSAGES[key]!), ...extra];
  const passageOf = new Map<string, string>();
  for (let start = 0; start < contents.length; start += BATCH) {
    const batch = contents.slice(start, start + BATCH);
    const documentId = randomUUID();
    await knex('kb_documents').insert({ id: documentId, knowledge_base_id: kb.id, name: `part-${start / BATCH}.txt`, content_type: 'text/plain', size_bytes: 0, content_hash: documentId, source: Buffer.alloc(0), status: 'ready', chunk_count: batch.length });
    const { rows } = await knex.raw(
      `insert into kb_chunks (knowledge_base_id, document_id, position, content) select ?, ?, p, c from unnest(?::int[], ?::text[]) as t(p, c) returning id::text as id, position`,
      [kb.id, documentId, batch.map((_, i) => start + i), batch],
    );
    for (const row of rows as { id: string; position: number }[]) if (row.position < keys.length) passageOf.set(row.id, keys[row.position]!);
  }
  return { id: kb.id, passageOf };
}

async function recallAt(knex: Knex, search: Search, kb: { id: string; passageOf: Map<string, string> }): Promise<number> {
  let found = 0;
  for (const [question, passage] of QUESTIONS) {
    const hits = await search(knex, [kb.id], question, TOP_K);
    if (hits.some((hit) => kb.passageOf.get(hit.id) === passage)) found += 1;
  }
  return found / QUESTIONS.length;
}

/** Each question through each search in turn, ROUNDS times after one warm-up round: milliseconds per search. */
async function timings(knex: Knex, kbId: string): Promise<Map<string, number[]>> {
  const measured = new Map<string, number[]>(SEARCHES.map(([name]) => [name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [question] of QUESTIONS) {
      for (const [name, search] of SEARCHES) {
        const started = performance.now();
        await search(knex, [kbId], question, TOP_K);
        if (round > 0) measured.get(name)!.push(performance.now() - started);
      }
    }
  }
  return measured;
}

export async function keywordRetrievalBench(): Promise<void> {
  const bench = await benchEnvironment('kw_retrieval');
  const { knex } = bench;
  try {
    const [owner, other] = await Promise.all([bench.user(`kw-owner-${randomUUID()}@example.test`), bench.user(`kw-other-${randomUUID()}@example.test`)]);
    const small = await knowledgeBase(knex, owner.user.id, []);
    const started = performance.now();
    const large = await knowledgeBase(knex, other.user.id, distractors(LARGE - Object.keys(PASSAGES).length));
    await knex.raw('vacuum analyze kb_chunks, kb_terms, kb_documents');
    console.log(`keyword retrieval: ${Object.keys(PASSAGES).length} labelled passages, ${QUESTIONS.length} questions; ${LARGE} chunks seeded in ${round((performance.now() - started) / 1000, 1)} s`);

    const recall = [];
    for (const [name, search] of SEARCHES) {
      recall.push({ search: name, 'recall@5 (labelled set)': round(await recallAt(knex, search, small), 3), [`recall@5 (among ${LARGE} chunks)`]: round(await recallAt(knex, search, large), 3) });
    }
    console.table(recall);
    const [before, now] = recall;
    console.log(`recall@5 now / before: ${round(now!['recall@5 (labelled set)'] / Math.max(before!['recall@5 (labelled set)'], 1e-9), 2)} (labelled set), ${round(now![`recall@5 (among ${LARGE} chunks)`] as number / Math.max(before![`recall@5 (among ${LARGE} chunks)`] as number, 1e-9), 2)} (among ${LARGE})`);

    const atLarge = await timings(knex, large.id);
    const atSmall = await timings(knex, small.id);
    const rows = SEARCHES.map(([name]) => ({
      search: name,
      [`p50 ms at ${LARGE}`]: round(percentile(atLarge.get(name)!, 50)),
      [`p99 ms at ${LARGE}`]: round(percentile(atLarge.get(name)!, 99)),
      'p50 ms, own 36 chunks beside 100,000 of another user': round(percentile(atSmall.get(name)!, 50)),
    }));
    console.log(`\nsearch statement latency, top ${TOP_K}, ${QUESTIONS.length} questions × ${ROUNDS} rounds, interleaved`);
    console.table(rows);
    const p50 = (map: Map<string, number[]>, index: number) => percentile(map.get(SEARCHES[index]![0])!, 50);
    console.log(`p50 now / before at ${LARGE} chunks: ${round(p50(atLarge, 1) / p50(atLarge, 0), 2)}; small knowledge base: ${round(p50(atSmall, 1) / p50(atSmall, 0), 2)}`);
  } finally {
    await bench.drop();
  }
}

export const run = keywordRetrievalBench;
