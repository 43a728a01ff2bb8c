import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { TestGateway } from './support/gateway.js';
import { ofType, stream } from './support/sse.js';
import { docxWithParagraphs, docxZipBomb, encryptedPdf, notAPdf, pdfClaimingPages, pdfWithPages, pdfWithoutText, truncatedPdf } from './support/documents.js';

/**
 * DESIGN §14 end to end: gateway embedding models (the test gateway's vectors put paraphrases
 * close), PDF and DOCX documents with pages, hostile files, reranking, citations, doc_mode and
 * re-embedding, on built web and worker processes (this Postgres has no pgvector: the exact path).
 */
let gateway: TestGateway;
let stack: Stack;
let key: string;
let otherKey: string;

const EMBEDDING = 'text-embedding-3-small';
const REFUNDS = 'Our refund policy: purchases can be returned within 30 days and refunds are issued to the original card.';
const PASSWORD = 'To reset your password, click Forgot password on the sign in page and follow the email link.';
const SHIPPING = 'Parcels ship within two business days; delivery takes three to five days.';

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: { GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '1', KB_DOCUMENT_MAX_BYTES: String(4 * 1024 * 1024), KB_DOCUMENT_MAX_PAGES: '500' } });
  ({ key } = await stack.user());
  ({ key: otherKey } = await stack.user());
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

const api = (method: string, path: string, body?: unknown, token = key) => stack.api(token, method, path, body);

const upload = async (kbId: string, name: string, content: Buffer, type = 'application/octet-stream') => {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), name);
  const res = await fetch(`${stack.url}/api/knowledge-bases/${kbId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json() };
};

type Doc = { id: string; name: string; status: string; error: string | null; chunk_count: number };

/** Polls until no document of the knowledge base is processing (ingestion runs on the worker). */
async function settled(kbId: string): Promise<Doc[]> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const docs = await api('GET', `/api/knowledge-bases/${kbId}/documents?size=100`);
    if (docs.body.items.every((d: Doc) => d.status !== 'processing')) return docs.body.items;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('documents still processing');
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function knowledgeBase(fields: Record<string, unknown>, documents: Record<string, string>): Promise<string> {
  const created = await api('POST', '/api/knowledge-bases', { name: 'kb', chunk_size: 300, chunk_overlap: 0, ...fields });
  expect(created.status).toBe(201);
  for (const [name, content] of Object.entries(documents)) expect((await api('POST', `/api/knowledge-bases/${created.body.id}/documents`, { name, content })).status).toBe(202);
  await settled(created.body.id);
  return created.body.id;
}

const retrieve = (kbId: string, body: Record<string, unknown>) => api('POST', `/api/knowledge-bases/${kbId}/retrieve`, body);

describe('embedding models', () => {
  it('a gateway embedding model finds by meaning what keyword search and the local embedder miss', async () => {
    const gatewayKb = await knowledgeBase({ embedding_model: EMBEDDING, retrieval_mode: 'semantic' }, { 'refunds.txt': REFUNDS, 'password.txt': PASSWORD, 'shipping.txt': SHIPPING });
    const localKb = await knowledgeBase({ retrieval_mode: 'semantic' }, { 'refunds.txt': REFUNDS, 'password.txt': PASSWORD, 'shipping.txt': SHIPPING });
    const record = (await api('GET', `/api/knowledge-bases/${gatewayKb}`)).body;
    expect(record).toMatchObject({ embedding_model: EMBEDDING, embedding_dimensions: 384, rerank_model: null, indexing: null, status: 'ready', total_chunks: 3 });
    const question = 'how do I get my money back';
    expect((await retrieve(gatewayKb, { query: question, retrieval_mode: 'keyword' })).body.records).toEqual([]);
    const semantic = await retrieve(gatewayKb, { query: question, top_k: 3 });
    expect(semantic.status).toBe(200);
    expect(semantic.body.records[0]).toMatchObject({ document_name: 'refunds.txt', page: null, content: REFUNDS });
    const local = await retrieve(localKb, { query: question, top_k: 3 });
    expect(local.body.records[0].document_name).not.toBe('refunds.txt');
    const embedded = gateway.requests.filter((r) => r.path === '/v1/embeddings');
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded.every((r) => r.headers.authorization === 'Bearer gw-test-key')).toBe(true);
  });

  it('an unknown embedding model → 422 naming it; a bad dimension → 422; nothing is created', async () => {
    const before = (await api('GET', '/api/knowledge-bases?size=100')).body.total;
    const unknown = await api('POST', '/api/knowledge-bases', { name: 'x', embedding_model: 'no-such-embedder' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'embedding_model'], type: 'model_not_found' });
    expect((await api('POST', '/api/knowledge-bases', { name: 'x', embedding_model: 'local', embedding_dimensions: 384 })).status).toBe(422);
    expect((await api('POST', '/api/knowledge-bases', { name: 'x', embedding_model: 'bad model; drop' })).status).toBe(422);
    expect((await api('POST', '/api/knowledge-bases', { name: 'x', embedding_dimensions: 0 })).status).toBe(422);
    expect((await api('GET', '/api/knowledge-bases?size=100')).body.total).toBe(before);
  });

  it('a gateway that answers 429 with Retry-After and then 503 still ingests the document', async () => {
    const kbId = await knowledgeBase({ embedding_model: 'test-embed-64' }, {});
    gateway.script('test-embed-64', { status: 429, headers: { 'retry-after': '0' }, body: { error: { code: 'rate_limited', message: 'slow down' } } }, { status: 503, body: { error: { message: 'busy' } } });
    expect((await api('POST', `/api/knowledge-bases/${kbId}/documents`, { name: 'refunds.txt', content: REFUNDS })).status).toBe(202);
    const [doc] = await settled(kbId);
    expect(doc).toMatchObject({ status: 'ready', chunk_count: 1 });
    expect((await retrieve(kbId, { query: 'refund', retrieval_mode: 'semantic' })).body.records[0].content).toBe(REFUNDS);
  });
});

describe('documents', () => {
  let kbId: string;
  beforeAll(async () => {
    kbId = await knowledgeBase({ embedding_model: EMBEDDING }, {});
  });

  it('a PDF is searchable page by page; its chunks cite their page numbers', async () => {
    const pdf = await pdfWithPages(['Welcome to the handbook.', PASSWORD, REFUNDS]);
    expect((await upload(kbId, 'handbook.pdf', pdf, 'application/pdf')).status).toBe(202);
    const docs = await settled(kbId);
    expect(docs.find((d) => d.name === 'handbook.pdf')).toMatchObject({ status: 'ready', error: null, chunk_count: 3 });
    const found = await retrieve(kbId, { query: 'get my money back', top_k: 1 });
    expect(found.body.records[0]).toMatchObject({ document_name: 'handbook.pdf', page: 3 });
    expect(found.body.records[0].content).toContain('refund');
  });

  it('a DOCX is searchable', async () => {
    const docx = docxWithParagraphs(['Shipping guide', SHIPPING]);
    expect((await upload(kbId, 'guide.docx', docx)).status).toBe(202);
    const docs = await settled(kbId);
    expect(docs.find((d) => d.name === 'guide.docx')).toMatchObject({ status: 'ready', error: null });
    const found = await retrieve(kbId, { query: 'when will my delivery arrive', retrieval_mode: 'semantic', top_k: 1 });
    expect(found.body.records[0]).toMatchObject({ document_name: 'guide.docx', page: null });
  });

  it('hostile files each fail with a clear error and leave the worker healthy', async () => {
    const hostile: [string, Buffer, RegExp][] = [
      ['truncated.pdf', await truncatedPdf(), /damaged|truncated/i],
      ['locked.pdf', encryptedPdf(), /encrypted|password/i],
      ['huge.pdf', pdfClaimingPages(100_000), /100000 pages|100,000 pages/],
      ['image.pdf', notAPdf(), /not a PDF/i],
      ['scan.pdf', await pdfWithoutText(), /no extractable text/i],
      ['bomb.docx', docxZipBomb(), /zip bomb|expands|too large/i],
      ['random.docx', Buffer.from('not a zip at all'), /not a valid Word document|not a DOCX|zip/i],
    ];
    for (const [name, bytes] of hostile) expect((await upload(kbId, name, bytes)).status).toBe(202);
    const docs = await settled(kbId);
    for (const [name, , reason] of hostile) {
      const doc = docs.find((d) => d.name === name);
      expect(doc, name).toMatchObject({ status: 'failed', chunk_count: 0 });
      expect(doc!.error, name).toMatch(reason);
    }
    // Still healthy: the same worker ingests a good document afterwards.
    expect((await upload(kbId, 'after.pdf', await pdfWithPages(['A healthy worker reads this page.']), 'application/pdf')).status).toBe(202);
    expect((await settled(kbId)).find((d) => d.name === 'after.pdf')).toMatchObject({ status: 'ready' });
    expect(stack.workers[0]!.child.exitCode).toBeNull();
    const kb = (await api('GET', `/api/knowledge-bases/${kbId}`)).body;
    expect(kb.status).toBe('ready');
  });
});

describe('reranking', () => {
  it('a rerank model orders the records (reranked: true); when it fails the fused order stands (reranked: false)', async () => {
    const kbId = await knowledgeBase({ embedding_model: EMBEDDING, rerank_model: 'test-rerank' }, { 'refunds.txt': REFUNDS, 'password.txt': PASSWORD, 'shipping.txt': SHIPPING });
    const reranked = await retrieve(kbId, { query: 'money back for my purchase', top_k: 2 });
    expect(reranked.body.reranked).toBe(true);
    expect(reranked.body.records).toHaveLength(2);
    expect(reranked.body.records[0].document_name).toBe('refunds.txt');
    const reranks = gateway.requests.filter((r) => r.path === '/v1/rerank');
    expect(reranks.at(-1)!.body).toMatchObject({ model: 'test-rerank', query: 'money back for my purchase', top_n: 2 });
    gateway.script('test-rerank', { status: 500, body: { error: { message: 'down' } } }, { status: 500, body: { error: { message: 'down' } } });
    const fallback = await retrieve(kbId, { query: 'money back for my purchase', top_k: 2 });
    expect(fallback.status).toBe(200);
    expect(fallback.body.reranked).toBe(false);
    expect(fallback.body.records[0].document_name).toBe('refunds.txt');
    expect((await retrieve(kbId, { query: 'refund', retrieval_mode: 'keyword' })).body.reranked).toBe(true);
    const none = await knowledgeBase({}, { 'refunds.txt': REFUNDS });
    expect((await retrieve(none, { query: 'refund' })).body.reranked).toBeNull();
  });
});

describe('citations and doc_mode', () => {
  let agentId: string;
  let kbId: string;
  beforeAll(async () => {
    kbId = await knowledgeBase({}, { 'refunds.txt': REFUNDS, 'shipping.txt': SHIPPING });
    agentId = (await api('POST', '/api/agents', { name: 'Support', knowledge_base_ids: [kbId] })).body.id;
  });

  const run = (q: string, extra: Record<string, unknown> = {}) => stream(`${stack.url}/api/react`, { token: key, body: { q, agent_id: agentId, ...extra } });

  it('the answer names its source: citations on the answer event and on the stored message', async () => {
    const res = await run('What is the refund policy?');
    const answer = ofType(res.events, 'answer')[0]!.data;
    expect(answer.content).toContain('refunds.txt');
    expect(answer.citations).toEqual([{ chunk_id: expect.any(String), document_id: expect.any(String), document_name: 'refunds.txt', page: null }]);
    const conversationId = res.headers.get('x-conversation-id')!;
    const conversation = await api('GET', `/api/conversations/${conversationId}`);
    const stored = conversation.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(stored.citations).toEqual(answer.citations);
    expect(conversation.body.messages.find((m: { role: string }) => m.role === 'user').citations).toEqual([]);
  });

  it('auto (and null) leaves the search to the model; off gives the run no knowledge tool', async () => {
    for (const mode of ['auto', null]) {
      const res = await run('What is the refund policy?', { doc_mode: mode });
      expect(ofType(res.events, 'tool_call').map((e) => e.data.name)).toEqual(['knowledge_base_retrieve']);
    }
    const off = await run('What is the refund policy?', { doc_mode: 'off' });
    expect(ofType(off.events, 'tool_call')).toEqual([]);
    const answer = ofType(off.events, 'answer')[0]!.data;
    expect(answer.content).not.toContain(REFUNDS);
    expect(answer.citations).toEqual([]);
  });

  it('grounded retrieves before the model answers, and answers from the passages with citations', async () => {
    const res = await run('refund policy', { doc_mode: 'grounded' });
    const types = res.events.map((e) => e.type);
    expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('token'));
    expect(ofType(res.events, 'tool_call')[0]!.data).toMatchObject({ name: 'knowledge_base_retrieve', arguments: { query: 'refund policy' } });
    const answer = ofType(res.events, 'answer')[0]!.data;
    expect(answer.content).toContain(REFUNDS);
    expect(answer.citations!.map((c) => c.document_name)).toEqual(['refunds.txt']);
  });

  it('grounded with nothing found says so and never invents', async () => {
    const res = await run('xylophone quartet zeppelin', { doc_mode: 'grounded' });
    const answer = ofType(res.events, 'answer')[0]!.data;
    expect(answer.content).toMatch(/found nothing in the knowledge bases/);
    expect(answer.citations).toEqual([]);
    expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
  });

  it('another doc_mode → 422 on every run endpoint; nothing starts', async () => {
    for (const path of ['/api/react', '/api/dag']) {
      const res = await api('POST', path, { q: 'hi', doc_mode: 'strict' });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'doc_mode']);
    }
    expect((await api('POST', '/api/runs', { mode: 'react', q: 'hi', doc_mode: 42 })).status).toBe(422);
  });

  it('a DAG run grounds each task and cites what its nodes used', async () => {
    const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q: 'refund policy and delivery days', agent_id: agentId, doc_mode: 'grounded' } });
    const answer = ofType(res.events, 'answer')[0]!.data;
    expect(new Set(answer.citations!.map((c) => c.document_name))).toEqual(new Set(['refunds.txt', 'shipping.txt']));
  });
});

describe('re-embedding', () => {
  it('changing the embedding model re-embeds in a worker while every query keeps answering, then switches', async () => {
    const documents = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`note-${i}.txt`, `Note ${i}. ${[REFUNDS, PASSWORD, SHIPPING][i % 3]}`]));
    const kbId = await knowledgeBase({ retrieval_mode: 'semantic', chunk_size: 200 }, documents);
    const patched = await api('PATCH', `/api/knowledge-bases/${kbId}`, { embedding_model: EMBEDDING });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ embedding_model: 'local', status: 'indexing', indexing: { model: EMBEDDING, done: expect.any(Number), total: 30 } });
    let queries = 0;
    const final = await until(
      async () => {
        const res = await retrieve(kbId, { query: 'how do I get my money back', top_k: 3 });
        expect(res.status).toBe(200);
        expect(res.body.records).toHaveLength(3);
        queries += 1;
        return (await api('GET', `/api/knowledge-bases/${kbId}`)).body;
      },
      (kb) => kb.indexing === null,
      're-embedding',
    );
    expect(queries).toBeGreaterThan(0);
    expect(final).toMatchObject({ embedding_model: EMBEDDING, embedding_dimensions: 384, status: 'ready', error: null, total_chunks: 30 });
    const generations = await stack.knex('kb_vectors').where({ knowledge_base_id: kbId }).distinct('generation');
    expect(generations).toHaveLength(1);
    expect((await retrieve(kbId, { query: 'how do I get my money back', top_k: 1 })).body.records[0].content).toContain('refund');
  });

  it('a model that refuses the chunks leaves the previous vectors answering and says why', async () => {
    const kbId = await knowledgeBase({ retrieval_mode: 'semantic' }, { 'refunds.txt': REFUNDS, 'password.txt': PASSWORD });
    // The dimension probe succeeds; the re-embedding's first batch is refused.
    gateway.script('retired-embedder', { status: 200, body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: Array(64).fill(0.125) }], model: 'retired-embedder' } });
    gateway.script('retired-embedder', { status: 404, body: { error: { code: 'model_not_found', message: 'The model `retired-embedder` was removed' } } });
    const patched = await api('PATCH', `/api/knowledge-bases/${kbId}`, { embedding_model: 'retired-embedder' });
    expect(patched.status).toBe(200);
    const kb = await until(() => api('GET', `/api/knowledge-bases/${kbId}`).then((r) => r.body), (body) => body.indexing === null, 'the re-embedding to stop');
    expect(kb).toMatchObject({ embedding_model: 'local', embedding_dimensions: 96, status: 'ready', error: expect.stringContaining('retired-embedder') });
    expect((await retrieve(kbId, { query: 'refund policy', top_k: 1 })).body.records[0].content).toBe(REFUNDS);
    expect(await stack.knex('kb_vectors').where({ knowledge_base_id: kbId }).whereNot({ generation: 1 })).toHaveLength(0);
  });

  it('choosing the current model again cancels a pending change; an empty knowledge base switches at once', async () => {
    const empty = await api('POST', '/api/knowledge-bases', { name: 'empty' });
    const switched = await api('PATCH', `/api/knowledge-bases/${empty.body.id}`, { embedding_model: EMBEDDING, embedding_dimensions: 128 });
    expect(switched.body).toMatchObject({ embedding_model: EMBEDDING, embedding_dimensions: 128, indexing: null, status: 'ready' });
    expect((await api('PATCH', `/api/knowledge-bases/${empty.body.id}`, { embedding_model: 'no-such-embedder' })).status).toBe(422);
    expect((await api('PATCH', `/api/knowledge-bases/${empty.body.id}`, { embedding_model: 'local' }, otherKey)).status).toBe(404);
  });
});
