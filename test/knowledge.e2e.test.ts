import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { startPglite } from './support/pglite.js';
import { createKnex, migrateLatest } from '../src/db/knex.js';
import { loadConfig } from '../src/config.js';
import { KnowledgeModels } from '../src/knowledge/models.js';
import { Retriever } from '../src/knowledge/retrieval.js';
import { hnswIndexName, VectorStore } from '../src/knowledge/vector-store.js';
import { ofType, stream } from './support/sse.js';

/** Knowledge bases end to end: web + worker processes, ingestion on the worker, retrieval in Postgres. */
let stack: Stack;
let key: string;
let otherKey: string;
let kbOnlyKey: string;
beforeAll(async () => {
  stack = await startStack({ env: { KB_DOCUMENT_MAX_BYTES: '4096' } });
  const owner = await stack.user();
  key = owner.key;
  ({ key: otherKey } = await stack.user());
  kbOnlyKey = (await stack.identity.apiKeys.create(owner.user.id, { name: 'kb only', scopes: 'kb' })).key;
});
afterAll(() => stack.stop());

const api = (method: string, path: string, token: string, body?: unknown) => stack.api(token, method, path, body);

const upload = async (kbId: string, name: string, content: string | Buffer, type = 'text/plain') => {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), name);
  const res = await fetch(`${stack.url}/api/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json() };
};

/** Waits until no document of the knowledge base is still processing (ingestion runs on the worker). */
async function settled(kbId: string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const docs = await api('GET', `/api/knowledge-bases/${kbId}/documents?size=100`, key);
    if (docs.body.items.every((d: { status: string }) => d.status !== 'processing')) return docs.body.items as { id: string; name: string; status: string; error: string | null; chunk_count: number }[];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('documents still processing');
}

const ROUTER = '# Router setup\n\nTo restore the router administrator passphrase, hold the reset button for ten seconds.';
const REFUNDS = 'Our refund policy: purchases can be returned within 30 days for a full refund.';
const COLOURS = '<html><body><h1>Colour guide</h1><p>The corporate colour palette uses teal and orange.</p><script>ignored()</script></body></html>';

describe('knowledge bases', () => {
  it('creates, lists (kb scope), reads, updates and deletes; validates; others get 404', async () => {
    const created = await api('POST', '/api/knowledge-bases', key, { name: 'Docs', description: 'Team docs', chunk_strategy: 'paragraph', chunk_size: 500, chunk_overlap: 50 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String), name: 'Docs', description: 'Team docs', chunk_strategy: 'paragraph', chunk_size: 500, chunk_overlap: 50,
      retrieval_mode: 'hybrid', document_count: 0, total_chunks: 0, status: 'ready', is_active: true,
      embedding_model: 'local', embedding_dimensions: 96, rerank_model: null, indexing: null, error: null,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    const id = created.body.id;
    const list = await api('GET', '/api/knowledge-bases?page=1&size=10', kbOnlyKey);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, size: 10 });
    expect(list.body.items.map((kb: { id: string }) => kb.id)).toContain(id);
    expect((await api('GET', '/api/knowledge-bases', otherKey)).body.items).toEqual([]);
    expect((await api('GET', `/api/knowledge-bases/${id}`, otherKey)).status).toBe(404);
    expect((await api('POST', '/api/knowledge-bases', kbOnlyKey, { name: 'nope' })).status).toBe(403);
    const patched = await api('PATCH', `/api/knowledge-bases/${id}`, key, { retrieval_mode: 'keyword', is_active: false });
    expect(patched.body).toMatchObject({ retrieval_mode: 'keyword', is_active: false });
    const overlap = await api('PATCH', `/api/knowledge-bases/${id}`, key, { chunk_overlap: 500 });
    expect(overlap.status).toBe(422);
    expect(overlap.body.detail[0].loc).toEqual(['body', 'chunk_overlap']);
    expect((await api('DELETE', `/api/knowledge-bases/${id}`, otherKey)).status).toBe(404);
    expect((await api('DELETE', `/api/knowledge-bases/${id}`, key)).status).toBe(204);
    expect((await api('GET', `/api/knowledge-bases/${id}`, key)).status).toBe(404);
  });

  it('a gateway embedding or rerank model where no gateway is configured → 422 naming GATEWAY_URL', async () => {
    for (const field of ['embedding_model', 'rerank_model']) {
      const res = await api('POST', '/api/knowledge-bases', key, { name: 'x', [field]: 'text-embedding-3-small' });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', field], msg: expect.stringContaining('GATEWAY_URL') });
    }
  });

  it('a restricted user may list but not create', async () => {
    const { key: restricted } = await stack.user('restricted');
    expect((await api('GET', '/api/knowledge-bases', restricted)).status).toBe(200);
    expect((await api('POST', '/api/knowledge-bases', restricted, { name: 'x' })).status).toBe(403);
  });

  describe('ingestion and retrieval', () => {
    let kbId: string;
    beforeAll(async () => {
      kbId = (await api('POST', '/api/knowledge-bases', key, { name: 'Support', chunk_size: 300, chunk_overlap: 30 })).body.id;
      const json = await api('POST', `/api/knowledge-bases/${kbId}/documents`, key, { name: 'router.md', content: ROUTER });
      expect(json.status).toBe(202);
      expect(json.body.status).toBe('processing');
      expect((await upload(kbId, 'refunds.txt', REFUNDS)).status).toBe(202);
      expect((await upload(kbId, 'colours.html', COLOURS, 'text/html')).status).toBe(202);
    });

    it('ingests on the worker: documents and the knowledge base become ready with exact counts', async () => {
      const docs = await settled(kbId);
      expect(docs.map((d) => [d.name, d.status])).toEqual(expect.arrayContaining([['router.md', 'ready'], ['refunds.txt', 'ready'], ['colours.html', 'ready']]));
      const kb = (await api('GET', `/api/knowledge-bases/${kbId}`, key)).body;
      const chunks = await stack.knex('kb_chunks').where({ knowledge_base_id: kbId }).count('* as n').first();
      expect(kb).toMatchObject({ status: 'ready', document_count: 3, total_chunks: Number(chunks!.n) });
      expect(docs.reduce((sum, d) => sum + d.chunk_count, 0)).toBe(Number(chunks!.n));
      const html = await stack.knex('kb_chunks').join('kb_documents', 'kb_documents.id', 'kb_chunks.document_id').where('kb_documents.name', 'colours.html').first();
      expect(html.content).toContain('palette');
      expect(html.content).not.toMatch(/<p>|ignored\(\)/);
    });

    it('the same content uploaded again is not indexed twice', async () => {
      const before = (await api('GET', `/api/knowledge-bases/${kbId}`, key)).body;
      const again = await upload(kbId, 'refunds-copy.txt', REFUNDS);
      expect(again.status).toBe(200);
      expect(again.body.name).toBe('refunds.txt');
      expect((await api('GET', `/api/knowledge-bases/${kbId}`, key)).body).toMatchObject({ document_count: before.document_count, total_chunks: before.total_chunks });
    });

    it('keyword finds an exact term; semantic finds a paraphrase keyword misses; hybrid ranks the agreed chunk first', async () => {
      const retrieve = (body: Record<string, unknown>) => api('POST', `/api/knowledge-bases/${kbId}/retrieve`, kbOnlyKey, body);
      const keyword = await retrieve({ query: 'palette', retrieval_mode: 'keyword' });
      expect(keyword.status).toBe(200);
      expect(keyword.body).toMatchObject({ query: 'palette', retrieval_mode: 'keyword' });
      expect(keyword.body.records[0]).toEqual({ chunk_id: expect.any(String), document_id: expect.any(String), document_name: 'colours.html', page: null, content: expect.stringContaining('palette'), score: expect.any(Number), position: 0 });

      // No stemmed word in common with the router page (keyword finds any shared term), but many trigrams.
      const paraphrase = 'administering routing';
      expect((await retrieve({ query: paraphrase, retrieval_mode: 'keyword' })).body.records).toEqual([]);
      const semantic = await retrieve({ query: paraphrase, retrieval_mode: 'semantic', top_k: 3 });
      expect(semantic.body.records[0].document_name).toBe('router.md');
      expect(semantic.body.records[0].score).toBeGreaterThan(semantic.body.records[1].score);

      const hybrid = await retrieve({ query: 'refund policy' });
      expect(hybrid.body.retrieval_mode).toBe('hybrid');
      expect(hybrid.body.records[0].document_name).toBe('refunds.txt');
      const keywordTop = (await retrieve({ query: 'refund policy', retrieval_mode: 'keyword' })).body.records[0];
      const semanticTop = (await retrieve({ query: 'refund policy', retrieval_mode: 'semantic' })).body.records[0];
      expect([keywordTop.chunk_id, semanticTop.chunk_id]).toEqual([hybrid.body.records[0].chunk_id, hybrid.body.records[0].chunk_id]);
    });

    it('score_threshold filters; top_k bounds; another user gets 404; a kb key cannot add documents', async () => {
      const retrieve = (body: Record<string, unknown>, token = key) => api('POST', `/api/knowledge-bases/${kbId}/retrieve`, token, body);
      const all = await retrieve({ query: 'router reset', retrieval_mode: 'semantic', top_k: 3 });
      expect(all.body.records).toHaveLength(3);
      const threshold = (all.body.records[0].score + all.body.records[1].score) / 2;
      const filtered = await retrieve({ query: 'router reset', retrieval_mode: 'semantic', top_k: 3, score_threshold: threshold });
      expect(filtered.body.records.map((r: { chunk_id: string }) => r.chunk_id)).toEqual([all.body.records[0].chunk_id]);
      expect((await retrieve({ query: 'x', top_k: 51 })).status).toBe(422);
      expect((await retrieve({ query: 'router' }, otherKey)).status).toBe(404);
      expect((await api('POST', `/api/knowledge-bases/${kbId}/documents`, kbOnlyKey, { name: 'a.txt', content: 'a' })).status).toBe(403);
    });

    it('refuses other file types (415) and oversized uploads (413); undecodable bytes fail the document, not the knowledge base', async () => {
      const image = await upload(kbId, 'scan.png', '\x89PNG', 'image/png');
      expect(image.status).toBe(415);
      expect(image.body).toEqual({ error: 'unsupported_media_type', message: expect.stringContaining('.txt, .md, .html, .pdf or .docx') });
      const big = await upload(kbId, 'big.txt', 'x'.repeat(5000));
      expect(big.status).toBe(413);
      expect(big.body.error).toBe('payload_too_large');
      const broken = await upload(kbId, 'broken.txt', Buffer.from([0x48, 0x69, 0xff, 0xfe, 0xc3]));
      expect(broken.status).toBe(202);
      const docs = await settled(kbId);
      expect(docs.find((d) => d.id === broken.body.id)).toMatchObject({ status: 'failed', error: 'The document is not valid UTF-8 text', chunk_count: 0 });
      const kb = (await api('GET', `/api/knowledge-bases/${kbId}`, key)).body;
      expect(kb).toMatchObject({ status: 'ready', document_count: 4 });
      expect((await api('POST', `/api/knowledge-bases/${kbId}/retrieve`, key, { query: 'refund' })).body.records.length).toBeGreaterThan(0);
      expect((await api('DELETE', `/api/knowledge-bases/${kbId}/documents/${broken.body.id}`, key)).status).toBe(204);
      expect((await api('GET', `/api/knowledge-bases/${kbId}`, key)).body.document_count).toBe(3);
    });

    it('an agent bound to the knowledge base calls knowledge_base_retrieve and quotes the chunk', async () => {
      const foreign = await api('POST', '/api/agents', otherKey, { name: 'Thief', knowledge_base_ids: [kbId] });
      expect(foreign.status).toBe(422);
      expect(foreign.body.detail[0].loc).toEqual(['body', 'knowledge_base_ids', 0]);
      const agent = await api('POST', '/api/agents', key, { name: 'Support bot', knowledge_base_ids: [kbId] });
      expect(agent.status).toBe(201);
      const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is the refund policy?', agent_id: agent.body.id } });
      const [call] = ofType(res.events, 'tool_call');
      expect(call!.data).toMatchObject({ name: 'knowledge_base_retrieve', arguments: { query: 'What is the refund policy?' } });
      const [result] = ofType(res.events, 'tool_result');
      const records = result!.data.output as { document_name: string; content: string }[];
      expect(records[0]).toMatchObject({ document_name: 'refunds.txt', content: REFUNDS });
      const answer = ofType(res.events, 'answer')[0]!.data.content;
      expect(answer).toContain(REFUNDS);
      expect(answer).toContain('refunds.txt');
    });
  });
});

describe('pgvector: an HNSW index per large knowledge base (PGlite, a Postgres with pgvector)', () => {
  it('web and worker say they use pgvector; past the threshold the worker builds the index; queries use it and find what the exact scan finds', async () => {
    const pglite = await startPglite();
    const migrator = createKnex(pglite.url, { poolMax: 1 });
    let vectorStack: Stack | undefined;
    try {
      await migrateLatest(migrator);
      vectorStack = await startStack({ env: { DATABASE_URL: pglite.url, KB_ANN_MIN_CHUNKS: '40', DATABASE_POOL_MAX: '2' } });
      await vectorStack.webs[0]!.waitFor(/"vector_search":"pgvector"/);
      await vectorStack.workers[0]!.waitFor(/"vector_search":"pgvector"/);
      const { key: vectorKey } = await vectorStack.user();
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${vectorStack!.url}${path}`, { method, headers: { authorization: `Bearer ${vectorKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return res.json();
      };
      const topics = ['volcano eruption lava', 'quantum entanglement photon', 'sourdough bread starter', 'marathon training plan', 'medieval castle siege'];
      const paragraphs = Array.from({ length: 60 }, (_, i) => `Note ${i} about ${topics[i % topics.length]} number ${i * 7919}.`);
      const kb = await call('POST', '/api/knowledge-bases', { name: 'big', chunk_strategy: 'paragraph', chunk_size: 100, chunk_overlap: 0, retrieval_mode: 'semantic' });
      await call('POST', `/api/knowledge-bases/${kb.id}/documents`, { name: 'notes.txt', content: paragraphs.join('\n\n') });
      await vectorStack.workers[0]!.waitFor(/semantic index ready/);
      const index = hnswIndexName(kb.id, 1);
      const { rows } = await migrator.raw('select indexdef from pg_indexes where indexname = ?', [index]);
      expect(rows[0].indexdef).toMatch(/USING hnsw .*vector_cosine_ops/);
      // 60 rows: the planner would rather scan them; forbidding the scan shows the index serves the query.
      const plan = await migrator.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        return trx.raw(
          `explain select chunk_id from kb_vectors where knowledge_base_id = ? and generation = 1 order by embedding::vector(96) <=> ?::vector(96) limit 3`,
          [kb.id, `[${Array(96).fill(0.1).join(',')}]`],
        );
      });
      expect(JSON.stringify(plan.rows)).toContain(index);
      const retriever = new Retriever(migrator, new VectorStore(migrator, { hnswMinVectors: 40, efSearch: 100, buildMemoryMb: 512 }), new KnowledgeModels(loadConfig({}).model.gateway, 64));
      const row = await migrator('knowledge_bases').where({ id: kb.id }).first();
      for (const query of ['sourdough bread starter', 'Note 17 about quantum entanglement photon']) {
        const ann = await call('POST', `/api/knowledge-bases/${kb.id}/retrieve`, { query, top_k: 3 });
        const exact = await retriever.search([row], { query, topK: 3, mode: 'semantic', exact: true });
        expect(ann.records.map((r: { chunk_id: string }) => r.chunk_id)).toEqual(exact.records.map((r) => r.chunk_id));
      }
      // Deleting the knowledge base drops its index.
      await fetch(`${vectorStack.url}/api/knowledge-bases/${kb.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${vectorKey}` } });
      expect((await migrator.raw('select 1 from pg_indexes where indexname = ?', [index])).rows).toHaveLength(0);
    } finally {
      await vectorStack?.stop();
      await migrator.destroy();
      await pglite.close();
    }
  });
});
