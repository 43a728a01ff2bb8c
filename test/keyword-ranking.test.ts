import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { keywordSearch, MAX_QUERY_TERMS } from '../src/knowledge/keyword-search.js';
import { createDatabase } from './support/database.js';
import { startPglite } from './support/pglite.js';

/**
 * Keyword search ranks by any term (DESIGN §23): which chunks match, in which order, and that no
 * question, however hostile, breaks the statement. On the machine's Postgres (with btree_gin) and
 * on PGlite (the pgvector path of DESIGN §14, without it).
 */
const PASSAGES = {
  refund: 'Customers may return the Zorbex 3000 within 45 days for a full refund.',
  warranty: 'The Zorbex 3000 carries a two-year limited warranty covering parts and labour.',
  warrantyTwice: 'Warranty claims: a warranty claim needs the receipt; the warranty does not cover water damage.',
  shipping: 'Orders ship within two business days from the Zorbex warehouse.',
  colours: 'The Zorbex 3000 comes in graphite, silver and ocean blue.',
  long: `Refund ${'and the product catalogue lists many accessories, cables, cases, adapters, chargers, stands, mounts '.repeat(8)}`,
};

/** A migrated database on each engine; `close` removes it. */
const ENGINES = {
  postgres: async () => {
    const database = await createDatabase();
    return { url: database.url, close: database.drop };
  },
  pglite: async () => {
    const pglite = await startPglite();
    const migrator = createKnex(pglite.url, { poolMax: 1 });
    await migrateLatest(migrator).finally(() => migrator.destroy());
    return pglite;
  },
};

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('on %s', (engine) => {
  let database: { url: string; close: () => Promise<unknown> };
  let knex: Knex;
  let kbId: string;
  let otherKbId: string;
  const idOf = new Map<string, string>();

  async function knowledgeBase(userId: string, passages: Record<string, string>): Promise<string> {
    const [kb] = await knex('knowledge_bases').insert({ user_id: userId, name: 'kb', chunk_strategy: 'paragraph', chunk_size: 1000, chunk_overlap: 0, retrieval_mode: 'keyword' }).returning('id');
    const [doc] = await knex('kb_documents')
      .insert({ id: randomUUID(), knowledge_base_id: kb.id, name: 'doc.txt', content_type: 'text/plain', size_bytes: 1, content_hash: kb.id, source: Buffer.from('x'), status: 'ready', chunk_count: Object.keys(passages).length })
      .returning('id');
    const entries = Object.entries(passages);
    const rows = await knex('kb_chunks')
      .insert(entries.map(([, content], position) => ({ knowledge_base_id: kb.id, document_id: doc.id, position, content })))
      .returning(['id', 'position']);
    for (const row of rows) idOf.set(`${kb.id}:${entries[row.position]![0]}`, String(row.id));
    return kb.id;
  }

  const names = (kb: string, hits: { id: string }[]) => hits.map((hit) => [...idOf].find(([, id]) => id === hit.id)?.[0].slice(kb.length + 1) ?? 'foreign');

  beforeAll(async () => {
    database = await ENGINES[engine]();
    knex = createKnex(database.url, { poolMax: 2 });
    const [user] = await knex('users').insert({ email: 'kw@example.test', password_hash: 'x' }).returning('id');
    kbId = await knowledgeBase(user.id, PASSAGES);
    otherKbId = await knowledgeBase(user.id, { refund: 'A refund of the refund for the refund period: refund refund refund.' });
  }, 60_000);
  afterAll(async () => {
    await knex?.destroy();
    await database?.close();
  });

  describe('keyword search by any term, ranked by BM25', () => {
    it('finds the refund passage although "period" is in no chunk', async () => {
      const hits = await keywordSearch(knex, [kbId], 'What is the refund period?', 5);
      expect(names(kbId, hits)[0]).toBe('refund');
      expect(names(kbId, hits)).not.toContain('foreign');
    });

    it('"how long is the warranty?" finds both warranty passages among others', async () => {
      const hits = names(kbId, await keywordSearch(knex, [kbId], 'how long is the warranty?', 5));
      expect(hits).toEqual(expect.arrayContaining(['warranty', 'warrantyTwice']));
    });

    it('ranks more occurrences, rarer terms and shorter chunks first', async () => {
      expect(names(kbId, await keywordSearch(knex, [kbId], 'warranty', 5)).slice(0, 2)).toEqual(['warrantyTwice', 'warranty']);
      // "zorbex" is in four chunks, "labour" in one: the chunk with the rare term leads.
      expect(names(kbId, await keywordSearch(knex, [kbId], 'zorbex labour', 5))[0]).toBe('warranty');
      // "refund" once each: the short chunk beats the long one.
      expect(names(kbId, await keywordSearch(knex, [kbId], 'refund', 5))).toEqual(['refund', 'long']);
      // More of the query's terms beat one.
      expect(names(kbId, await keywordSearch(knex, [kbId], 'full refund zorbex', 5))[0]).toBe('refund');
    });

    it('scores are positive and descending', async () => {
      const hits = await keywordSearch(knex, [kbId], 'zorbex warranty refund ship', 10);
      expect(hits.length).toBeGreaterThan(3);
      for (const [index, hit] of hits.entries()) {
        expect(hit.score).toBeGreaterThan(0);
        if (index > 0) expect(hit.score).toBeLessThanOrEqual(hits[index - 1]!.score);
      }
    });

    it('a question of stop words only finds nothing', async () => {
      expect(await keywordSearch(knex, [kbId], 'what is the it of and for them?', 5)).toEqual([]);
      expect(await keywordSearch(knex, [kbId], '   ', 5)).toEqual([]);
    });

    it('searches only the knowledge bases given', async () => {
      expect(names(otherKbId, await keywordSearch(knex, [otherKbId], 'refund', 5))).toEqual(['refund']);
      expect(await keywordSearch(knex, [], 'refund', 5)).toEqual([]);
    });

    it('with mostTerms a chunk must hold at least half of the terms', async () => {
      expect(names(kbId, await keywordSearch(knex, [kbId], 'refund period', 5, { mostTerms: true }))[0]).toBe('refund');
      expect(await keywordSearch(knex, [kbId], 'refund period quantum entanglement', 5, { mostTerms: true })).toEqual([]);
      expect(names(kbId, await keywordSearch(knex, [kbId], 'refund period quantum entanglement', 5))[0]).toBe('refund');
    });

    it('postings follow the chunks: a deleted document or knowledge base leaves none behind, and lengths add up', async () => {
      const [user] = await knex('users').select('id').limit(1);
      const kb = await knowledgeBase(user.id, { a: 'Quokka sightings on the island.', b: 'Quokka photographs need permits.' });
      const postings = () => knex('kb_terms').where({ knowledge_base_id: kb }).count('* as n').first().then((row) => Number(row!.n));
      const [{ total }] = await knex('kb_chunks').where({ knowledge_base_id: kb }).select(knex.raw('sum(length(tsv))::int as total'));
      expect(await postings()).toBe(total);
      expect((await knex('kb_documents').where({ knowledge_base_id: kb }).first()).term_total).toBe(String(total));
      expect(names(kb, await keywordSearch(knex, [kb], 'quokka permits', 5))).toEqual(['b', 'a']);
      await knex('kb_chunks').where({ id: idOf.get(`${kb}:a`) }).delete();
      expect(names(kb, await keywordSearch(knex, [kb], 'quokka', 5))).toEqual(['b']);
      expect(Number((await knex('kb_documents').where({ knowledge_base_id: kb }).first()).term_total)).toBe(await postings());
      await knex('knowledge_bases').where({ id: kb }).delete();
      expect(await postings()).toBe(0);
      expect(await keywordSearch(knex, [kb], 'quokka', 5)).toEqual([]);
    });

    it('hostile questions are text: operators, quotes, unicode, SQL and length never break the statement', async () => {
      const hostile = [
        `refund' or 1=1; drop table kb_chunks; --`,
        `"refund" & | ! <-> :* (warranty`,
        `refund:* & !warranty`,
        `\\'\\\\ '' "" \\`,
        `o'brien's refund`,
        'rëfünd 日本語 🚀 \u0000 refund',
        'refund '.repeat(2000),
        Array.from({ length: 500 }, (_, i) => `word${i}`).join(' '),
        ':* | & !',
      ];
      for (const query of hostile) {
        const hits = await keywordSearch(knex, [kbId], query, 5);
        expect(Array.isArray(hits)).toBe(true);
      }
      expect(names(kbId, await keywordSearch(knex, [kbId], `refund' or 1=1; drop table kb_chunks; --`, 5))[0]).toBe('refund');
      expect(names(kbId, await keywordSearch(knex, [kbId], `"refund" & | ! <-> :* (warranty`, 5))).toEqual(expect.arrayContaining(['refund', 'warranty']));
      expect(await keywordSearch(knex, [kbId], ':* | & !', 5)).toEqual([]);
      expect(MAX_QUERY_TERMS).toBeLessThan(500);
    });
  });
});
