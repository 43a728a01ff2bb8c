import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { MemoryStore, hnswIndexName } from '../src/memories/store.js';
import { MemoryService } from '../src/memories/service.js';
import { LocalEmbedder } from '../src/knowledge/embedders.js';
import { VectorStore } from '../src/knowledge/vector-store.js';
import { createDatabase } from './support/database.js';
import { startPglite, type Pglite } from './support/pglite.js';

/**
 * Memory search (DESIGN §25) on both of its paths with the same memories: the exact search of the
 * user's memories where the server lacks pgvector (this machine's Postgres), and pgvector with its
 * HNSW index (PGlite, a real Postgres that bundles it). Both rank alike, stay inside one user and
 * their agent's namespaces, and the index is what the pgvector query uses.
 */
const FACTS = [
  'My favourite colour is teal',
  'I live in Lisbon with my partner Ana',
  'I am allergic to peanuts and shellfish',
  'My daughter Rosa plays the violin',
  'I work night shifts as a nurse at the city hospital',
  'My car is an old blue Volvo estate',
  'I prefer tea over coffee in the mornings',
  'I run half marathons in the spring',
];
const QUESTIONS: [string, string][] = [
  ['what colour do I like best, my favourite?', FACTS[0]!],
  ['which instrument does my daughter Rosa play?', FACTS[3]!],
  ['what am I allergic to?', FACTS[2]!],
  ['do I drink tea or coffee in the morning?', FACTS[6]!],
];

async function seed(knex: Knex) {
  const [alice, bob] = await knex('users').insert([{ email: `alice-${Math.random()}@t.test`, password_hash: 'x' }, { email: `bob-${Math.random()}@t.test`, password_hash: 'x' }]).returning('id');
  const agent = '11111111-1111-4111-8111-111111111111';
  const other = '22222222-2222-4222-8222-222222222222';
  return { alice: alice.id as string, bob: bob.id as string, agent, other };
}

function suite(name: string, path: 'exact' | 'pgvector', open: () => Promise<{ knex: Knex; close: () => Promise<void> }>, indexMinMemories?: number) {
  describe(`memory search, ${name}`, () => {
    let knex: Knex;
    let close: () => Promise<void>;
    let service: MemoryService;
    let store: MemoryStore;
    let ids: Awaited<ReturnType<typeof seed>>;
    beforeAll(async () => {
      ({ knex, close } = await open());
      store = new MemoryStore(knex, new VectorStore(knex, { hnswMinVectors: 1, efSearch: 100, buildMemoryMb: 64 }), { perUser: 1000, efSearch: 100, indexMinMemories });
      expect(await store.path()).toBe(path);
      service = new MemoryService(knex, store, new LocalEmbedder(), { perUser: 1000, recallK: 3 });
      ids = await seed(knex);
      expect(await service.ensureIndex()).toBe(path === 'pgvector');
      // Half in the agent's namespace, half in `user` (every agent's).
      for (const [i, fact] of FACTS.entries()) await (i % 2 ? service.create(ids.alice, { namespace: 'user', content: fact }) : service.remember(ids.alice, ids.agent, fact));
      // The same facts for another user and another agent: never found for alice's agent.
      for (const fact of FACTS) await service.remember(ids.bob, ids.agent, `${fact}!`);
      for (const fact of FACTS) await service.remember(ids.alice, ids.other, `${fact}?`);
      await knex.raw('analyze memories');
    }, 60_000);
    afterAll(async () => close?.());

    it('ranks by meaning within the user and the agent\'s namespaces', async () => {
      for (const [question, expected] of QUESTIONS) {
        const found = await service.recall(ids.alice, ids.agent, question, 3);
        expect(found[0]!.content, question).toBe(expected);
        expect(found.every((m) => m.namespace === ids.agent || m.namespace === 'user')).toBe(true);
        expect(found.map((m) => m.score!)).toEqual([...found.map((m) => m.score!)].sort((a, b) => b - a));
        expect(found[0]!.score!).toBeGreaterThan(0.2);
        expect(found[0]!.score!).toBeLessThanOrEqual(1.0001);
      }
      expect(await service.recall(ids.bob, ids.other, 'favourite colour', 3)).toEqual([]);
    });

    it('pages a search: the pages together are the whole ranking', async () => {
      const page1 = await service.list(ids.alice, { q: 'my favourite colour' }, { page: 1, size: 10 });
      const page2 = await service.list(ids.alice, { q: 'my favourite colour' }, { page: 2, size: 10 });
      expect(page1.total).toBe(2 * FACTS.length);
      expect(new Set([...page1.items, ...page2.items].map((m) => m.id)).size).toBe(2 * FACTS.length);
      expect(page1.items[0]!.content).toMatch(/^My favourite colour is teal/);
    });

    if (path === 'pgvector') {
      it('uses the HNSW index of the memory vectors', async () => {
        const vector = `{${(await new LocalEmbedder().embed(['favourite colour']))[0]!.join(',')}}`;
        const plan = await knex.transaction(async (trx) => {
          await trx.raw('set local enable_seqscan = off; set local enable_sort = off');
          const { rows } = await trx.raw(`explain select id from memories where user_id = ? and dimensions = 96 order by embedding::vector(96) <=> cast(cast(? as real[]) as vector(96)) limit 3`, [ids.alice, vector]);
          return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
        });
        expect(plan).toContain(hnswIndexName(96));
      });
    }
  });
}

suite('exact (this Postgres)', 'exact', async () => {
  const db = await createDatabase();
  const knex = createKnex(db.url, { poolMax: 2 });
  return { knex, close: async () => { await knex.destroy(); await db.drop(); } };
});

async function openPglite() {
  const pglite: Pglite = await startPglite();
  const knex = createKnex(pglite.url, { poolMax: 1 });
  await migrateLatest(knex);
  return { knex, close: async () => { await knex.destroy(); await pglite.close(); } };
}

// Through the HNSW index (every user counts as large), and exactly for a user with few memories (the default).
suite('pgvector, through the HNSW index', 'pgvector', openPglite, 0);
suite('pgvector, a user with few memories', 'pgvector', openPglite);
