import type { Knex } from 'knex';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { loadConfig } from '../src/config.js';
import { knowledgeParts } from '../src/knowledge/assembly.js';
import { embed } from '../src/knowledge/embedding.js';
import { vectorLiteral } from '../src/knowledge/vector-store.js';
import { buildMemoryService } from '../src/memories/assembly.js';
import type { MemoryService } from '../src/memories/service.js';
import { startPglite } from '../test/support/pglite.js';
import { benchEnvironment, percentile, postRun, round, seededRandom, spawnProcess, stop } from './support.js';

/**
 * Memory (DESIGN §25, §14), three parts, each figure beside a baseline measured in the same run.
 *
 * 1. Recall scaling: one user with SMALL then LARGE memories (realistic facts, embedded by the local
 *    embedder, in five namespaces: `user` and four agents'), beside a few other users' rows in the
 *    same table (one HNSW index for all). p50/p90 of `MemoryService.recall` (an agent's two
 *    namespaces, k 3, the query embedding included) and of the API's `list` with `q` (size 10, with
 *    its count) over QUERIES distinct questions after a warm-up, on
 *    - PGlite with pgvector 0.8 (the index path: `ensureIndex`, HNSW with iterative scan): target
 *      LARGE/SMALL p50 ≤ 1.5; recall@3 of its results against an exact search (computed in the bench
 *      from the same float4 vectors; a result as close as the exact 3rd counts, so ties are not misses);
 *      EXPLAIN ANALYZE of the statement `nearest` sends, captured from knex, at LARGE;
 *    - this machine's Postgres (no pgvector: the exact path, cube distance over the user's rows,
 *      linear by design).
 * 2. First token with memory on and off: a web and a worker (local model, zero token delay), two
 *    agents of one user identical but for `memory`, the user with MEMORY_USER_ROWS memories; runs
 *    (POST /api/react with agent_id, each a new conversation) in pairs, the order alternating.
 *    Target: on − off p50 ≤ 3 ms.
 * 3. recall@3 of a labelled set (40 memories about one person, 25 questions each labelled with the
 *    memory that answers it), the local embedder (lexical: a word-and-trigram hash, no meaning).
 *
 * `npm run bench -- memory [scaling|first-token|labelled]`; BENCH_QUICK=1: 2,000 and 20,000 memories, fewer runs.
 */
const QUICK = process.env.BENCH_QUICK === '1';
const SMALL = QUICK ? 2_000 : 10_000;
const LARGE = QUICK ? 20_000 : 100_000;
const QUERIES = 200;
const WARM_UP = 30;
const OTHER_USERS = 3;
const OTHER_ROWS = QUICK ? 200 : 1_000;
const AGENT_NAMESPACES = 4;
const K = 3;
const MEMORY_USER_ROWS = 200;
const PAIRS = QUICK ? 100 : 300;
const PAIR_WARM_UP = 20;
const PORT = 3991;
const BATCH = 1_000;

const summary: { figure: string; value: string | number; target: string }[] = [];

function timer() {
  const started = performance.now();
  return () => performance.now() - started;
}

interface SeedRow {
  id: string;
  userId: string;
  namespace: string;
  content: string;
  vector: number[];
  /** The vector as Postgres keeps it (real[]). */
  stored: Float32Array;
  createdAt: Date;
}

interface Corpus {
  user: string;
  agents: string[];
  others: string[];
  /** The big user's rows, oldest last; the first SMALL are seeded first. */
  rows: SeedRow[];
  otherRows: SeedRow[];
  queries: { q: string; agentId: string }[];
}

/** The corpus, the same for both servers: ids chosen here so results can be compared with the exact answer computed here. */
function buildCorpus(): Corpus {
  const random = seededRandom(7);
  const user = randomUUID();
  const agents = Array.from({ length: AGENT_NAMESPACES }, () => randomUUID());
  const others = Array.from({ length: OTHER_USERS }, () => randomUUID());
  const all = facts(LARGE + OTHER_USERS * OTHER_ROWS + QUERIES, 11);
  const now = Date.now();
  // 40% the user's namespace, 30% the first agent's, 10% each of the others': an agent reads its own and `user`.
  const namespaceOf = () => {
    const r = random();
    return r < 0.4 ? 'user' : r < 0.7 ? agents[0]! : agents[1 + Math.floor(random() * (AGENT_NAMESPACES - 1))]!;
  };
  const row = (userId: string, namespace: string, content: string, i: number): SeedRow => {
    const vector = embed(content);
    return { id: randomUUID(), userId, namespace, content, vector, stored: Float32Array.from(vector), createdAt: new Date(now - i * 60_000) };
  };
  const rows = all.slice(0, LARGE).map((f, i) => row(user, namespaceOf(), f.content, i));
  const otherRows = all.slice(LARGE, LARGE + OTHER_USERS * OTHER_ROWS).map((f, i) => row(others[i % OTHER_USERS]!, 'user', f.content, i));
  // Questions of the same kinds, from facts not in the corpus (their wording asks about the same people, places and things).
  const queries = all.slice(LARGE + OTHER_USERS * OTHER_ROWS).map((f, i) => ({ q: f.question, agentId: agents[i % AGENT_NAMESPACES]! }));
  return { user, agents, others, rows, otherRows, queries };
}

async function insertRows(knex: Knex, rows: SeedRow[]) {
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH);
    await knex.raw(
      `insert into memories (id, user_id, namespace, content, embedding_model, dimensions, embedding, created_at, updated_at)
       select t.id, t.u, t.n, t.c, 'local', ${batch[0]!.vector.length}, t.v::real[], t.at, t.at
       from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::timestamptz[]) as t(id, u, n, c, v, at)`,
      [batch.map((r) => r.id), batch.map((r) => r.userId), batch.map((r) => r.namespace), batch.map((r) => r.content), batch.map((r) => vectorLiteral(r.vector)), batch.map((r) => r.createdAt.toISOString())],
    );
  }
  await knex.raw(
    `insert into memory_counts (user_id, count) select user_id, count(*)::int from memories group by user_id
     on conflict (user_id) do update set count = excluded.count`,
  );
  await knex.raw('analyze memories');
}

async function createUsers(knex: Knex, ids: string[]) {
  await knex('users').insert(ids.map((id) => ({ id, email: `bench-${id}@example.test`, name: 'bench', role: 'member', password_hash: 'not a password' })));
}

/** The exact top `k` of the scope, from the vectors as stored: [id, similarity] closest first. */
function exactTop(rows: SeedRow[], query: number[], namespaces: string[], k: number): [string, number][] {
  const best: [string, number][] = [];
  for (const row of rows) {
    if (!namespaces.includes(row.namespace)) continue;
    let dot = 0;
    let norm = 0;
    for (let i = 0; i < query.length; i++) {
      dot += row.stored[i]! * query[i]!;
      norm += row.stored[i]! * row.stored[i]!;
    }
    const similarity = dot / Math.sqrt(norm || 1);
    if (best.length < k || similarity > best[best.length - 1]![1]) {
      best.push([row.id, similarity]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

/** A result counts when it is one of the exact top k, or as close as the exact k-th (a tie). */
function hitsOf(got: { id: string; score?: number }[], exact: [string, number][]): number {
  const ids = new Set(exact.map(([id]) => id));
  const kth = exact[exact.length - 1]?.[1] ?? -Infinity;
  return got.slice(0, exact.length).filter((r) => ids.has(r.id) || (r.score ?? -Infinity) >= kth - 1e-4).length;
}

interface Measured {
  recall: number[];
  list: number[];
  recallAt3: number;
  short: number;
  /** Mean of (exact k-th similarity − returned k-th similarity): how much farther a missed neighbour's replacement is. */
  gap: number;
}

async function measure(service: MemoryService, corpus: Corpus, seeded: SeedRow[], withList = true): Promise<Measured> {
  const { user, queries } = corpus;
  for (const { q, agentId } of queries.slice(0, WARM_UP)) {
    await service.recall(user, agentId, q, K);
    if (withList) await service.list(user, { q }, { page: 1, size: 10 });
  }
  const recall: number[] = [];
  const list: number[] = [];
  let hits = 0;
  let wanted = 0;
  let short = 0;
  let gap = 0;
  for (const { q, agentId } of queries) {
    let elapsed = timer();
    const got = await service.recall(user, agentId, q, K);
    recall.push(elapsed());
    if (withList) {
      elapsed = timer();
      await service.list(user, { q }, { page: 1, size: 10 });
      list.push(elapsed());
    }
    const exact = exactTop(seeded, embed(q), [agentId, 'user'], K);
    hits += hitsOf(got, exact);
    wanted += exact.length;
    if (got.length < exact.length) short++;
    gap += (exact[exact.length - 1]?.[1] ?? 0) - (got[exact.length - 1]?.score ?? 0);
  }
  return { recall, list, recallAt3: hits / wanted, short, gap: gap / queries.length };
}

type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Total Time'?: number; Plans?: PlanNode[] };

function planNodes(node: PlanNode, depth = 0): string[] {
  const name = `${'  '.repeat(depth)}${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`;
  const actual = node['Actual Rows'] === undefined ? '' : ` (rows ${node['Actual Rows']}, ${round(node['Actual Total Time'] ?? 0, 2)} ms)`;
  return [name + actual, ...(node.Plans ?? []).flatMap((child) => planNodes(child, depth + 1))];
}

/**
 * EXPLAIN ANALYZE of the search statement `run` sends, captured from knex's query events and
 * replayed (with the settings statement before it, in one transaction) on the same server.
 */
async function explainNearest(knex: Knex, run: () => Promise<unknown>): Promise<string[]> {
  const sent: { sql: string; bindings: unknown[] }[] = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => sent.push({ sql: q.sql, bindings: q.bindings ?? [] });
  knex.on('query', listener);
  try {
    await run();
  } finally {
    knex.off('query', listener);
  }
  const search = sent.findIndex((q) => /from memories/.test(q.sql) && /<=>|cube|kb_dot/.test(q.sql));
  if (search < 0) throw new Error(`no search statement among ${sent.map((q) => q.sql.slice(0, 60)).join(' | ')}`);
  const settings = sent.slice(0, search).filter((q) => /set_config/.test(q.sql));
  // knex reports the statement as sent ($1, $2, …): back to `?` with the bindings in the order they appear.
  const replayable = ({ sql, bindings }: { sql: string; bindings: unknown[] }) => {
    const ordered: unknown[] = [];
    return { sql: sql.replace(/\$(\d+)/g, (_, n: string) => (ordered.push(bindings[Number(n) - 1]), '?')), bindings: ordered as Knex.RawBinding[] };
  };
  return knex.transaction(async (trx) => {
    for (const q of settings.map(replayable)) await trx.raw(q.sql, q.bindings);
    const statement = replayable(sent[search]!);
    const { rows } = await trx.raw(`explain (analyze, format json) ${statement.sql}`, statement.bindings);
    const plan = (rows[0]['QUERY PLAN'] as { Plan: PlanNode; 'Execution Time': number }[])[0]!;
    return [...planNodes(plan.Plan), `Execution Time ${round(plan['Execution Time'], 2)} ms`];
  });
}

const p = (values: number[], q: number) => round(percentile(values, q), 2);

interface Scaling {
  rows: Record<string, string | number>[];
  small: Measured;
  large: Measured;
  plan: string[];
  smallPlan: string[];
  smallUserPlan: string[];
  smallServer: number[];
  largeServer: number[];
}

const SERVER_QUERIES = 50;

/** The recall statement's execution time on the server (EXPLAIN ANALYZE), without round trips or the client: SERVER_QUERIES questions. */
async function serverTimes(knex: Knex, service: MemoryService, corpus: Corpus): Promise<number[]> {
  const times: number[] = [];
  for (const { q, agentId } of corpus.queries.slice(0, SERVER_QUERIES)) {
    const lines = await explainNearest(knex, () => service.recall(corpus.user, agentId, q, K));
    times.push(Number(/Execution Time ([\d.]+)/.exec(lines[lines.length - 1]!)![1]));
  }
  return times;
}

const serviceOn = (knex: Knex, efSearch?: number) => {
  const config = loadConfig({});
  const settings = efSearch ? { ...config, knowledge: { ...config.knowledge, efSearch } } : config;
  return buildMemoryService(settings, knex, knowledgeParts(settings, knex));
};

/** Part 1 on one server: SMALL, then LARGE memories of one user (plus the other users' rows). */
async function scaling(label: string, knex: Knex, corpus: Corpus, index: boolean): Promise<Scaling> {
  const service = serviceOn(knex);
  await createUsers(knex, [corpus.user, ...corpus.others]);
  const table: Record<string, string | number>[] = [];
  let elapsed = timer();
  await insertRows(knex, [...corpus.otherRows, ...corpus.rows.slice(0, SMALL)]);
  console.log(`${label}: seeded ${SMALL} + ${corpus.otherRows.length} (other users) memories in ${round(elapsed() / 1000, 1)} s`);
  const build = async () => {
    if (!index) return;
    await knex.raw('drop index if exists memories_hnsw_96');
    const t = timer();
    if (!(await service.ensureIndex())) throw new Error('ensureIndex did not build the index');
    console.log(`${label}: HNSW index (ensureIndex) built in ${round(t() / 1000, 1)} s`);
  };
  await build();
  const small = await measure(service, corpus, corpus.rows.slice(0, SMALL));
  const smallServer = await serverTimes(knex, service, corpus);
  const { q, agentId } = corpus.queries[0]!;
  const smallPlan = await explainNearest(knex, () => service.recall(corpus.user, agentId, q, K));
  // Seeded without the index and built again after: as fast as a bulk load gets, the same index as one grown row by row.
  if (index) await knex.raw('drop index if exists memories_hnsw_96');
  elapsed = timer();
  await insertRows(knex, corpus.rows.slice(SMALL));
  console.log(`${label}: seeded ${LARGE - SMALL} more in ${round(elapsed() / 1000, 1)} s${index ? ' (the index dropped first and built again after)' : ''}`);
  await build();
  const large = await measure(service, corpus, corpus.rows);
  const largeServer = await serverTimes(knex, service, corpus);
  const sweep: Record<string, string | number>[] = [];
  if (index) {
    for (const efSearch of [40, 100, 400, 1000]) {
      const m = await measure(serviceOn(knex, efSearch), corpus, corpus.rows, false);
      sweep.push({ 'hnsw.ef_search': efSearch, 'recall p50 ms': p(m.recall, 50), 'recall p90 ms': p(m.recall, 90), 'recall@3 vs exact': round(m.recallAt3, 3), 'queries short of k': m.short });
    }
  }
  for (const [size, m, server] of [[SMALL, small, smallServer], [LARGE, large, largeServer]] as const) {
    table.push({ memories: size, 'recall p50 ms': p(m.recall, 50), 'recall p90 ms': p(m.recall, 90), [`server p50 ms (${SERVER_QUERIES} q)`]: p(server, 50), 'list q p50 ms': p(m.list, 50), 'list q p90 ms': p(m.list, 90), 'recall@3 vs exact': round(m.recallAt3, 3), 'k-th sim. gap': round(m.gap, 4), 'queries short of k': m.short });
  }
  const plan = await explainNearest(knex, () => service.recall(corpus.user, agentId, q, K));
  // One of the other users (OTHER_ROWS memories in a table of LARGE + more): does the search still find theirs, and how?
  const other = corpus.others[0]!;
  const smallUserPlan = await explainNearest(knex, () => service.recall(other, agentId, q, K));
  const otherGot = await service.recall(other, agentId, q, K);
  const otherExact = exactTop(corpus.otherRows.filter((r) => r.userId === other), embed(q), ['user'], K);
  console.log(`\n${label}: recall over ${corpus.queries.length} questions (k ${K}, an agent's namespace + user; list: q, size 10, with its count), after ${WARM_UP} warm-up`);
  console.table(table);
  console.log(`${label}: ${LARGE}/${SMALL} recall p50 ratio ${round(large.recall.length ? percentile(large.recall, 50) / percentile(small.recall, 50) : NaN, 2)}; list q p50 ratio ${round(percentile(large.list, 50) / percentile(small.list, 50), 2)}`);
  if (sweep.length) {
    console.log(`${label}: at ${LARGE}, other ef_search values (KB_HNSW_EF_SEARCH; default ${loadConfig({}).knowledge.efSearch} above)`);
    console.table(sweep);
  }
  console.log(`${label}: plan of the recall statement at ${SMALL} (EXPLAIN ANALYZE):\n    ${smallPlan.join('\n    ')}`);
  console.log(`${label}: plan of the recall statement at ${LARGE} (EXPLAIN ANALYZE):\n    ${plan.join('\n    ')}`);
  console.log(`${label}: a user with ${OTHER_ROWS} memories in the same table: ${otherGot.length} returned, ${hitsOf(otherGot, otherExact)}/${otherExact.length} of the exact top ${K}; plan:\n    ${smallUserPlan.join('\n    ')}`);
  console.log(`${label}: server-side (EXPLAIN ANALYZE execution time) p50 ratio ${round(percentile(largeServer, 50) / percentile(smallServer, 50), 2)}`);
  return { rows: table, small, large, plan, smallPlan, smallUserPlan, smallServer, largeServer };
}

/** Part 3 on one server: a user with the labelled memories; recall@3 and the questions missed. */
async function labelled(label: string, knex: Knex): Promise<number> {
  const service = serviceOn(knex);
  const user = randomUUID();
  await createUsers(knex, [user]);
  const ids: string[] = [];
  for (const content of LABELLED_MEMORIES) ids.push((await service.create(user, { namespace: 'user', content })).id);
  const agentId = randomUUID();
  let found = 0;
  const missed: string[] = [];
  for (const [question, answer] of LABELLED_QUESTIONS) {
    const got = await service.recall(user, agentId, question, K);
    if (got.some((m) => m.id === ids[answer])) found++;
    else missed.push(`"${question}" → got ${got.map((m) => `"${m.content}"`).join(', ')}`);
  }
  const share = found / LABELLED_QUESTIONS.length;
  console.log(`\n${label}: labelled set, ${LABELLED_MEMORIES.length} memories, ${LABELLED_QUESTIONS.length} questions: recall@${K} ${round(share, 3)} (${found}/${LABELLED_QUESTIONS.length}); missed:\n    ${missed.join('\n    ')}`);
  return share;
}

async function scalingParts(parts: Set<string>) {
  const corpus = buildCorpus();
  const results: Record<string, Scaling> = {};
  const labelledShares: Record<string, number> = {};
  const wantScaling = parts.size === 0 || parts.has('scaling');
  const wantLabelled = parts.size === 0 || parts.has('labelled');
  if (!wantScaling && !wantLabelled) return;

  const bench = await benchEnvironment('memory');
  try {
    if (wantScaling) results.exact = await scaling('exact path (this Postgres, no pgvector)', bench.knex, corpus, false);
    if (wantLabelled) labelledShares.exact = await labelled('exact path (this Postgres)', bench.knex);
  } finally {
    await bench.drop();
  }
  const pglite = await startPglite();
  const knex = createKnex(pglite.url, { poolMax: 2, queryTimeoutMs: 1_800_000 });
  try {
    await migrateLatest(knex);
    if (wantScaling) results.pgvector = await scaling('pgvector (PGlite, HNSW)', knex, corpus, true);
    if (wantLabelled) labelledShares.pgvector = await labelled(`pgvector (PGlite, HNSW${wantScaling ? `, in the table of ${LARGE} memories` : ''})`, knex);
  } finally {
    await knex.destroy();
    await pglite.close();
  }
  const ratio = (m: Scaling) => round(percentile(m.large.recall, 50) / percentile(m.small.recall, 50), 2);
  if (results.pgvector) {
    const r = results.pgvector;
    summary.push({ figure: `recall p50, pgvector HNSW, ${SMALL} → ${LARGE} memories (ms)`, value: `${p(r.small.recall, 50)} → ${p(r.large.recall, 50)}`, target: '' });
    summary.push({ figure: `recall p50 ratio ${LARGE}/${SMALL}, pgvector HNSW`, value: ratio(r), target: '≤ 1.5' });
    summary.push({ figure: `server-side p50 ratio ${LARGE}/${SMALL}, pgvector HNSW (EXPLAIN ANALYZE)`, value: `${round(percentile(r.largeServer, 50) / percentile(r.smallServer, 50), 2)} (${p(r.smallServer, 50)} → ${p(r.largeServer, 50)} ms)`, target: '' });
    summary.push({ figure: `recall@3 of HNSW vs exact at ${SMALL} / ${LARGE} (mean k-th similarity gap)`, value: `${round(r.small.recallAt3, 3)} / ${round(r.large.recallAt3, 3)} (${round(r.small.gap, 4)} / ${round(r.large.gap, 4)})`, target: 'near 1' });
    const uses = (plan: string[]) => String(plan.some((l) => l.includes('memories_hnsw_96')));
    summary.push({ figure: `plan uses memories_hnsw_96 at ${SMALL} / ${LARGE}`, value: `${uses(r.smallPlan)} / ${uses(r.plan)}`, target: 'true at LARGE' });
  }
  if (results.exact) {
    const r = results.exact;
    summary.push({ figure: `recall p50, exact path (this Postgres), ${SMALL} → ${LARGE} (ms)`, value: `${p(r.small.recall, 50)} → ${p(r.large.recall, 50)}`, target: '' });
    summary.push({ figure: `recall p50 ratio ${LARGE}/${SMALL}, exact path (linear by design)`, value: ratio(r), target: `(${LARGE / SMALL} is linear)` });
  }
  for (const [path, share] of Object.entries(labelledShares)) summary.push({ figure: `labelled recall@3 (local embedder, lexical), ${path}`, value: round(share, 3), target: '' });
}

/** Part 2: first token of runs of two agents identical but for memory. */
async function firstTokenPart() {
  const bench = await benchEnvironment('memory_runs');
  const started: ChildProcess[] = [];
  try {
    const { key } = await bench.user('memory-bench@example.test');
    const env = { ...bench.env, PORT: String(PORT), LOG_LEVEL: 'info', LOCAL_MODEL_TOKEN_DELAY_MS: '0', RUNS_PER_USER_LIMIT: '100000' };
    started.push(await spawnProcess('../src/server.js', env, /web listening/));
    started.push(await spawnProcess('../workers/main.js', env, /worker ready/));
    const url = `http://127.0.0.1:${PORT}`;
    const api = async <T>(method: string, path: string, body: unknown): Promise<T> => {
      const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    const agent = (memory: boolean) => api<{ id: string }>('POST', '/api/agents', { name: `assistant${memory ? '' : ' '}`, instructions: 'You are a helpful personal assistant.', memory });
    const on = await agent(true);
    const off = await agent(false);
    const seeded = facts(MEMORY_USER_ROWS + PAIRS + PAIR_WARM_UP, 23);
    for (const [i, f] of seeded.slice(0, MEMORY_USER_ROWS).entries()) await api('POST', '/api/memories', { namespace: i % 2 ? 'user' : on.id, content: f.content });
    const questions = seeded.slice(MEMORY_USER_ROWS).map((f) => f.question);
    const timed = async (agentId: string, q: string) => {
      const begun = performance.now();
      let firstToken = NaN;
      let done = NaN;
      let memories = -1;
      await postRun(url, key, { q, agent_id: agentId }, (e) => {
        if (e.event === 'memory') memories = (JSON.parse(e.data) as { ids: string[] }).ids.length;
        if (e.event === 'token' && Number.isNaN(firstToken)) firstToken = performance.now() - begun;
        if (e.event === 'done') done = performance.now() - begun;
      });
      return { firstToken, done, memories };
    };
    for (let i = 0; i < PAIR_WARM_UP; i++) {
      await timed(on.id, questions[i]!);
      await timed(off.id, questions[i]!);
    }
    const samples = { on: [] as { firstToken: number; done: number; memories: number }[], off: [] as { firstToken: number; done: number; memories: number }[] };
    for (let i = 0; i < PAIRS; i++) {
      const q = questions[PAIR_WARM_UP + i]!;
      const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of order) samples[which].push(await timed(which === 'on' ? on.id : off.id, q));
    }
    const firstTokens = (which: 'on' | 'off') => samples[which].map((s) => s.firstToken);
    const dones = (which: 'on' | 'off') => samples[which].map((s) => s.done);
    // Paired: each question's on − off, so drift between pairs cancels.
    const pairDiffs = samples.on.map((s, i) => s.firstToken - samples.off[i]!.firstToken);
    console.log(`\nfirst token, ${PAIRS} pairs of runs (POST /api/react, a new conversation each; the same question to both agents; order alternating), ${MEMORY_USER_ROWS} memories, local model at zero token delay (ms)`);
    console.table(
      (['off', 'on'] as const).map((which) => ({
        agent: `memory ${which}`,
        'first token p50': p(firstTokens(which), 50),
        'first token p90': p(firstTokens(which), 90),
        'done p50': p(dones(which), 50),
        'done p90': p(dones(which), 90),
        'memories given (median)': which === 'off' && samples.off.every((s) => s.memories < 0) ? 'no memory event' : percentile(samples[which].map((s) => s.memories), 50),
      })),
    );
    const diff50 = percentile(firstTokens('on'), 50) - percentile(firstTokens('off'), 50);
    const diff90 = percentile(firstTokens('on'), 90) - percentile(firstTokens('off'), 90);
    console.log(`first token on − off: p50 ${round(diff50)} ms, p90 ${round(diff90)} ms; median of the paired differences ${round(percentile(pairDiffs, 50))} ms (target p50 ≤ +3 ms)`);
    summary.push({ figure: `first token p50 memory off → on (ms), ${MEMORY_USER_ROWS} memories`, value: `${p(firstTokens('off'), 50)} → ${p(firstTokens('on'), 50)}`, target: '' });
    summary.push({ figure: 'first token p50 on − off (ms)', value: round(diff50), target: '≤ +3' });
    summary.push({ figure: 'first token p90 on − off (ms)', value: round(diff90), target: '' });
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}

export async function run(args: string[] = []) {
  const parts = new Set(args);
  const elapsed = timer();
  await scalingParts(parts);
  if (parts.size === 0 || parts.has('first-token')) await firstTokenPart();
  console.log(`\nmemory bench summary${QUICK ? ' (BENCH_QUICK=1)' : ''}, ${round(elapsed() / 1000, 0)} s`);
  console.table(summary);
}

// ---- The corpus: synthetic but realistic memories, and the labelled set. ----
const PEOPLE = ['Anna', 'Tom', 'Maria', 'Kenji', 'Lucas', 'Priya', 'Olu', 'Sven', 'Chloe', 'Mateo', 'Aisha', 'Noah', 'Ingrid', 'Ravi', 'Elena', 'Jonas', 'Fatima', 'Diego', 'Hana', 'Pierre', 'Zoe', 'Marek', 'Leila', 'Oscar', 'Yuki', 'Sam', 'Nadia', 'Felix', 'Grace', 'Tariq', 'Beatriz', 'Hugo', 'Ines', 'Kwame', 'Lena', 'Omar', 'Rosa', 'Viktor', 'Wen', 'Ada'];
const RELATIONS = ['sister', 'brother', 'mother', 'father', 'wife', 'husband', 'partner', 'son', 'daughter', 'cousin', 'best friend', 'manager', 'colleague', 'neighbour', 'aunt', 'uncle', 'grandmother', 'flatmate', 'dentist', 'landlord'];
const CITIES = ['Lisbon', 'Berlin', 'Osaka', 'Toronto', 'Nairobi', 'Lyon', 'Porto', 'Seattle', 'Melbourne', 'Oslo', 'Krakow', 'Austin', 'Dublin', 'Seville', 'Bangalore', 'Montreal', 'Bristol', 'Utrecht', 'Valencia', 'Kyoto', 'Cape Town', 'Edinburgh', 'Tallinn', 'Bologna', 'Denver'];
const JOBS = ['nurse', 'architect', 'teacher', 'data engineer', 'chef', 'pilot', 'lawyer', 'carpenter', 'pharmacist', 'journalist', 'physiotherapist', 'accountant', 'graphic designer', 'electrician', 'vet', 'product manager', 'librarian', 'firefighter'];
const FOODS = ['peanuts', 'shellfish', 'gluten', 'lactose', 'sesame', 'kiwi', 'eggs', 'soy', 'mustard', 'celery', 'strawberries', 'tree nuts'];
const DISHES = ['ramen', 'paella', 'dal', 'lasagne', 'pho', 'tacos al pastor', 'shakshuka', 'pierogi', 'bibimbap', 'moussaka', 'risotto', 'jollof rice', 'green curry', 'falafel', 'goulash'];
const COLOURS = ['teal', 'mustard yellow', 'burgundy', 'forest green', 'navy', 'coral', 'lavender', 'charcoal', 'terracotta', 'sky blue'];
const HOBBIES = ['bouldering', 'sourdough baking', 'chess', 'trail running', 'pottery', 'birdwatching', 'salsa dancing', 'woodworking', 'sailing', 'knitting', 'photography', 'gardening', 'playing the cello', 'swimming', 'cycling', 'calligraphy'];
const BANDS = ['Radiohead', 'Fleetwood Mac', 'Khruangbin', 'Björk', 'Daft Punk', 'Nina Simone', 'Tame Impala', 'Fela Kuti', 'Portishead', 'Arcade Fire', 'Miles Davis', 'Rosalía'];
const BOOKS = ['Middlemarch', 'The Left Hand of Darkness', 'Beloved', 'Dune', 'Pachinko', 'Stoner', 'The Remains of the Day', 'Piranesi', 'Things Fall Apart', 'Norwegian Wood'];
const PETS = ['a tabby cat', 'a border collie', 'two rabbits', 'a parrot', 'a greyhound', 'a goldfish', 'a corgi', 'a tortoise', 'three hens', 'a black cat'];
const PET_NAMES = ['Biscuit', 'Mochi', 'Pepper', 'Luna', 'Otto', 'Ziggy', 'Maple', 'Bruno', 'Pixel', 'Saffron', 'Comet', 'Juniper'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const PROJECTS = ['Falcon', 'Harbour', 'Nimbus', 'Atlas', 'Juniper', 'Quartz', 'Orbit', 'Lantern', 'Mosaic', 'Tundra', 'Beacon', 'Cobalt'];
const TOOLS = ['Postgres', 'Kubernetes', 'React', 'Figma', 'Excel', 'Rust', 'Terraform', 'Blender', 'Python', 'Notion', 'Kotlin', 'Airflow'];
const LANGUAGES = ['Portuguese', 'Japanese', 'German', 'Spanish', 'Swahili', 'Italian', 'Korean', 'Dutch', 'Arabic', 'Polish', 'French', 'Hindi'];
const SPORTS_TEAMS = ['Benfica', 'the Blue Jays', 'Arsenal', 'the Seahawks', 'FC Barcelona', 'the Raptors', 'Celtic', 'Ajax', 'Boca Juniors', 'the All Blacks'];
const CARS = ['a 2014 Honda Civic', 'an electric Kia Niro', 'a red Vespa', 'a Volvo estate', 'no car, just a cargo bike', 'a Toyota Prius', 'a VW camper van'];
const MEDS = ['an inhaler for asthma', 'vitamin D every morning', 'thyroid tablets', 'antihistamines in spring', 'iron supplements'];

type Pick = <T>(list: readonly T[]) => T;

/** Each template: a fact, and a question it answers (slots filled from the same choices). */
const TEMPLATES: ((pick: Pick, n: () => number) => { fact: string; question: string })[] = [
  (p) => { const [r, c, j] = [p(RELATIONS), p(CITIES), p(JOBS)]; const name = p(PEOPLE); return { fact: `My ${r} ${name} lives in ${c} and works as a ${j}`, question: `Where does my ${r} ${name} live?` }; },
  (p) => { const f = p(FOODS); return { fact: `I am allergic to ${f}, so please avoid recipes with ${f}`, question: `Which foods should I avoid because of allergies, like ${f}?` }; },
  (p) => { const d = p(DISHES); const c = p(CITIES); return { fact: `My favourite dish is ${d}, especially the one from a small place in ${c}`, question: `What is my favourite dish?` }; },
  (p) => { const c = p(COLOURS); return { fact: `My favourite colour is ${c}`, question: `What colour do I like best?` }; },
  (p, n) => { const h = p(HOBBIES); return { fact: `I started ${h} ${1 + (n() % 15)} years ago and do it every ${p(DAYS)}`, question: `How long have I been doing ${h}?` }; },
  (p) => { const b = p(BANDS); return { fact: `I have tickets to see ${b} in ${p(CITIES)} in ${p(MONTHS)}`, question: `When am I going to see ${b}?` }; },
  (p) => { const b = p(BOOKS); return { fact: `I am reading ${b} with my book club, we meet on ${p(DAYS)}s`, question: `Which book is my book club reading?` }; },
  (p) => { const pet = p(PETS); const name = p(PET_NAMES); return { fact: `I have ${pet} called ${name}`, question: `What is my pet ${name}?` }; },
  (p, n) => { const name = p(PEOPLE); const r = p(RELATIONS); return { fact: `${name}, my ${r}, has a birthday on ${p(MONTHS)} ${1 + (n() % 28)}`, question: `When is ${name}'s birthday?` }; },
  (p, n) => { const proj = p(PROJECTS); return { fact: `The deadline for project ${proj} is ${p(MONTHS)} ${1 + (n() % 28)} and ${p(PEOPLE)} leads it`, question: `When is the ${proj} project due?` }; },
  (p) => { const t = p(TOOLS); const proj = p(PROJECTS); return { fact: `At work I mostly use ${t} on the ${proj} team`, question: `Which tool do I use on the ${proj} team?` }; },
  (p) => { const l = p(LANGUAGES); return { fact: `I am learning ${l} and have a lesson every ${p(DAYS)} evening`, question: `When is my ${l} lesson?` }; },
  (p) => { const t = p(SPORTS_TEAMS); return { fact: `I support ${t} and watch every match with ${p(PEOPLE)}`, question: `Which team do I support?` }; },
  (p) => { const c = p(CARS); return { fact: `I drive ${c}`, question: `What do I drive?` }; },
  (p) => { const m = p(MEDS); return { fact: `I take ${m}`, question: `What medication do I take?` }; },
  (p, n) => { const name = p(PEOPLE); return { fact: `I have a one-to-one with ${name} every ${p(DAYS)} at ${8 + (n() % 9)}:00`, question: `When is my meeting with ${name}?` }; },
  (p) => { const c = p(CITIES); return { fact: `I grew up in ${c} and moved away when I was ${p([12, 18, 21, 25, 30])}`, question: `Where did I grow up?` }; },
  (p) => { const c = p(CITIES); const m = p(MONTHS); return { fact: `We are planning a holiday to ${c} in ${m} with ${p(PEOPLE)}`, question: `Where are we going on holiday in ${m}?` }; },
  (p) => { const d = p(DISHES); return { fact: `${p(PEOPLE)} does not like ${d}, so do not suggest it for dinner parties`, question: `Which dish should I not cook for guests?` }; },
  (p, n) => ({ fact: `My gym membership renews on the ${1 + (n() % 28)}th of each month and costs ${20 + (n() % 60)} euros`, question: `How much does my gym membership cost?` }),
  (p) => { const name = p(PEOPLE); const j = p(JOBS); return { fact: `${name} from my running club is a ${j} and offered to help me with my CV`, question: `Who offered to help with my CV?` }; },
  (p) => { const h = p(HOBBIES); const name = p(PEOPLE); return { fact: `${name} got me into ${h} last ${p(MONTHS)}`, question: `Who got me into ${h}?` }; },
];

export interface Fact {
  content: string;
  question: string;
}

/** `count` distinct facts (a detail added where a template repeats), and the question each answers. */
export function facts(count: number, seed: number): Fact[] {
  const random = seededRandom(seed);
  const pick: Pick = (list) => list[Math.floor(random() * list.length)]!;
  const n = () => Math.floor(random() * 1_000_000);
  const seen = new Set<string>();
  const out: Fact[] = [];
  const details = [() => `, noted in ${pick(MONTHS)}`, () => ` (${pick(PEOPLE)} told me)`, () => `, since ${2005 + (n() % 20)}`, () => `, as I said to ${pick(PEOPLE)}`, () => `; remind me on ${pick(DAYS)}`];
  while (out.length < count) {
    const { fact, question } = pick(TEMPLATES)(pick, n);
    let content = fact;
    for (let i = 0; seen.has(content); i++) content = `${fact}${pick(details)()}${i > 3 ? ` #${n()}` : ''}`;
    seen.add(content);
    out.push({ content, question });
  }
  return out;
}

/**
 * The labelled set: facts about one person and questions written as someone would ask them, each
 * with the index of the memory that answers it.
 */
export const LABELLED_MEMORIES = [
  'My favourite colour is teal',
  'I am allergic to peanuts and carry an EpiPen',
  'My sister Clara lives in Lisbon with her two kids',
  'I work as a data engineer at a logistics company',
  'My partner is called Sam and we met at university',
  'I have a border collie named Biscuit',
  'My birthday is on the 14th of March',
  'I am vegetarian since 2019',
  'I play the cello in an amateur orchestra on Wednesdays',
  'My manager is Priya and our weekly one-to-one is on Thursday at 10',
  'I drive an electric Kia Niro',
  'I am learning Japanese for a trip to Kyoto next spring',
  'My favourite book is The Left Hand of Darkness',
  'I support Benfica',
  'I live in a flat in Utrecht near the station',
  'My mother Rosa is a retired nurse living in Porto',
  'I take vitamin D every morning',
  'I go bouldering with Tom on Saturday mornings',
  'My dentist appointment is on the 3rd of December',
  'I prefer window seats on flights',
  'My favourite band is Khruangbin',
  'I do not drink coffee, only green tea',
  'My brother Diego is an architect in Berlin',
  'I grew up in Seville',
  'My wifi password hint is the name of my first pet',
  'I am training for a half marathon in October',
  'My laptop is a ThinkPad X1 Carbon',
  'I hate cilantro',
  'My son Leo is seven and loves dinosaurs',
  'My gym membership costs 35 euros a month',
  'I want to repaint the kitchen forest green',
  'I usually wake up at 6:30',
  'I speak Spanish, Dutch and English',
  'Our wedding anniversary is on the 2nd of August',
  'I am saving for a sailing course in Croatia',
  'My best friend Aisha is a vet in Nairobi',
  'I keep my passport in the blue folder in the desk drawer',
  'I prefer meetings after 11 in the morning',
  'My favourite dish is mushroom risotto',
  'I volunteer at the food bank on the first Sunday of each month',
];

/** [question, index in LABELLED_MEMORIES of the memory that answers it]. */
export const LABELLED_QUESTIONS: [string, number][] = [
  ['What is my favourite colour?', 0],
  ['Am I allergic to anything?', 1],
  ['Where does my sister live?', 2],
  ['What do I do for a living?', 3],
  ["What's my partner's name?", 4],
  ["What's the name of my dog?", 5],
  ['When is my birthday?', 6],
  ['Do I eat meat?', 7],
  ['Which instrument do I play?', 8],
  ['When is my one-to-one with my manager?', 9],
  ['What car do I have?', 10],
  ['Which language am I learning?', 11],
  ['What is my favourite book?', 12],
  ['Which football team do I support?', 13],
  ['Which city do I live in?', 14],
  ['What did my mother do before she retired?', 15],
  ['Which supplements do I take?', 16],
  ['Who do I go climbing with?', 17],
  ['When do I have to see the dentist?', 18],
  ['Where do I like to sit on a plane?', 19],
  ['What music do I like?', 20],
  ['Should you offer me a coffee?', 21],
  ['What does my brother do?', 22],
  ['Where did I grow up?', 23],
  ['Where is my passport?', 36],
];
