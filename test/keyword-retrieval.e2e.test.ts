import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { eventually } from './support/eventually.js';
import { ofType, stream } from './support/sse.js';

/**
 * Issue 34 on built web and worker processes: keyword retrieval ranks by any term (grounded runs
 * answer "What is the refund period?" from the refund passage, with a citation), hostile questions
 * never 500, and one document can be read with its ingestion status.
 */
let stack: Stack;
let key: string;
let otherKey: string;

const REFUND = 'Customers may return the Zorbex 3000 within 45 days for a full refund.';
const PAGES = {
  'refunds.txt': REFUND,
  'warranty.txt': 'The Zorbex 3000 carries a two-year limited warranty covering parts and labour. Warranty claims need the receipt.',
  'shipping.txt': 'Orders ship within two business days from our warehouse; delivery takes a long weekend at most.',
  'colours.txt': 'The Zorbex 3000 comes in graphite, silver and ocean blue.',
};

beforeAll(async () => {
  stack = await startStack();
  ({ key } = await stack.user());
  ({ key: otherKey } = await stack.user());
});
afterAll(() => stack?.stop());

const api = (method: string, path: string, body?: unknown, token = key) => stack.api(token, method, path, body);

type Doc = { id: string; name: string; status: string; error: string | null; chunk_count: number };

const documents = async (kbId: string): Promise<Doc[]> => (await api('GET', `/api/knowledge-bases/${kbId}/documents?size=100`)).body.items;

/** Waits until the worker has ingested every document of the knowledge base. */
const settled = (kbId: string) => eventually(async () => {
  const docs = await documents(kbId);
  return docs.every((d) => d.status !== 'processing') && docs;
}, 'documents ingested');

async function knowledgeBase(fields: Record<string, unknown>, pages: Record<string, string>): Promise<string> {
  const created = await api('POST', '/api/knowledge-bases', { name: 'Zorbex help', chunk_size: 300, chunk_overlap: 0, ...fields });
  expect(created.status).toBe(201);
  for (const [name, content] of Object.entries(pages)) expect((await api('POST', `/api/knowledge-bases/${created.body.id}/documents`, { name, content })).status).toBe(202);
  await settled(created.body.id);
  return created.body.id;
}

describe('keyword retrieval ranks by any term', () => {
  let kbId: string;
  let agentId: string;
  beforeAll(async () => {
    kbId = await knowledgeBase({ retrieval_mode: 'keyword' }, PAGES);
    agentId = (await api('POST', '/api/agents', { name: 'Zorbex support', knowledge_base_ids: [kbId] })).body.id;
  });

  const retrieve = (body: Record<string, unknown>, token = key) => api('POST', `/api/knowledge-bases/${kbId}/retrieve`, body, token);
  const grounded = (q: string) => stream(`${stack.url}/api/react`, { token: key, body: { q, agent_id: agentId, doc_mode: 'grounded' } });

  it('"What is the refund period?" answers in grounded mode from the refund passage, with its citation', async () => {
    const res = await grounded('What is the refund period?');
    const answer = ofType(res.events, 'answer')[0]!.data;
    expect(answer.content).toContain(REFUND);
    expect(answer.content).not.toMatch(/found nothing/);
    expect(answer.citations).toEqual([{ chunk_id: expect.any(String), document_id: expect.any(String), document_name: 'refunds.txt', page: null }]);
  });

  it('a grounded question sharing no word with the pages, or only stop words, still finds nothing', async () => {
    for (const q of ['What is the capital of France?', 'What is it, and how?']) {
      const answer = ofType((await grounded(q)).events, 'answer')[0]!.data;
      expect(answer.content).toMatch(/found nothing in the knowledge bases/);
      expect(answer.citations).toEqual([]);
    }
  });

  it('"how long is the warranty?" finds the warranty page among others, first', async () => {
    const res = await retrieve({ query: 'how long is the warranty?', retrieval_mode: 'keyword', top_k: 5 });
    expect(res.status).toBe(200);
    const names = res.body.records.map((r: { document_name: string }) => r.document_name);
    expect(names).toContain('warranty.txt');
    expect(names).toContain('shipping.txt');
    expect(names[0]).toBe('warranty.txt');
  });

  it('hybrid keeps fusing: the passage both halves agree on leads', async () => {
    const res = await retrieve({ query: 'What is the refund period?', retrieval_mode: 'hybrid', top_k: 3 });
    expect(res.status).toBe(200);
    expect(res.body.records[0].document_name).toBe('refunds.txt');
  });

  it('hostile questions are searched as text and never answer 500', async () => {
    const hostile = [
      `refund' OR 1=1; DROP TABLE kb_chunks; --`,
      `"refund" & | ! <-> :* (warranty`,
      'refund:* & !warranty',
      `\\' \\\\ '' ""`,
      'rëfünd 日本語 🚀 refund',
      'refund '.repeat(280),
      '!!!',
    ];
    for (const query of hostile) {
      for (const mode of ['keyword', 'hybrid']) {
        const res = await retrieve({ query, retrieval_mode: mode });
        expect(res.status, `${mode}: ${query.slice(0, 40)}`).toBe(200);
      }
    }
    const injected = await retrieve({ query: hostile[0], retrieval_mode: 'keyword' });
    expect(injected.body.records[0].document_name).toBe('refunds.txt');
    expect((await retrieve({ query: 'x'.repeat(2001) })).status).toBe(422);
    expect((await retrieve({ query: 'refund\u0000' })).status).not.toBe(500);
  });
});

describe('GET /api/knowledge-bases/{id}/documents/{document_id}', () => {
  it("reads one document as the list shows it, with its ingestion status and error", async () => {
    const kbId = await knowledgeBase({}, { 'refunds.txt': REFUND });
    const broken = await fetch(`${stack.url}/api/knowledge-bases/${kbId}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: (() => {
        const form = new FormData();
        form.append('file', new Blob([Buffer.from([0x48, 0x69, 0xff, 0xfe])], { type: 'text/plain' }), 'broken.txt');
        return form;
      })(),
    });
    expect(broken.status).toBe(202);
    const brokenId = ((await broken.json()) as { id: string }).id;
    const listed = await settled(kbId);
    for (const item of listed) {
      const one = await api('GET', `/api/knowledge-bases/${kbId}/documents/${item.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(item);
    }
    expect((await api('GET', `/api/knowledge-bases/${kbId}/documents/${brokenId}`)).body).toMatchObject({ name: 'broken.txt', status: 'failed', error: 'The document is not valid UTF-8 text', chunk_count: 0 });
    expect(listed.find((d) => d.name === 'refunds.txt')).toMatchObject({ status: 'ready', error: null, chunk_count: 1 });
  });

  it("another user's knowledge base or document, another knowledge base's document, or an unknown one → 404; a malformed id → 422", async () => {
    const kbId = await knowledgeBase({}, { 'refunds.txt': REFUND });
    const otherKbId = await knowledgeBase({}, { 'colours.txt': PAGES['colours.txt'] });
    const [doc] = await documents(kbId);
    const [otherDoc] = await documents(otherKbId);
    expect((await api('GET', `/api/knowledge-bases/${kbId}/documents/${doc!.id}`, undefined, otherKey)).status).toBe(404);
    expect((await api('GET', `/api/knowledge-bases/${kbId}/documents/${otherDoc!.id}`)).status).toBe(404);
    expect((await api('GET', `/api/knowledge-bases/${otherKbId}/documents/${otherDoc!.id}`)).status).toBe(200);
    expect((await api('GET', `/api/knowledge-bases/${kbId}/documents/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    const malformed = await api('GET', `/api/knowledge-bases/${kbId}/documents/not-a-uuid`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['path', 'documentId']);
    expect((await api('GET', `/api/knowledge-bases/not-a-uuid/documents/${doc!.id}`)).status).toBe(422);
    expect((await api('DELETE', `/api/knowledge-bases/${kbId}/documents/not-a-uuid`)).status).toBe(422);
  });
});
