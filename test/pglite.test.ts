import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createKnex } from '../src/db/knex.js';
import { startPglite, type Pglite } from './support/pglite.js';

/** PGlite (test/support/pglite.ts) is a real Postgres with pgvector: HNSW indexes on `real[]` expressions work. */
const KB_A = '00000000-0000-4000-8000-00000000000a';
const KB_B = '00000000-0000-4000-8000-00000000000b';
const NEAR = [101, 102, 103, 104, 105]; // the rows nearest [1, 0, 0], nearest first

/** 2,000 random directions in two knowledge bases, none within ~11° of [1, 0, 0], and NEAR (in KB_A) within 6° of it. */
function rows() {
  let seed = 7;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647) * 2 - 1;
  const far: { id: number; kb: string; embedding: number[] }[] = [];
  while (far.length < 2000) {
    const [x, y, z] = [random(), random(), random()];
    const length = Math.hypot(x, y, z);
    if (length > 1 || length < 0.1 || x / length > 0.98) continue;
    far.push({ id: 1000 + far.length, kb: far.length % 2 ? KB_A : KB_B, embedding: [x, y, z] });
  }
  const near = NEAR.map((id, i) => ({ id, kb: KB_A, embedding: [1, 0.02 * (i + 1), 0] }));
  return [...near, ...far];
}

async function plan(client: pg.ClientBase, sql: string, values: unknown[]): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${sql}`, values);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

const NEAREST = 'select id from chunks order by embedding::vector(3) <=> $1::vector(3) limit 5';
const NEAREST_IN_KB = 'select id from chunks where knowledge_base_id = $2 order by embedding::vector(3) <=> $1::vector(3) limit 5';

describe('PGlite with pgvector', () => {
  let db: Pglite;
  let client: pg.Client;

  beforeAll(async () => {
    db = await startPglite();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('create extension if not exists vector');
    await client.query('create table chunks (id int primary key, knowledge_base_id uuid not null, embedding real[] not null)');
    const data = rows();
    await client.query(
      // unnest flattens a 2-D array, so each vector goes as its array literal.
      `insert into chunks (id, knowledge_base_id, embedding)
       select id, kb, e::real[] from unnest($1::int[], $2::uuid[], $3::text[]) as t(id, kb, e)`,
      [data.map((r) => r.id), data.map((r) => r.kb), data.map((r) => `{${r.embedding.join(',')}}`)],
    );
    await client.query('create index chunks_hnsw on chunks using hnsw ((embedding::vector(3)) vector_cosine_ops)');
    await client.query(`create index chunks_hnsw_a on chunks using hnsw ((embedding::vector(3)) vector_cosine_ops) where knowledge_base_id = '${KB_A}'`);
    await client.query('analyze chunks');
  });

  afterAll(async () => {
    await client?.end();
    await db?.close();
  });

  it('answers a cosine nearest-neighbour query from the HNSW expression index', async () => {
    const { rows } = await client.query<{ id: number }>(NEAREST, ['[1,0,0]']);
    expect(rows.map((row) => row.id)).toEqual(NEAR);
    // Chosen on its own: no enable_seqscan needed.
    expect(await plan(client, NEAREST, ['[1,0,0]'])).toMatch(/Index Scan using chunks_hnsw on chunks/);
  });

  it('uses the partial index when the knowledge base is a bound parameter', async () => {
    await client.query('begin');
    try {
      // At 2,000 rows a seq scan and sort is cheaper; around 20,000 the planner picks the index by itself.
      await client.query('set local enable_seqscan = off');
      expect(await plan(client, NEAREST_IN_KB, ['[1,0,0]', KB_A])).toMatch(/Index Scan using chunks_hnsw_a on chunks/);
      // The unnamed statement is planned with the value bound, so KB_B cannot use KB_A's index.
      expect(await plan(client, NEAREST_IN_KB, ['[1,0,0]', KB_B])).not.toMatch(/chunks_hnsw_a/);
      const { rows } = await client.query<{ id: number }>(NEAREST_IN_KB, ['[1,0,0]', KB_A]);
      expect(rows.map((row) => row.id)).toEqual(NEAR);
    } finally {
      await client.query('rollback');
    }
  });

  it('takes hnsw.ef_search and hnsw.iterative_scan', async () => {
    await client.query('begin');
    try {
      await client.query('set local hnsw.ef_search = 100');
      await client.query('set local hnsw.iterative_scan = relaxed_order');
      const { rows } = await client.query('select current_setting($1) as ef, current_setting($2) as scan', ['hnsw.ef_search', 'hnsw.iterative_scan']);
      expect(rows[0]).toEqual({ ef: '100', scan: 'relaxed_order' });
      expect((await client.query<{ id: number }>(NEAREST_IN_KB, ['[1,0,0]', KB_B])).rows).toHaveLength(5);
    } finally {
      await client.query('rollback');
    }
  });

  it('serves a knex pool of 4: concurrent statements and transactions each get their own answers', async () => {
    const knex = createKnex(db.url, { poolMax: 4 });
    try {
      const queries = NEAR.map((_, i) =>
        knex.raw<{ rows: { id: number }[] }>('select id from chunks where knowledge_base_id = ? order by embedding::vector(3) <=> ?::vector(3) limit 1', [KB_A, `[1,${0.02 * (i + 1)},0]`]),
      );
      const others = [1000, 1002, 1004, 1006, 1008]; // in KB_B
      const transactions = others.map((id, i) =>
        knex.transaction(async (trx) => {
          await trx('chunks').where({ id }).update({ embedding: [-1, i, 0] });
          return (await trx('chunks').where({ id }).first()).embedding;
        }),
      );
      const [answers, updated] = await Promise.all([Promise.all(queries), Promise.all(transactions)]);
      expect(answers.map((answer) => answer.rows[0]?.id)).toEqual(NEAR);
      expect(updated).toEqual(others.map((_, i) => [-1, i, 0]));
      // A statement too large for one TCP read (~400 kB here) is never interleaved with the other connections'.
      // (pglite-socket's own server does: another connection's Parse lands between its Parse and Bind.)
      await knex.schema.createTable('big', (t) => t.specificType('v', 'real[]'));
      const big = Array.from({ length: 20_000 }, (_, i) => i / 3);
      const results = await Promise.all([
        ...[1, 2, 3].map(() => knex.raw('insert into big (v) values (?::real[])', [big]).then(() => 'inserted')),
        ...Array.from({ length: 100 }, (_, i) => knex.raw<{ rows: { n: number }[] }>(i % 2 ? 'select ?::int as n' : 'select ?::int + ?::int as n', i % 2 ? [i] : [i, 0]).then(({ rows }) => rows[0]?.n)),
      ]);
      expect(results).toEqual([...[1, 2, 3].map(() => 'inserted'), ...Array.from({ length: 100 }, (_, i) => i)]);
      const pool = (knex.client as { pool: { numFree(): number; numUsed(): number } }).pool;
      expect(pool.numFree() + pool.numUsed()).toBe(4);
    } finally {
      await knex.destroy();
    }
  });
});
